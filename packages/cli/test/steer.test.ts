// Steering a running agent (issue 14 item 4, contract C8): `aep cancel|pause|resume` against the
// demo agent, which acks, reports run.cancelled / progress.status paused|resumed cause-linked to
// the command, and does not go on while paused. Then the public live checker's control probes
// (AEP-0004 §3-3.19) reproduced against the demo agent: control-ack, control-nack-unsupported,
// control-dedupe and the destructive control-cancel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { runAep, spawnDemo, startRelayProcess, watchStream, type JsonLine } from '../../../test/support/cli.js';

const TOKEN = 'test-token-steer';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
const children: ChildProcess[] = [];

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await relay.stop();
});

const aep = (...args: string[]) => runAep([...args, '--relay', relay.url, '--token', TOKEN], undefined, { timeoutMs: 60_000 });

test('aep pause holds the demo agent (answers still recorded), aep resume lets it go on, aep cancel stops its run', async () => {
  const S = 'steer-1';
  const watch = watchStream(relay.url, TOKEN, { session: S });
  await watch.ready;
  const d = spawnDemo(relay.url, TOKEN, ['--session', S, '--run', 'r-steer']);
  children.push(d.child);
  const form = String((await d.next((l) => l['event'] === 'requested', 'form requested'))['id']);

  const pause = await aep('pause', '--session', S, '--json');
  assert.equal(pause.code, 0, pause.stdout + pause.stderr);
  const pauseId = (JSON.parse(pause.stdout) as { command: string }).command;
  assert.equal((await d.next((l) => l['event'] === 'paused', 'paused'))['command'], pauseId);
  await watch.waitFor((e) => e.some((x) => x['type'] === 'progress.status' && x['cause'] === pauseId), 'paused status');
  const status = watch.events.find((x) => x['type'] === 'progress.status' && x['cause'] === pauseId);
  assert.deepEqual(status?.['data'], { phase: 'paused' });
  assert.equal(status?.['run'], 'r-steer');

  // Answered while paused: recorded, but the agent does not go on to its next request.
  assert.equal((await aep('respond', form, '--values', '{"1":"bk"}')).code, 0);
  await d.next((l) => l['event'] === 'answered', 'form answered');
  await d.next((l) => l['event'] === 'waiting' && l['reason'] === 'paused', 'waiting while paused');
  assert.equal(d.lines.filter((l) => l['kind'] === 'permission').length, 0, 'went on while paused');

  const resume = await aep('resume', '--session', S);
  assert.equal(resume.code, 0, resume.stdout + resume.stderr);
  assert.match(resume.stdout, /^accepted \(command \S+, session steer-1\)\n$/);
  await d.next((l) => l['event'] === 'resumed', 'resumed');
  const perm = String((await d.next((l) => l['event'] === 'requested' && l['kind'] === 'permission', 'permission requested'))['id']);

  const wrongRun = await aep('cancel', '--session', S, '--run', 'r-other');
  assert.equal(wrongRun.code, 3);
  assert.match(wrongRun.stdout, /^rejected: invalid\n {2}- control\.cancel\.unknown-run at \/run: /);
  const cancel = await aep('cancel', '--session', S, '--run', 'r-steer', '--reason', 'wrong branch', '--json');
  assert.equal(cancel.code, 0, cancel.stdout + cancel.stderr);
  const cancelId = (JSON.parse(cancel.stdout) as { command: string }).command;
  assert.deepEqual(await d.next((l) => l['event'] === 'cancelled', 'cancelled'), { event: 'cancelled', scope: 'run', run: 'r-steer', command: cancelId });
  assert.equal(await d.exit(), 1, 'a request was not answered');
  await watch.waitFor((e) => e.some((x) => x['type'] === 'session.ended'), 'session ended');
  watch.close();
  const after = watch.events.slice(watch.events.findIndex((x) => x['id'] === cancelId));
  assert.deepEqual(
    after.map((x) => x['type']),
    ['control.cancel', 'control.accepted', 'attention.resolved', 'run.cancelled', 'session.ended'],
  );
  assert.equal(after[2]?.['subject'], perm);
  assert.deepEqual(after[3]?.['data'], { by: 'control', reason: 'wrong branch' });
  assert.equal(after[3]?.['cause'], cancelId);
  assert.equal(after[3]?.['run'], 'r-steer');

  const late = await aep('pause', '--session', S);
  assert.equal(late.code, 3, 'nobody runs the session any more');
  assert.match(late.stdout, /^refused by the relay: no-route/);
  const bad = await aep('cancel');
  assert.equal(bad.code, 2);
});

// ---- the live checker's probes (AEP-0003 §10, AEP-0004 §3-3.19) ------------------------------------

const CROCK = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
function ulid(): string {
  let t = Date.now();
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = CROCK[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  return time + [...randomBytes(16)].map((b) => CROCK[b % 32]).join('');
}

/** A checker command: agent aep-live-check, no seq, capture metadata unless overridden. */
function command(type: string, session: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    aep: '0.1',
    id: ulid(),
    type,
    time: new Date().toISOString(),
    source: 'aep://live-check/agent/aep-live-check',
    agent: 'aep-live-check',
    session,
    capture: 'metadata',
    ...extra,
  };
}

/** The checker's sender socket: token only as ?access_token=, consumer hello, answers pings, records error frames. */
async function checkerSender(
  url: string,
  token: string,
): Promise<{ send: (c: Record<string, unknown> | string) => void; errors: JsonLine[]; close: () => void }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket?access_token=${encodeURIComponent(token)}`);
  const errors: JsonLine[] = [];
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', (b: Buffer) => {
      const f = JSON.parse(b.toString('utf8')) as JsonLine;
      if (f['type'] === 'hello') resolve();
      else if (f['type'] === 'ping') ws.send(JSON.stringify({ type: 'pong', t: f['t'] }));
      else if (f['type'] === 'error') errors.push(f);
    });
    ws.once('open', () =>
      ws.send(
        JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: 'aep-live-check', instance: 'live-check' }, capabilities: {} }),
      ),
    );
  });
  return { send: (c) => ws.send(typeof c === 'string' ? c : JSON.stringify(c)), errors, close: () => ws.close() };
}

/** The checker's envelope audit of a delivered Event (AEP-0003 §10). */
function audit(e: JsonLine): string[] {
  const out: string[] = [];
  for (const k of ['aep', 'id', 'type', 'time', 'source', 'agent']) if (typeof e[k] !== 'string' || e[k] === '') out.push(`${k} missing`);
  for (const [k, v] of Object.entries(e)) if (v === null) out.push(`${k} is null`);
  if (!/^[a-z0-9_.-]+\.[a-z0-9_.-]+$/.test(String(e['type']))) out.push('type');
  if (Number.isNaN(Date.parse(String(e['time'])))) out.push('time');
  if (typeof e['session'] !== 'string') out.push('session');
  if (!Number.isInteger(e['seq']) || (e['seq'] as number) < 0) out.push('seq');
  if (e['epoch'] !== undefined && (!Number.isInteger(e['epoch']) || (e['epoch'] as number) < 0)) out.push('epoch');
  return out;
}

const isAck = (e: JsonLine, id: unknown) => e['cause'] === id && (e['type'] === 'control.accepted' || e['type'] === 'control.rejected');
const distinct = (xs: JsonLine[]) => new Set(xs.map((x) => JSON.stringify(x))).size;

test('live checker control probes against the demo agent: control-ack, control-nack-unsupported, control-dedupe, control-cancel', async () => {
  const S = `live-ctl-${ulid().toLowerCase()}`;
  const RUN = 'r-live';
  const d = spawnDemo(relay.url, TOKEN, ['--session', S, '--run', RUN, '--only', 'form']);
  children.push(d.child);
  await d.next((l) => l['event'] === 'requested', 'requested');
  const watch = watchStream(relay.url, TOKEN, { session: S });
  await watch.ready;
  const sender = await checkerSender(relay.url, TOKEN);
  try {
    // §3.16 control-ack: the declared type, an unknown request.
    const ack = command('control.attention.respond', S, { subject: ulid(), data: { answer: { option: 'live-check-probe' } } });
    sender.send(ack);
    await watch.waitFor((e) => e.some((x) => isAck(x, ack['id'])), 'control-ack ack');

    // §3.17 control-nack-unsupported: a type the demo does not declare (it declares control.pause).
    const undeclared = command('x.acme.control.reindex', S, { data: {} });
    sender.send(undeclared);
    const start = Date.now();
    while (!sender.errors.some((f) => f['cause'] === undeclared['id']) && !watch.events.some((x) => isAck(x, undeclared['id'])) && Date.now() - start < 30_000)
      await new Promise((r) => setTimeout(r, 25));

    // §3.18 control-dedupe: the identical command twice, 120 ms apart.
    const dup = command('control.attention.respond', S, { subject: ulid(), data: { answer: { option: 'live-check-probe' } } });
    const text = JSON.stringify(dup);
    sender.send(text);
    await new Promise((r) => setTimeout(r, 120));
    sender.send(text);
    await watch.waitFor((e) => e.filter((x) => isAck(x, dup['id'])).length >= 1, 'control-dedupe ack');

    // §3.19 control-cancel (destructive): last.
    const cancel = command('control.cancel', S, {
      run: RUN,
      capture: 'redacted',
      data: { scope: 'run', reason: 'aep-live-check control-class certification' },
    });
    sender.send(cancel);
    // The demo ends its session after the cancel: everything it sent before is on the stream by then.
    await watch.waitFor((e) => e.some((x) => x['type'] === 'session.ended'), 'session.ended after the cancel');
    assert.equal(await d.exit(), 1);

    const events = watch.events;
    const ackAcks = events.filter((x) => isAck(x, ack['id']));
    assert.equal(distinct(ackAcks), 1, 'control-ack: exactly one distinct ack');
    assert.ok(!(ackAcks[0]?.['type'] === 'control.rejected' && (ackAcks[0]?.['data'] as JsonLine)['reason'] === 'unsupported'), 'control-ack: not unsupported');
    assert.deepEqual(audit(ackAcks[0]!), []);

    assert.equal(events.filter((x) => x['cause'] === undeclared['id'] && x['type'] === 'control.accepted').length, 0, 'control-nack-unsupported: accepted');
    const refusal = sender.errors.find((f) => f['cause'] === undeclared['id']);
    const nack = events.find((x) => isAck(x, undeclared['id']));
    assert.ok(
      /unsupported/.test(String(refusal?.['code'])) || (nack?.['type'] === 'control.rejected' && (nack['data'] as JsonLine)['reason'] === 'unsupported'),
      'control-nack-unsupported',
    );

    const dupAcks = events.filter((x) => isAck(x, dup['id']));
    assert.ok(dupAcks.length >= 1);
    assert.equal(distinct(dupAcks), 1, 'control-dedupe: one decision');

    const cancelAcks = events.filter((x) => isAck(x, cancel['id']));
    assert.equal(cancelAcks.length, 1, 'control-cancel: exactly one ack delivery');
    assert.equal(cancelAcks[0]?.['type'], 'control.accepted');
    const cancelled = events.filter((x) => x['type'] === 'run.cancelled' && x['run'] === RUN);
    assert.equal(cancelled.length, 1, 'control-cancel: exactly one run.cancelled');
    assert.ok(cancelled[0]!['cause'] === cancel['id'] || cancelled[0]!['cause'] === cancelAcks[0]!['id']);
    assert.deepEqual(audit(cancelled[0]!), []);
    assert.deepEqual(audit(cancelAcks[0]!), []);
  } finally {
    sender.close();
    watch.close();
  }
});
