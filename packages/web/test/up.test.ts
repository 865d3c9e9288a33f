// `aep up`, the main job (issue 7 item 6), as a real subprocess: relay + inbox in one process,
// the token generated once and kept (0600) so the inbox keeps working across restarts, the
// SQLite store by default, `--demo` starting the demo agent, coded errors for bad options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, mkdtempSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep } from '../../../test/support/cli.js';
import { postEvents } from './support/browser.js';
import { sessionEvent } from './support/fixtures.js';
import { ensureWebBuilt, startUp, stopChild } from './support/processes.js';

function tokenOf(lines: string[]): string {
  const l = lines.find((x) => x.trimStart().startsWith('Token:'));
  return l?.split('Token:')[1]?.trim() ?? '';
}

test('aep up --help documents every option and its default', async () => {
  const r = await runAep(['up', '--help']);
  assert.equal(r.code, 0);
  for (const opt of ['--port', '--host', '--store', '--memory', '--token', '--demo', '--no-open'])
    assert.ok(r.stdout.includes(opt), `${opt} missing from help`);
  assert.match(r.stdout, /default: "8787"/);
  assert.match(r.stdout, /default: "127\.0\.0\.1"/);
});

test('bad options fail with stable codes and no stack trace', async () => {
  const bad = await runAep(['up', '--port', 'eighty', '--no-open']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_BAD_OPTION: --port/);
  const both = await runAep(['up', '--memory', '--store', '/tmp/x.sqlite', '--no-open']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /AEP_CLI_BAD_OPTION/);
  assert.doesNotMatch(bad.stderr + both.stderr, /\n\s+at /);
});

test('a port in use is reported as unavailable (exit 5)', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const r = await runAep(['up', '--port', String(port), '--memory', '--no-open', '--token', 'x'.repeat(20)], undefined, { timeoutMs: 30_000 });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /AEP_CLI_LISTEN_FAILED: cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE: the port is in use\)/); // one code for up and relay (cli decisions)
  } finally {
    blocker.close();
  }
});

test('the token and the SQLite store survive a restart; the inbox is served with a strict CSP', async () => {
  ensureWebBuilt();
  const stateHome = mkdtempSync(join(tmpdir(), 'aep-up-'));
  const first = await startUp([], stateHome);
  let token = '';
  try {
    await first.out.wait((l) => l.trimStart().startsWith('Press Ctrl+C'), 'the banner end');
    token = tokenOf(first.out.all);
    assert.ok(token.length >= 24);
    assert.ok(first.out.all.some((l) => l.includes('aep claude-code install')));
    const tokenFile = join(stateHome, 'aep', 'token');
    // Hints keep the token off command lines: the saved file (cli decisions, issue 11 item 4).
    assert.ok(first.out.all.some((l) => l.includes(`aep claude-code serve --relay ${first.url} --token-file ${tokenFile}`)));
    assert.ok(first.out.all.some((l) => l.includes(`aep demo agent --relay ${first.url} --token-file ${tokenFile}`)));
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    assert.ok(existsSync(join(stateHome, 'aep', 'relay.sqlite')), 'default store under XDG_DATA_HOME');
    const page = await fetch(`${first.url}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.match(await page.text(), /<div id="app">/);
    await postEvents(first.url, token, [sessionEvent('keeper', 's_keep', 1, 'session.started')]);
  } finally {
    assert.equal(await stopChild(first.child), 0);
  }
  const second = await startUp([], stateHome);
  try {
    await second.out.wait((l) => l.trimStart().startsWith('Press Ctrl+C'), 'the banner end');
    assert.equal(tokenOf(second.out.all), token, 'the saved token is reused');
    const res = await fetch(`${second.url}/stream?from=all&live=0&filter=${encodeURIComponent(JSON.stringify({ session: 's_keep' }))}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.match(await res.text(), /"session":"s_keep"/);
    const unauth = await fetch(`${second.url}/stream?from=all&live=0`);
    assert.equal(unauth.status, 401);
  } finally {
    await stopChild(second.child);
  }
});

test('aep up --demo also starts the demo agent, whose form waits in the inbox', async () => {
  const up = await startUp(['--memory', '--demo']);
  try {
    const line = await up.out.wait((l) => l.startsWith('demo: {"event":"requested"'), 'the demo agent request', 30_000);
    const id = (JSON.parse(line.slice('demo: '.length)) as { id: string }).id;
    const token = tokenOf(up.out.all);
    const res = await fetch(`${up.url}/stream?from=all&live=0`, { headers: { Authorization: `Bearer ${token}` } });
    const body = await res.text();
    assert.ok(body.includes(`"id":"${id}"`) && body.includes('"kind":"form"'));
  } finally {
    await stopChild(up.child);
  }
});
