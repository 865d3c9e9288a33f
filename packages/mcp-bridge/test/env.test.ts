// Issue 11 item 4 (docs/security.md §8, rows B-env and B-argv): the wrapped MCP server never
// receives the relay token, neither in its environment (process.env and the kernel's
// /proc/self/environ) nor on its command line, and with AEP_TOKEN or --token-file the token is not
// on `aep mcp wrap`'s own command line either (the server reads /proc/<ppid>/cmdline: any local
// user can). The bridge still uses the token: an elicitation is answered through the relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { CHILD_ENV_ALLOW, childEnvironment } from '@aep/mcp-bridge';
import { runAep, startRelayProcess } from '../../../test/support/cli.js';
import { startHost, SessionWatch } from './support.js';
import type { Host } from './support.js';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  dir = mkdtempSync(join(tmpdir(), 'aep-mcp-env-'));
});
after(async () => {
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface EnvReport {
  env: Record<string, string>;
  environ: string[] | null;
  cmdline: string[] | null;
  parentCmdline: string[] | null;
}

async function report(host: Host): Promise<EnvReport> {
  const r = await host.client.callTool({ name: 'env', arguments: {} });
  return JSON.parse((r.content as { text: string }[])[0]?.text ?? '{}') as EnvReport;
}

/** The variables a careless setup would hand to the server, with the token in several of them. */
const PLANTED = {
  AEP_TOKEN: TOKEN,
  AEP_DEBUG: '1',
  AEP_STATE_DIR: '/tmp/aep-state',
  AEP_CLAUDE_HOOK_URL: 'http://127.0.0.1:8377/hook',
  AEP_SOMETHING_NEW: 'a future secret',
  aep_token: TOKEN,
  MY_RELAY_TOKEN: TOKEN,
  AUTH_HEADER: `Bearer ${TOKEN}`,
  SERVER_SETTING: 'kept',
};

/** Asserts the server's view of its environment and command lines holds no trace of the token. */
function assertClean(r: EnvReport, stderr: string): void {
  assert.ok(r.environ !== null, 'the fixture could read /proc/self/environ');
  for (const where of [JSON.stringify(r.env), (r.environ ?? []).join('\n'), (r.cmdline ?? []).join(' ')]) {
    assert.ok(!where.includes(TOKEN), 'no token in the server environment or command line');
  }
  const names = [...Object.keys(r.env), ...(r.environ ?? []).map((kv) => kv.slice(0, kv.indexOf('=')))];
  assert.deepEqual([...new Set(names.filter((n) => /^aep_/i.test(n)))].sort(), ['AEP_DEBUG'], 'only the allow-listed AEP_* variable passes');
  assert.equal(r.env['AEP_DEBUG'], '1');
  assert.equal(r.env['SERVER_SETTING'], 'kept', 'the server keeps its own configuration');
  for (const gone of ['MY_RELAY_TOKEN', 'AUTH_HEADER', 'AEP_RELAY', 'AEP_SOMETHING_NEW']) assert.equal(r.env[gone], undefined, gone);
  assert.match(stderr, /not passed to the server: .*AEP_TOKEN/, 'the removal is logged by name');
  assert.ok(!stderr.includes(TOKEN), 'the token is never logged');
}

async function answerOne(host: Host, session: string): Promise<void> {
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  try {
    const pending = host.ask('all');
    const req = await watch.wait((e) => e.type === 'attention.requested', 'attention.requested');
    const r = await runAep(['respond', req.id, '--option', 'decline', '--relay', relay.url, '--token', TOKEN], undefined, { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await pending).action, 'decline', 'the bridge used the token: the answer came back through the relay');
  } finally {
    watch.close();
  }
}

test('token from AEP_TOKEN: not in the server environment, nor on any command line; answers still flow', async () => {
  const session = `s-env-${randomBytes(3).toString('hex')}`;
  const host = await startHost(['--relay', relay.url, '--session', session, '--agent', 'env-test'], { env: { ...PLANTED, AEP_RELAY: relay.url } });
  try {
    const r = await report(host);
    assertClean(r, host.stderr());
    assert.ok(r.parentCmdline !== null && r.parentCmdline.some((a) => a === 'wrap'), 'the parent is aep mcp wrap');
    assert.ok(!(r.parentCmdline ?? []).join(' ').includes(TOKEN), 'no token on the bridge command line either');
    await answerOne(host, session);
  } finally {
    await host.close();
  }
});

test('token from --token-file: the bridge command line names the file, never the token', async () => {
  const file = join(dir, 'token');
  writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
  const session = `s-envf-${randomBytes(3).toString('hex')}`;
  const { AEP_TOKEN: _drop, aep_token: _drop2, ...rest } = PLANTED;
  const host = await startHost(['--relay', relay.url, '--token-file', file, '--session', session, '--agent', 'env-test'], { env: { ...rest, AEP_TOKEN: '' } });
  try {
    const r = await report(host);
    assert.ok(!(r.parentCmdline ?? []).join(' ').includes(TOKEN));
    assert.ok((r.parentCmdline ?? []).includes(file));
    assertClean(r, host.stderr());
    await answerOne(host, session);
  } finally {
    await host.close();
  }
});

test('token from --token: still never handed to the server (environment, /proc/self/environ, argv)', async () => {
  const host = await startHost(['--relay', relay.url, '--token', TOKEN, '--agent', 'env-test'], { env: { ...PLANTED, AEP_TOKEN: '' } });
  try {
    assertClean(await report(host), host.stderr());
  } finally {
    await host.close();
  }
});

test('--token-file problems are usage errors that name the file, not its content', async () => {
  const empty = join(dir, 'empty');
  writeFileSync(empty, '\n');
  const missing = await runAep(['mcp', 'wrap', '--token-file', join(dir, 'nope'), '--', 'x']);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /AEP_CLI_UNREADABLE.*nope/);
  const blank = await runAep(['mcp', 'wrap', '--token-file', empty, '--', 'x']);
  assert.equal(blank.code, 2, blank.stderr);
  assert.match(blank.stderr, /AEP_CLI_BAD_OPTION.*empty/);
  const both = await runAep(['mcp', 'wrap', '--token', 'x', '--token-file', empty, '--', 'x']);
  assert.equal(both.code, 2, both.stderr);
  assert.match(both.stderr, /AEP_CLI_USAGE/);
});

test('property: childEnvironment keeps every other variable and drops AEP_* (but the allow-list) and anything holding the token', () => {
  const name = fc.oneof(
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/),
    fc.constantFrom('AEP_TOKEN', 'AEP_RELAY', 'aep_x', 'Aep_Debug', ...CHILD_ENV_ALLOW),
  );
  fc.assert(
    fc.property(fc.dictionary(name, fc.string({ maxLength: 30 })), fc.string({ minLength: 8, maxLength: 20 }), fc.boolean(), (parent, token, plant) => {
      const input: NodeJS.ProcessEnv = { ...parent };
      if (plant) input['PLANTED'] = `x${token}y`;
      const { env, removed } = childEnvironment(input, [token]);
      for (const [k, v] of Object.entries(input)) {
        const shouldGo = (/^aep_/i.test(k) && !CHILD_ENV_ALLOW.includes(k)) || (v ?? '').includes(token);
        assert.equal(Object.prototype.hasOwnProperty.call(env, k), !shouldGo, k);
        assert.equal(removed.includes(k), shouldGo, k);
        if (!shouldGo) assert.equal(env[k], v);
      }
      assert.ok(!Object.values(env).some((v) => (v ?? '').includes(token)));
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});
