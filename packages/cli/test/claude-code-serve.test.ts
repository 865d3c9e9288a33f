// `aep claude-code serve` takes its relay token like every other command (issue 14 item 2,
// docs/cli.md): `--token-file` (the 0600 file `aep up` saves), `--token-fd`, `AEP_TOKEN` or
// `--token`, one at a time; and the hints it and `install` print run as printed. Real relay and
// real daemon subprocesses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep, spawnAep, startRelayProcess } from '../../../test/support/cli.js';
import { channelDir, startDaemonProcess, stopProcess, waitConnected } from '../../adapter-claude-code/test/support/daemon.js';

const TOKEN = 'serve-token-file-0123456789';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
const dir = mkdtempSync(join(tmpdir(), 'aep-serve-'));
const tokenFile = join(dir, 'token');

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
});
after(async () => {
  await relay.stop();
});

test('serve --token-file: the daemon reaches the relay with the token from the file (never printed)', async () => {
  const d = await startDaemonProcess(['--relay', relay.url, '--token-file', tokenFile]);
  try {
    await waitConnected(d);
    assert.doesNotMatch(d.stdout(), /no token/);
    assert.ok(!d.stdout().includes(TOKEN) && !d.stderr().includes(TOKEN), 'the token is never printed');
  } finally {
    await stopProcess(d.child);
  }
});

test('serve --token-fd: the token from an inherited descriptor', async () => {
  const ch = channelDir();
  const child = spawnAep(
    ['claude-code', 'serve', '--port', '0', '--secret-file', ch.secretFile, '--socket', ch.socket, '--relay', relay.url, '--token-fd', '3'],
    { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] },
  );
  const fd3 = child.stdio[3] as NodeJS.WritableStream;
  fd3.end(`${TOKEN}\n`);
  try {
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`daemon did not start: ${out}`)), 30_000);
      child.stdout?.on('data', (b: Buffer) => {
        out += b.toString('utf8');
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1]) {
          clearTimeout(t);
          resolve(m[1]);
        }
      });
      child.on('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`daemon exited (${code})`));
      });
    });
    const { readFileSync } = await import('node:fs');
    await waitConnected({ url, secret: readFileSync(ch.secretFile, 'utf8').trim() });
    assert.doesNotMatch(out, /no token/);
  } finally {
    await stopProcess(child);
  }
});

test('serve: --token with --token-file is a usage error; --help documents the token sources', async () => {
  const r = await runAep(['claude-code', 'serve', '--port', '0', '--relay', relay.url, '--token', 'x', '--token-file', tokenFile], undefined, {
    timeoutMs: 30_000,
  });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /AEP_CLI_USAGE: give one of --token, --token-file and --token-fd/);
  const help = await runAep(['claude-code', 'serve', '--help']);
  for (const opt of ['--token-file <path>', '--token-fd <n>', '--token <token>', 'AEP_TOKEN']) assert.ok(help.stdout.includes(opt), opt);
});

test('install prints a serve command that runs as printed: this aep, and the token file aep up saves', async () => {
  const home = mkdtempSync(join(tmpdir(), 'aep-serve-home-'));
  const ch = channelDir();
  const r = await runAep(
    ['claude-code', 'install', '--settings', join(home, 'settings.json'), '--secret-file', ch.secretFile, '--socket', ch.socket],
    undefined,
    { env: { ...process.env, XDG_DATA_HOME: join(home, 'data') } },
  );
  assert.equal(r.code, 0, r.stderr);
  const m = /\(run: (.+) claude-code serve --token-file (\S+), the token aep up saved\)/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.match(m[1] ?? '', /^(aep|npx aep|node \S+)$/, 'the prefix is a command this shell can run (aep, npx aep in a clone, or node with the path)');
  assert.equal(m[2], join(home, 'data', 'aep', 'token'));
});
