// `aep demo agent`, `aep respond`, `aep inbox`, `aep tail` as real processes on a real relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep, spawnDemo, startRelayProcess, type JsonLine } from '../../../test/support/cli.js';

const TOKEN = 'test-token-demo';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;
const children: ChildProcess[] = [];

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
  dir = mkdtempSync(join(tmpdir(), 'aep-demo-test-'));
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Line = JsonLine;

/** Starts `aep demo agent` against the test relay. */
function demo(args: string[]) {
  const d = spawnDemo(relay.url, TOKEN, args);
  children.push(d.child);
  return d;
}

const respond = (id: string, ...args: string[]) =>
  runAep(['respond', id, '--relay', relay.url, '--token', TOKEN, '--ack-window', '5000', ...args], undefined, { timeoutMs: 60_000 });

test('demo agent: invalid answers are nacked (exit 3, request pending), a corrected form and a permission are accepted with exact typed values', async () => {
  const d = demo(['--session', 'cli-demo-1']);
  const ready = await d.next((l) => l['event'] === 'ready', 'ready');
  assert.deepEqual(ready, { event: 'ready', session: 'cli-demo-1', agent: 'demo-agent', run: ready['run'] });
  assert.match(String(ready['run']), /^run-[a-z0-9]+$/);
  const req = await d.next((l) => l['event'] === 'requested' && l['kind'] === 'form', 'form requested');
  const id = String(req['id']);

  // Missing required field "1": exit 3, reason printed, the request stays pending.
  const missing = await respond(id, '--values', '{"2":30}');
  assert.equal(missing.code, 3, missing.stderr + missing.stdout);
  assert.match(missing.stdout, /rejected: invalid/);
  assert.match(missing.stdout, /form\.required-missing at \/data\/answer\/values\/1/);
  assert.doesNotMatch(missing.stdout, /form\.required-missing at \S+: form\.required-missing:/, 'the rule id is not repeated in the message');
  const rej = await d.next((l) => l['event'] === 'rejected', 'rejected line');
  assert.equal(rej['id'], id);
  assert.equal((rej['issues'] as { rule: string }[])[0]?.rule, 'form.required-missing');

  // A forged choice id on the multi select: rejected as well.
  const forged = await respond(id, '--values', '{"1":"bk","4":["1","9"]}');
  assert.equal(forged.code, 3);
  assert.match(forged.stdout, /form\.choice-forged/);

  // Still pending in the inbox, with provenance.
  const inbox = await runAep(['inbox', '--relay', relay.url, '--token', TOKEN, '--json'], undefined, { timeoutMs: 60_000 });
  assert.equal(inbox.code, 0, inbox.stderr);
  const pending = inbox.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  const mine = pending.find((p) => p['id'] === id);
  assert.ok(mine, inbox.stdout);
  assert.equal(mine['agent'], 'demo-agent');
  assert.equal(mine['session'], 'cli-demo-1');
  assert.equal(mine['kind'], 'form');

  const values = { '1': 'nightly-bk', '2': 30, '3': true, '4': ['1', '3'], '5': 'cold-line' };
  const ok = await respond(id, '--values', JSON.stringify(values));
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^accepted/);
  const answered = await d.next((l) => l['event'] === 'answered' && l['kind'] === 'form', 'form answered');
  assert.deepEqual(answered, { event: 'answered', kind: 'form', id, values });

  const perm = await d.next((l) => l['event'] === 'requested' && l['kind'] === 'permission', 'permission requested');
  const pr = await respond(String(perm['id']), '--text', '  DENY ');
  assert.equal(pr.code, 0, pr.stdout + pr.stderr);
  const pa = await d.next((l) => l['event'] === 'answered' && l['kind'] === 'permission', 'permission answered');
  assert.deepEqual(pa, { event: 'answered', kind: 'permission', id: perm['id'], option: 'deny' });
  assert.equal(await d.exit(), 0, d.stderr());

  // After the agent ended its session the request is no longer pending; a late answer is refused by the relay (no-route).
  const late = await respond(id, '--values', JSON.stringify(values));
  assert.equal(late.code, 3);
  assert.match(late.stdout, /refused by the relay: no-route/);

  // The whole loop is an ordered, replayable stream.
  const tail = await runAep(
    ['tail', '--relay', relay.url, '--token', TOKEN, '--session', 'cli-demo-1', '--from-start', '--no-resume', '--json', '--count', '18'],
    undefined,
    { timeoutMs: 60_000 },
  );
  assert.equal(tail.code, 0, tail.stderr);
  const types = tail.stdout
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { type: string }).type)
    .filter((t) => t !== 'control.attention.respond');
  assert.deepEqual(types, [
    'session.started',
    'run.started',
    'attention.requested',
    'control.rejected',
    'control.rejected',
    'control.accepted',
    'attention.answered',
    'attention.resolved',
    'attention.requested',
    'control.accepted',
    'attention.answered',
    'attention.resolved',
    'run.finished',
    'session.ended',
  ]);
});

test('demo agent: expiry produces attention.timeout and exit 1', async () => {
  const d = demo(['--session', 'cli-demo-2', '--only', 'form', '--timeout-ms', '500']);
  const req = await d.next((l) => l['event'] === 'requested', 'requested');
  const t = await d.next((l) => l['event'] === 'timeout', 'timeout');
  assert.deepEqual(t, { event: 'timeout', kind: 'form', id: req['id'] });
  assert.equal(await d.exit(), 1);
});

test('respond: usage errors exit 2; unreachable relay exits 5; no ack in the window exits 4', async () => {
  const none = await runAep(['respond', 'X', '--relay', relay.url, '--token', TOKEN]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /AEP_CLI_USAGE/);
  const badJson = await runAep(['respond', 'X', '--values', '{nope', '--relay', relay.url, '--token', TOKEN]);
  assert.equal(badJson.code, 2);
  assert.match(badJson.stderr, /AEP_CLI_BAD_VALUES/);
  const unknown = await runAep(['respond', '01JNOSUCHREQUEST0000000000', '--option', 'allow', '--relay', relay.url, '--token', TOKEN]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /AEP_CLI_UNKNOWN_REQUEST/);
  const down = await runAep(['respond', 'X', '--option', 'allow', '--session', 's', '--relay', 'http://127.0.0.1:9', '--token', TOKEN]);
  assert.equal(down.code, 5);
  assert.match(down.stderr, /AEP_CLI_RELAY_UNREACHABLE/);
  assert.doesNotMatch(down.stderr + down.stdout, new RegExp(TOKEN));
  const tailDown = await runAep(['tail', '--relay', 'http://127.0.0.1:9', '--token', TOKEN, '--connect-timeout', '500', '--no-resume']);
  assert.equal(tailDown.code, 5, tailDown.stderr);
  assert.match(tailDown.stderr, /AEP_CLI_RELAY_UNREACHABLE/);
  const inboxDown = await runAep(['inbox', '--relay', 'http://127.0.0.1:9', '--token', TOKEN]);
  assert.equal(inboxDown.code, 5, inboxDown.stderr);

  // A silent target: claims the session but never acks (raw emitter that ignores commands).
  const { default: WebSocket } = await import('ws');
  const ws = new WebSocket(relay.url.replace('http', 'ws') + '/socket', { headers: { Authorization: `Bearer ${TOKEN}` } });
  await new Promise((r) => ws.once('open', r));
  ws.send(
    JSON.stringify({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: 'silent' },
      capabilities: { control: { accepts: ['control.attention.respond'], ack_window_ms: 10000 } },
    }),
  );
  ws.send(
    JSON.stringify({
      aep: '0.1',
      id: '01JSILENT00000000000000001',
      type: 'session.started',
      time: new Date().toISOString(),
      source: 'aep://t/agent/silent',
      agent: 'silent',
      session: 's-silent',
      seq: 0,
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  const silent = await runAep([
    'respond',
    'R',
    '--option',
    'allow',
    '--session',
    's-silent',
    '--relay',
    relay.url,
    '--token',
    TOKEN,
    '--ack-window',
    '400',
    '--retries',
    '1',
  ]);
  ws.close();
  assert.equal(silent.code, 4, silent.stdout + silent.stderr);
  assert.match(silent.stdout, /no ack within the window/);
});

test('tail: readable lines, filters, and resume between runs', async () => {
  const d = demo(['--session', 'cli-demo-3', '--only', 'permission', '--agent', 'tail-agent']);
  const perm = await d.next((l) => l['event'] === 'requested', 'requested');
  const readable = await runAep(['inbox', '--relay', relay.url, '--token', TOKEN, '--agent', 'tail-agent'], undefined, { timeoutMs: 60_000 });
  assert.equal(readable.code, 0, readable.stderr);
  assert.match(
    readable.stdout,
    /^1 pending attention request \(oldest first\)\n● \S+ {2}permission · Bash\n {2}from tail-agent · session cli-demo-3 · \d+s ago · capture redacted\n {2}What will run, complete and verbatim \(1 line, 14 characters; [^\n]*\n {2}│ rm -rf \.\/build\n {2}approval digest: [0-9a-f]{32}\n/,
  );
  assert.match(readable.stdout, /\[allow\] "Allow" → ALLOWS\n {4}\[deny \] "Deny" → denies\n/);
  const stateDir = join(dir, 'tail-state');
  const args = ['tail', '--relay', relay.url, '--token', TOKEN, '--agent', 'tail-agent', '--state-dir', stateDir];
  const first = await runAep([...args, '--from-start', '--count', '2'], undefined, { timeoutMs: 60_000 });
  assert.equal(first.code, 0, first.stderr);
  const l1 = first.stdout.trim().split('\n');
  assert.equal(l1.length, 2);
  assert.match(l1[0] ?? '', /^\d\d:\d\d:\d\d\.\d{3} INF tail-agent\/cli-demo-3#0 session\.started/);
  assert.match(l1[1] ?? '', /INF tail-agent\/cli-demo-3#1 run\.started/);
  const req = await runAep([...args, '--from-start', '--count', '1'], undefined, { timeoutMs: 60_000 });
  assert.match(req.stdout, /NTC tail-agent\/cli-demo-3#2 attention\.requested Bash {2}permission \[allow\/deny\]: rm -rf \.\/build/);
  const digest = /approval digest: ([0-9a-f]{32})/.exec(readable.stdout)?.[1] ?? '';
  assert.equal((await respond(String(perm['id']), '--option', 'allow', '--digest', digest)).code, 0);
  assert.equal(await d.exit(), 0);
  // The next run resumes after what was printed: the ack and the outcome, nothing twice.
  const second = await runAep([...args, '--count', '5'], undefined, { timeoutMs: 60_000 });
  assert.equal(second.code, 0, second.stderr);
  const kinds = second.stdout
    .trim()
    .split('\n')
    .map((l) => /(\S+\.\S+)/.exec(l.split(' ').slice(3).join(' '))?.[1]);
  assert.deepEqual(kinds, ['control.accepted', 'attention.answered', 'attention.resolved', 'run.finished', 'session.ended']);
  const bad = await runAep(['tail', '--relay', relay.url, '--token', TOKEN, '--filter', '{"seq":1}']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_BAD_FILTER/);
});

test('a crashed and restarted demo agent continues its session in a higher epoch (durable --state-dir, and the clock seed)', async () => {
  const stateDir = join(dir, 'agent-state');
  const runs: { epoch: number; seq: number }[][] = [];
  for (const extra of [['--state-dir', stateDir], ['--state-dir', stateDir], []]) {
    const d = demo(['--session', 'cli-restart', '--only', 'form', ...extra]);
    await d.next((l) => l['event'] === 'requested', 'requested');
    d.child.kill('SIGKILL'); // a crash: no dismissal, no session.ended
    await d.exit();
  }
  // Everything held for the session, then the end of the response (replay-only SSE). A restarted
  // agent may also dismiss its predecessor's offline request (contract C4) when the relay's roster
  // reply reaches it before the kill: those dismissals are checked, then set aside.
  const res = await fetch(`${relay.url}/stream?live=0&from=all&filter=${encodeURIComponent(JSON.stringify({ session: 'cli-restart' }))}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(res.status, 200);
  const all = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as { id: string; type: string; subject?: string; epoch?: number; seq: number; data?: { resolution?: string } });
  const requests = all.filter((e) => e.type === 'attention.requested').map((e) => e.id);
  const dismissals = all.filter((e) => e.type === 'attention.resolved');
  for (const d of dismissals) {
    assert.equal(d.data?.resolution, 'dismissed');
    assert.ok(requests.slice(0, 2).includes(d.subject ?? ''), "only an earlier run's request is dismissed, never the live one");
  }
  assert.equal(new Set(dismissals.map((d) => d.subject)).size, dismissals.length, 'each at most once');
  const evs = all.filter((e) => e.type !== 'attention.resolved');
  for (let i = 0; i < 3; i++) runs.push(evs.slice(i * 3, i * 3 + 3).map((e) => ({ epoch: e.epoch ?? 0, seq: e.seq })));
  assert.deepEqual(
    evs.map((e) => e.type),
    [
      'session.started',
      'run.started',
      'attention.requested',
      'session.started',
      'run.started',
      'attention.requested',
      'session.started',
      'run.started',
      'attention.requested',
    ],
  );
  const [a, b, c] = runs.map((r) => r[0]?.epoch ?? -1);
  assert.equal(a, 0, 'first durable epoch');
  assert.equal(b, 1, 'the durable counter went up by one');
  assert.ok((c ?? 0) > (b ?? 0), 'the clock seed is above the counter');
  for (const r of runs)
    assert.deepEqual(
      r.map((x) => x.seq),
      [0, 1, 2],
      'seq restarts in the new epoch',
    );
});

test('SIGTERM: the demo agent dismisses its pending request and cancels its run before ending its session', async () => {
  const d = demo(['--session', 'cli-sigterm']);
  await d.next((l) => l['event'] === 'requested', 'requested');
  d.child.kill('SIGTERM');
  assert.equal(await d.exit(), 130);
  const tail = await runAep(
    ['tail', '--relay', relay.url, '--token', TOKEN, '--session', 'cli-sigterm', '--from-start', '--no-resume', '--json', '--count', '6'],
    undefined,
    { timeoutMs: 60_000 },
  );
  const evs = tail.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data?: { resolution?: string; reason?: string; by?: string } });
  assert.deepEqual(
    evs.map((e) => e.type),
    ['session.started', 'run.started', 'attention.requested', 'attention.resolved', 'run.cancelled', 'session.ended'],
  );
  assert.equal(evs[3]?.data?.resolution, 'dismissed');
  assert.equal(evs[4]?.data?.by, 'shutdown');
  assert.equal(evs[5]?.data?.reason, 'killed');
  assert.ok(!d.lines.some((l) => l['kind'] === 'permission'), 'no new request after the signal');
});
