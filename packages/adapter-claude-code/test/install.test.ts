// `aep claude-code install` / `uninstall` through the real CLI: merges without disturbing
// existing hooks, idempotent, and uninstall restores the file byte-identically.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAep } from '../../../test/support/cli.js';
import { hookSnippet, install, isOurHandler, uninstall, BLOCKING_HOOKS, LIFECYCLE_HOOKS } from '@aep/adapter-claude-code';

// Existing hooks and odd formatting: tabs, a key order of its own, unicode, no final newline.
const ODD =
  '{\n\t"model":   "opus",\n\t"hooks": {\n\t\t"PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "~/bin/guard.sh", "timeout": 5 } ] } ],\n\t\t"Stop": [{"hooks":[{"type":"command","command":"say done"}]}]\n\t},\n\t"env": { "GREETING": "héllo ✓" }\n}';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'aep-cc-install-'));
}

/** The CLI with its XDG directories in `dir` (the secret and the socket never land in the real home). */
const envIn = (dir: string) => ({ env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), XDG_RUNTIME_DIR: join(dir, 'run') } });
const shim = fileURLToPath(new URL('../dist/hook.js', import.meta.url));

test('install then uninstall leaves an existing settings file byte-identical (CLI)', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'settings.json');
    writeFileSync(file, ODD);
    const i1 = await runAep(['claude-code', 'install', '--settings', file], undefined, envIn(dir));
    assert.equal(i1.code, 0, i1.stderr);
    assert.match(i1.stdout, /installed AEP hooks/);
    // The per-install secret: 0600 in a 0700 directory (issue 11 item 2).
    const secretFile = join(dir, 'config', 'aep', 'claude-code', 'hook-secret');
    assert.equal(statSync(secretFile).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'config', 'aep', 'claude-code')).mode & 0o777, 0o700);
    assert.match(readFileSync(secretFile, 'utf8'), /^[A-Za-z0-9_-]{43}\n$/);
    const installed = readFileSync(file, 'utf8');
    const parsed = JSON.parse(installed) as { model: string; env: unknown; hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]> };
    assert.equal(parsed.model, 'opus');
    assert.deepEqual(parsed.env, { GREETING: 'héllo ✓' });
    // Existing hooks are untouched and come first; ours are appended groups.
    assert.deepEqual(parsed.hooks['PreToolUse']![0], { matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/guard.sh', timeout: 5 }] });
    // Command hooks running the compiled shim over the daemon's private socket.
    const socket = join(dir, 'run', 'aep', 'claude-code.sock');
    assert.deepEqual(parsed.hooks['PreToolUse']![1], {
      matcher: '*',
      hooks: [{ type: 'command', command: `node ${shim} --socket ${socket} --secret-file ${secretFile} --timeout-ms 330000`, timeout: 330 }],
    });
    assert.deepEqual(parsed.hooks['Stop']![0], { hooks: [{ type: 'command', command: 'say done' }] });
    for (const ev of [...BLOCKING_HOOKS, ...LIFECYCLE_HOOKS])
      assert.ok(
        parsed.hooks[ev]!.some((g) => g.hooks.some(isOurHandler)),
        ev,
      );
    assert.ok(installed.includes('\n\t"model"'), 'keeps the tab indentation');
    // Idempotent.
    const secretBefore = readFileSync(secretFile, 'utf8');
    const i2 = await runAep(['claude-code', 'install', '--settings', file], undefined, envIn(dir));
    assert.equal(i2.code, 0);
    assert.match(i2.stdout, /already installed/);
    assert.equal(readFileSync(file, 'utf8'), installed);
    assert.equal(readFileSync(secretFile, 'utf8'), secretBefore, 'the secret is kept, not regenerated');
    const u = await runAep(['claude-code', 'uninstall', '--settings', file], undefined, envIn(dir));
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /restored/);
    assert.equal(readFileSync(file, 'utf8'), ODD, 'byte-identical');
    assert.equal(existsSync(`${file}.aep-backup.json`), false);
    const u2 = await runAep(['claude-code', 'uninstall', '--settings', file], undefined, envIn(dir));
    assert.equal(u2.code, 0);
    assert.equal(readFileSync(file, 'utf8'), ODD);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('uninstall removes only our entries when the user edited the file meanwhile; a file we created is removed', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'settings.json');
    writeFileSync(file, ODD);
    const secretPath = join(dir, 'cfg', 'hook-secret');
    install({ settingsPath: file, secretPath });
    const edited = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    edited['theme'] = 'dark';
    writeFileSync(file, JSON.stringify(edited, null, '\t'));
    assert.equal(uninstall({ settingsPath: file }).status, 'removed');
    const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(after, { ...(JSON.parse(ODD) as Record<string, unknown>), theme: 'dark' });
    const fresh = join(dir, 'sub', 'settings.local.json');
    assert.equal(install({ settingsPath: fresh, secretPath }).status, 'installed');
    assert.equal(uninstall({ settingsPath: fresh }).status, 'restored');
    assert.equal(existsSync(fresh), false, 'a file we created is removed again');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scopes, --print, command handlers and a broken settings file', async () => {
  const dir = tmp();
  try {
    const p = await runAep(
      ['claude-code', 'install', '--print', '--handler', 'http', '--url', 'http://127.0.0.1:9999', '--timeout', '120'],
      undefined,
      envIn(dir),
    );
    assert.equal(p.code, 0);
    const snippet = JSON.parse(p.stdout) as { hooks: Record<string, { hooks: Record<string, unknown>[] }[]> };
    // HTTP hooks present the secret from the environment (Claude Code headers + allowedEnvVars).
    assert.deepEqual(snippet.hooks['PermissionRequest']![0]!.hooks[0], {
      type: 'http',
      url: 'http://127.0.0.1:9999/hooks/PermissionRequest',
      timeout: 120,
      headers: { Authorization: 'Bearer $AEP_CC_HOOK_SECRET' },
      allowedEnvVars: ['AEP_CC_HOOK_SECRET'],
    });
    assert.equal(snippet.hooks['SessionStart']![0]!.hooks[0]!['timeout'], 10);
    assert.equal(existsSync(join(dir, 'config')), false, '--print writes nothing, not even the secret');
    const proj = await runAep(['claude-code', 'install', '--scope', 'project', '--project-dir', dir], undefined, envIn(dir));
    assert.equal(proj.code, 0, proj.stderr);
    assert.ok(existsSync(join(dir, '.claude', 'settings.json')));
    const local = await runAep(['claude-code', 'install', '--scope', 'local', '--project-dir', dir, '--handler', 'http'], undefined, envIn(dir));
    assert.equal(local.code, 0, local.stderr);
    assert.match(local.stdout, /export AEP_CC_HOOK_SECRET=/);
    assert.ok(existsSync(join(dir, '.claude', 'settings.local.json')));
    const un = await runAep(['claude-code', 'uninstall', '--scope', 'project', '--project-dir', dir], undefined, envIn(dir));
    assert.equal(un.code, 0, un.stderr);
    assert.equal(existsSync(join(dir, '.claude', 'settings.json')), false);
    const bad = await runAep(['claude-code', 'install', '--scope', 'galaxy'], undefined, envIn(dir));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /AEP_CLI_BAD_OPTION/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"hooks": [oops');
    const b = await runAep(['claude-code', 'install', '--settings', broken], undefined, envIn(dir));
    assert.equal(b.code, 2);
    assert.match(b.stderr, /AEP_CC_SETTINGS_INVALID/);
    assert.equal(readFileSync(broken, 'utf8'), '{"hooks": [oops', 'left untouched');
    const cmd = hookSnippet({
      handler: 'command',
      hookCommand: 'node /opt/aep/packages/adapter-claude-code/dist/hook.js',
      socketPath: '/run/user/1000/aep/claude-code.sock',
      secretPath: "/home/o'neil/.config/aep/claude-code/hook-secret",
    });
    const h = cmd.hooks['PreToolUse']![0]!['hooks'] as Record<string, unknown>[];
    assert.equal(h[0]!['type'], 'command');
    assert.equal(
      h[0]!['command'],
      "node /opt/aep/packages/adapter-claude-code/dist/hook.js --socket /run/user/1000/aep/claude-code.sock --secret-file '/home/o'\\''neil/.config/aep/claude-code/hook-secret' --timeout-ms 330000",
      'paths are shell-quoted',
    );
    assert.ok(isOurHandler(h[0]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
