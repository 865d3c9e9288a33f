// `aep otlp --relay URL --endpoint URL` end to end: a real relay (subprocess), the exporter
// (subprocess), and a real OTLP/HTTP JSON receiver started here that checks every request
// against the OTLP JSON encoding rules. Covers delivery, the capture ceiling, the receiver
// down / answering 503 / coming back on the same port (bounded queue, reading paused), and the
// exporter stopped or killed and restarted (resume from the state file: no duplicates, no gaps).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { spawnAep, startRelayProcess } from '../../../test/support/cli.js';
import { OtlpReceiver, makeEvents, postEvents, waitFor } from '../../bridges/test/support/receivers.js';
import type { ReceivedRecord } from '../../bridges/test/support/receivers.js';

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  dir = mkdtempSync(join(tmpdir(), 'aep-otlp-live-'));
});
after(async () => {
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Exporter {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startExporter(endpoint: string, state: string, filter: Record<string, unknown>, extra: string[] = [], env: Record<string, string> = {}): Exporter {
  const child = spawnAep(
    [
      'otlp',
      '--relay',
      relay.url,
      '--endpoint',
      endpoint,
      '--state',
      state,
      '--filter',
      JSON.stringify(filter),
      '--batch-size',
      '5',
      '--flush-ms',
      '20',
      '--max-queue',
      '10',
      '--retry-max-ms',
      '300',
      ...extra,
    ],
    { env: { ...process.env, AEP_TOKEN: TOKEN, ...env } },
  );
  let err = '';
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => err, exited };
}

async function stopExporter(x: Exporter, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (x.child.exitCode === null && x.child.signalCode === null) x.child.kill(signal);
  return x.exited;
}

const idOf = (r: ReceivedRecord) => String(r.attributes['aep.event_id']);

/** Every emitted id exactly once (no gaps, no duplicates); each session's positions in ascending order. */
function assertExactlyOnce(items: ReceivedRecord[], emitted: Record<string, unknown>[]): void {
  const ids = items.map(idOf);
  const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
  assert.deepEqual(dup, [], 'no duplicates');
  assert.deepEqual([...ids].sort(), emitted.map((e) => String(e['id'])).sort(), 'no gaps');
  const last = new Map<string, number>();
  for (const r of items) {
    const s = r.attributes['aep.session_id'];
    if (typeof s !== 'string') continue;
    const seq = Number(r.attributes['aep.sequence']);
    assert.ok((last.get(s) ?? -1) < seq, `session ${s} in order`);
    last.set(s, seq);
  }
}

test('exports every event once as valid OTLP/HTTP JSON, nothing above the ceiling, batched', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `s-${randomBytes(3).toString('hex')}`;
  const x = startExporter(recv.url, join(dir, 'basic.json'), { source: [`aep://live-host/agent/bot/session/${session}`] });
  t.after(() => stopExporter(x));
  const events = makeEvents('basic', session, 0, 30).filter((e) => e['session'] === session);
  await postEvents(relay.url, TOKEN, events);
  await waitFor('all records', () => recv.items.length >= events.length);
  assert.deepEqual(recv.problems, [], 'every request obeys the OTLP JSON encoding');
  assertExactlyOnce(recv.items, events);
  assert.ok(
    recv.requests.every(
      (r) =>
        (r.body as { resourceLogs: { scopeLogs: { logRecords: unknown[] }[] }[] }).resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((s) => s.logRecords))
          .length <= 5,
    ),
    'batches of at most --batch-size',
  );
  const all = JSON.stringify(recv.requests.map((r) => r.body));
  assert.doesNotMatch(all, /CANARY/, 'no content above the metadata ceiling');
  const run = recv.items.find((r) => r.record['eventName'] === 'dev.aep.run.started')!;
  assert.equal(run.attributes['aep.capture'], 'metadata', 'down-levelled by the relay at the ceiling');
  assert.deepEqual(run.body, { trigger: 'user' });
  const tool = recv.items.find((r) => r.record['eventName'] === 'dev.aep.tool.completed')!;
  const seq = Number(tool.attributes['aep.sequence']);
  assert.deepEqual(tool.body, { tool: { name: 'Bash', call_id: `c${seq}` }, status: 'success' }, 'the full result pruned, the rest kept');
  assert.equal(tool.attributes['gen_ai.usage.output_tokens'], seq);
  assert.equal(recv.items[0]!.service, 'bot');
  assert.match(x.stderr(), /AEP_BRIDGE_STARTED: .* capture ceiling metadata/);
  assert.doesNotMatch(x.stderr(), new RegExp(TOKEN), 'the token is never printed');
  assert.equal(await stopExporter(x), 0, 'SIGTERM: a clean stop');
  assert.match(x.stderr(), new RegExp(`AEP_BRIDGE_STOPPED: ${events.length} events acknowledged`));
});

test('receiver down, then 503s, then back on the same port: retried with backoff, reading paused at the queue bound, everything once', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `s-${randomBytes(3).toString('hex')}`;
  const x = startExporter(recv.url, join(dir, 'down.json'), { session });
  t.after(() => stopExporter(x));
  const first = makeEvents('down', session, 0, 8).filter((e) => e['session'] === session);
  await postEvents(relay.url, TOKEN, first);
  await waitFor('first records', () => recv.items.length >= first.length);
  await recv.stop();
  const second = makeEvents('down', session, 8, 60).filter((e) => e['session'] === session);
  await postEvents(relay.url, TOKEN, second);
  await waitFor('the exporter pauses reading at its queue bound', () => /AEP_BRIDGE_PAUSED: 10 events held \(limit 10 events/.test(x.stderr()));
  await waitFor('a retry', () => /AEP_BRIDGE_RETRY: cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/logs/.test(x.stderr()));
  recv.mode = { kind: 'status', status: 503, count: 2 };
  await recv.start();
  await waitFor('all records after the receiver is back', () => recv.items.length >= first.length + second.length);
  assert.ok(recv.requests.filter((r) => r.status === 503).length >= 2, 'the 503s were seen');
  assert.deepEqual(recv.problems, []);
  assertExactlyOnce(recv.items, [...first, ...second]);
  assert.match(x.stderr(), /AEP_BRIDGE_RESUMED/);
  const held = [...x.stderr().matchAll(/AEP_BRIDGE_RETRY: .*\((\d+) events held\)/g)].map((m) => Number(m[1]));
  assert.ok(held.length > 0 && held.every((n) => n <= 10), `never more than --max-queue held: ${held.join(',')}`);
});

test('exporter stopped and restarted: resumes from its state file, no duplicates, no gaps (seq-less events too)', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `s-${randomBytes(3).toString('hex')}`;
  // Agent-scoped heartbeats of this test carry their own source, so the filter selects both kinds.
  const tag = `rs${randomBytes(2).toString('hex')}`;
  const mine = (evs: Record<string, unknown>[]) => evs.map((e) => (e['type'] === 'agent.heartbeat' ? { ...e, source: `aep://live-host/agent/${tag}` } : e));
  const filter = { source: [`aep://live-host/agent/bot/session/${session}`, `aep://live-host/agent/${tag}`] };
  const state = join(dir, 'restart.json');
  const a = mine(makeEvents(tag, session, 0, 20));
  const x1 = startExporter(recv.url, state, filter);
  t.after(() => stopExporter(x1));
  await postEvents(relay.url, TOKEN, a);
  await waitFor('first part', () => recv.items.length >= a.length);
  assert.equal(await stopExporter(x1), 0);
  const saved = JSON.parse(readFileSync(state, 'utf8')) as { version: number; positions: unknown[][]; seqless: string[] };
  assert.equal(saved.version, 1);
  assert.deepEqual(
    saved.positions.map((p) => p.slice(1)),
    [
      [
        session,
        0,
        a
          .filter((e) => e['session'] === session)
          .map((e) => e['seq'] as number)
          .pop(),
      ],
    ],
  );
  assert.equal(saved.seqless.length, a.filter((e) => e['type'] === 'agent.heartbeat').length);
  const b = mine(makeEvents(tag, session, 20, 20));
  await postEvents(relay.url, TOKEN, b); // while no exporter runs
  const x2 = startExporter(recv.url, state, filter);
  t.after(() => stopExporter(x2));
  await waitFor('second part', () => recv.items.length >= a.length + b.length);
  const c = mine(makeEvents(tag, session, 40, 8));
  await postEvents(relay.url, TOKEN, c); // live, after the restart
  await waitFor('third part', () => recv.items.length >= a.length + b.length + c.length);
  await new Promise((r) => setTimeout(r, 300)); // a duplicate would arrive now, not later
  assert.deepEqual(recv.problems, []);
  assertExactlyOnce(recv.items, [...a, ...b, ...c]);
  assert.match(x2.stderr(), /AEP_BRIDGE_STARTED: .*\(1 sessions, 5 seq-less events acknowledged before\)/);
  assert.match(x2.stderr(), /(?:\d+) skipped as already done|AEP_BRIDGE_STARTED/);
});

test('exporter killed while a batch is in flight: after the restart nothing is missing; only that unacknowledged batch repeats', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `s-${randomBytes(3).toString('hex')}`;
  const state = join(dir, 'kill.json');
  const events = makeEvents('kill', session, 0, 24).filter((e) => e['session'] === session);
  const x1 = startExporter(recv.url, state, { session });
  t.after(() => stopExporter(x1));
  await postEvents(relay.url, TOKEN, events.slice(0, 6));
  await waitFor('first batches', () => recv.items.length >= 6);
  recv.mode = { kind: 'hold' };
  await postEvents(relay.url, TOKEN, events.slice(6));
  await waitFor('a held request', () => recv.held.length > 0);
  const heldBody = recv.requests[recv.requests.length - 1]!.body as { resourceLogs: { scopeLogs: { logRecords: unknown[] }[] }[] };
  const inFlight = heldBody.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((s) => s.logRecords)).length;
  await stopExporter(x1, 'SIGKILL');
  recv.mode = { kind: 'ok' };
  for (const r of recv.held.splice(0)) r.destroy();
  const x2 = startExporter(recv.url, state, { session });
  t.after(() => stopExporter(x2));
  await waitFor('everything after the restart', () => new Set(recv.items.map(idOf)).size >= events.length);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(recv.problems, []);
  const ids = recv.items.map(idOf);
  assert.deepEqual([...new Set(ids)].sort(), events.map((e) => String(e['id'])).sort(), 'no gaps');
  assert.equal(ids.length, events.length, 'the held batch was never accepted, so nothing repeats in what was accepted');
  assert.ok(inFlight > 0 && inFlight <= 5);
});

test('a receiver that refuses the exporter (401) stops it with exit 5 and a named cause; a 400 drops that batch only', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `s-${randomBytes(3).toString('hex')}`;
  recv.mode = { kind: 'status', status: 400, count: 1 };
  const x = startExporter(recv.url, join(dir, 'refuse.json'), { session }, ['--batch-size', '3', '--header', 'Authorization: Bearer otlp-secret-xyz'], {
    OTEL_EXPORTER_OTLP_HEADERS: 'x-team=ops%20a,authorization=overridden-by-header',
  });
  t.after(() => stopExporter(x));
  const events = makeEvents('ref', session, 0, 9).filter((e) => e['session'] === session);
  await postEvents(relay.url, TOKEN, events.slice(0, 3));
  await waitFor('the 400', () => /AEP_BRIDGE_REJECTED: 3 item\(s\) refused for good and dropped: .*HTTP 400/.test(x.stderr()));
  await postEvents(relay.url, TOKEN, events.slice(3, 6));
  await waitFor('later batches still go', () => recv.items.length >= 3);
  assert.equal(recv.requests[0]!.headers['authorization'], 'Bearer otlp-secret-xyz', '--header reaches the receiver (and wins over the environment)');
  assert.equal(recv.requests[0]!.headers['x-team'], 'ops a', '$OTEL_EXPORTER_OTLP_HEADERS reaches the receiver');
  recv.mode = { kind: 'status', status: 401 };
  await postEvents(relay.url, TOKEN, events.slice(6));
  assert.equal(await x.exited, 5);
  assert.match(x.stderr(), /AEP_BRIDGE_REFUSED: http:\/\/127\.0\.0\.1:\d+\/v1\/logs answered HTTP 401 \(not retried/);
  assert.doesNotMatch(x.stderr(), /otlp-secret-xyz/, 'headers are never printed');
});

test('a relay that refuses the subscription (wrong token) stops the exporter: exit 5, AEP_BRIDGE_RELAY, token not printed', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const x = startExporter(recv.url, join(dir, 'badtoken.json'), {}, [], { AEP_TOKEN: 'wrong-token-abc' });
  t.after(() => stopExporter(x));
  assert.equal(await x.exited, 5);
  assert.match(x.stderr(), /aep: AEP_BRIDGE_RELAY: the relay refused the subscription: .*401/);
  assert.doesNotMatch(x.stderr(), /wrong-token-abc/);
  assert.equal(recv.requests.length, 0);
});

test('subscribing over the WebSocket binding (--transport ws) exports the same way', async (t) => {
  const recv = await new OtlpReceiver().start();
  t.after(() => recv.stop());
  const session = `w-${randomBytes(3).toString('hex')}`;
  const x = startExporter(recv.url, join(dir, 'ws.json'), { session }, ['--transport', 'ws']);
  t.after(() => stopExporter(x));
  const events = makeEvents('ws', session, 0, 12).filter((e) => e['session'] === session);
  await postEvents(relay.url, TOKEN, events);
  await waitFor('all records', () => recv.items.length >= events.length);
  assert.deepEqual(recv.problems, []);
  assertExactlyOnce(recv.items, events);
  assert.doesNotMatch(JSON.stringify(recv.requests.map((r) => r.body)), /CANARY/);
});
