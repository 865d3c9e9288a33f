// `aep claude-code install` / `uninstall` through the real CLI: merges without disturbing
// existing hooks, idempotent, and uninstall restores the file byte-identically.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep } from '../../../test/support/cli.js';
import { hookSnippet, install, isOurHandler, uninstall, BLOCKING_HOOKS, LIFECYCLE_HOOKS } from '@aep/adapter-claude-code';

// Existing hooks and odd formatting: tabs, a key order of its own, unicode, no final newline.
const ODD = '{\n\t"model":   "opus",\n\t"hooks": {\n\t\t"PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "~/bin/guard.sh", "timeout": 5 } ] } ],\n\t\t"Stop": [{"hooks":[{"type":"command","command":"say done"}]}]\n\t},\n\t"env": { "GREETING": "héllo ✓" }\n}';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'aep-cc-install-'));
}

test('install then uninstall leaves an existing settings file byte-identical (CLI)', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'settings.json');
    writeFileSync(file, ODD);
    const i1 = await runAep(['claude-code', 'install', '--settings', file]);
    assert.equal(i1.code, 0, i1.stderr);
    assert.match(i1.stdout, /installed AEP hooks/);
    const installed = readFileSync(file, 'utf8');
    const parsed = JSON.parse(installed) as { model: string; env: unknown; hooks: Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]> };
    assert.equal(parsed.model, 'opus');
    assert.deepEqual(parsed.env, { GREETING: 'héllo ✓' });
    // Existing hooks are untouched and come first; ours are appended groups.
    assert.deepEqual(parsed.hooks['PreToolUse']![0], { matcher: 'Bash', hooks: [{ type: 'command', command: '~/bin/guard.sh', timeout: 5 }] });
    assert.deepEqual(parsed.hooks['PreToolUse']![1], { matcher: '*', hooks: [{ type: 'http', url: 'http://127.0.0.1:8377/hooks/PreToolUse', timeout: 330 }] });
    assert.deepEqual(parsed.hooks['Stop']![0], { hooks: [{ type: 'command', command: 'say done' }] });
    for (const ev of [...BLOCKING_HOOKS, ...LIFECYCLE_HOOKS]) assert.ok(parsed.hooks[ev]!.some((g) => g.hooks.some(isOurHandler)), ev);
    assert.ok(installed.includes('\n\t"model"'), 'keeps the tab indentation');
    // Idempotent.
    const i2 = await runAep(['claude-code', 'install', '--settings', file]);
    assert.equal(i2.code, 0);
    assert.match(i2.stdout, /already installed/);
    assert.equal(readFileSync(file, 'utf8'), installed);
    const u = await runAep(['claude-code', 'uninstall', '--settings', file]);
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /restored/);
    assert.equal(readFileSync(file, 'utf8'), ODD, 'byte-identical');
    assert.equal(existsSync(`${file}.aep-backup.json`), false);
    const u2 = await runAep(['claude-code', 'uninstall', '--settings', file]);
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
    install({ settingsPath: file });
    const edited = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    edited['theme'] = 'dark';
    writeFileSync(file, JSON.stringify(edited, null, '\t'));
    assert.equal(uninstall({ settingsPath: file }).status, 'removed');
    const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(after, { ...(JSON.parse(ODD) as Record<string, unknown>), theme: 'dark' });
    const fresh = join(dir, 'sub', 'settings.local.json');
    assert.equal(install({ settingsPath: fresh }).status, 'installed');
    assert.equal(uninstall({ settingsPath: fresh }).status, 'restored');
    assert.equal(existsSync(fresh), false, 'a file we created is removed again');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('scopes, --print, command handlers and a broken settings file', async () => {
  const dir = tmp();
  try {
    const p = await runAep(['claude-code', 'install', '--print', '--url', 'http://127.0.0.1:9999', '--timeout', '120']);
    assert.equal(p.code, 0);
    const snippet = JSON.parse(p.stdout) as { hooks: Record<string, { hooks: { url: string; timeout: number }[] }[]> };
    assert.equal(snippet.hooks['PermissionRequest']![0]!.hooks[0]!.url, 'http://127.0.0.1:9999/hooks/PermissionRequest');
    assert.equal(snippet.hooks['PermissionRequest']![0]!.hooks[0]!.timeout, 120);
    assert.equal(snippet.hooks['SessionStart']![0]!.hooks[0]!.timeout, 10);
    const proj = await runAep(['claude-code', 'install', '--scope', 'project', '--project-dir', dir]);
    assert.equal(proj.code, 0, proj.stderr);
    assert.ok(existsSync(join(dir, '.claude', 'settings.json')));
    const local = await runAep(['claude-code', 'install', '--scope', 'local', '--project-dir', dir]);
    assert.equal(local.code, 0, local.stderr);
    assert.ok(existsSync(join(dir, '.claude', 'settings.local.json')));
    const un = await runAep(['claude-code', 'uninstall', '--scope', 'project', '--project-dir', dir]);
    assert.equal(un.code, 0, un.stderr);
    assert.equal(existsSync(join(dir, '.claude', 'settings.json')), false);
    const bad = await runAep(['claude-code', 'install', '--scope', 'galaxy']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /AEP_CLI_BAD_OPTION/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"hooks": [oops');
    const b = await runAep(['claude-code', 'install', '--settings', broken]);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /AEP_CC_SETTINGS_INVALID/);
    assert.equal(readFileSync(broken, 'utf8'), '{"hooks": [oops', 'left untouched');
    const cmd = hookSnippet({ handler: 'command', hookCommand: 'node /opt/aep/packages/adapter-claude-code/dist/hook.js' });
    const h = cmd.hooks['PreToolUse']![0]!['hooks'] as Record<string, unknown>[];
    assert.equal(h[0]!['type'], 'command');
    assert.ok(isOurHandler(h[0]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
