// A wrong token gives one line naming AEP_CLI_RELAY_REFUSED and exit 3 in every command that talks
// to a relay (issue 14 item 5), as `--help` and docs/errors.md say; and hints print the `aep`
// prefix that runs as printed (issue 14 item 2).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runAep, startRelayProcess } from '../../../test/support/cli.js';
import { selfCommand } from '../src/util/self.js';

const TOKEN = 'test-token-refused-0123';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
  dir = mkdtempSync(join(tmpdir(), 'aep-refused-'));
});
after(async () => {
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a wrong token: one line, AEP_CLI_RELAY_REFUSED, exit 3, in every command', async () => {
  const wrong = `${TOKEN}x`; // the real token plus one character
  const commands: string[][] = [
    ['inbox'],
    ['tail', '--no-resume', '--connect-timeout', '5000'],
    ['respond', '01JNOSUCHREQUEST0000000000', '--show'],
    ['respond', '01JNOSUCHREQUEST0000000000', '--option', 'deny'],
    ['respond', '01JNOSUCHREQUEST0000000000', '--option', 'deny', '--session', 's'],
    ['demo', 'agent', '--session', 's-refused'],
    ['cancel', '--session', 's'],
    ['pause', '--session', 's'],
    ['resume', '--session', 's'],
  ];
  for (const args of commands) {
    const r = await runAep([...args, '--relay', relay.url, '--token', wrong], undefined, { timeoutMs: 60_000 });
    const what = args.slice(0, 2).join(' ');
    assert.equal(r.code, 3, `${what}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      `aep: AEP_CLI_RELAY_REFUSED: the relay at ${relay.url} refused the token (HTTP 401): check --token, --token-file or AEP_TOKEN (aep up prints the token it uses)\n`,
      what,
    );
    assert.ok(!(r.stdout + r.stderr).includes(wrong), `${what} printed the token`);
  }
  // The same from a token file.
  const file = join(dir, 'token');
  writeFileSync(file, `${TOKEN.slice(0, -1)}\n`, { mode: 0o600 }); // the real token minus one character
  const r = await runAep(['inbox', '--relay', relay.url, '--token-file', file], undefined, { timeoutMs: 60_000 });
  assert.equal(r.code, 3);
  assert.match(r.stderr, /^aep: AEP_CLI_RELAY_REFUSED: /);
  const ok = await runAep(['inbox', '--relay', relay.url, '--token-file', file.replace(/token$/, 'none')], undefined, { timeoutMs: 60_000 });
  assert.equal(ok.code, 2);
  assert.match(ok.stderr, /^aep: AEP_CLI_UNREADABLE: --token-file \S+ cannot be read: ENOENT\n$/);
  const both = await runAep(['inbox', '--relay', relay.url, '--token', TOKEN, '--token-file', file], undefined, { timeoutMs: 60_000 });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /AEP_CLI_USAGE: give one of --token, --token-file and --token-fd/);
});

test('--help says what a refusal exits, as the command does', async () => {
  for (const c of ['respond', 'inbox', 'tail', 'cancel', 'demo agent']) {
    const r = await runAep([...c.split(' '), '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout.replace(/\s+/g, ' '), /3 [^.]*(wrong token|token refused|refuses the token)/, c);
  }
});

test('hints: `aep` when the aep on PATH is this one, `npx aep` inside the clone, else the absolute path', () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(join(repoRoot, 'packages', 'cli', 'bin', 'aep.js'), join(bin, 'aep'));
  assert.equal(selfCommand({ PATH: bin, INIT_CWD: '/' }), 'aep');
  // npm's own node_modules/.bin (added to PATH by `npm start`) is not the person's shell PATH.
  assert.equal(selfCommand({ PATH: join(repoRoot, 'node_modules', '.bin'), INIT_CWD: repoRoot }), 'npx aep');
  assert.equal(selfCommand({ PATH: '', INIT_CWD: join(repoRoot, 'packages') }), 'npx aep');
  assert.equal(selfCommand({ PATH: '', INIT_CWD: dir }), `node ${join(repoRoot, 'packages', 'cli', 'bin', 'aep.js')}`);
  assert.equal(selfCommand({ AEP_SELF_COMMAND: 'npx aep' }), 'npx aep');
});
