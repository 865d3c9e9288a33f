// Attention engine + emitter + sender + subscriber against the real relay (a real `aep relay`
// subprocess). Every wait is bounded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { AttentionEngine, CommandSender, EmitterConnection, subscribe, listPending } from '@aep/client/node';
import type { FieldSpec, WireEvent } from '@aep/client';
import { startRelayProcess } from '../../../test/support/cli.js';
import { BACKUP_FORM_FIELDS } from '../../../test/support/forms.js';

const TOKEN = 'test-token-attention';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let stateDir: string;

const FIELDS: FieldSpec[] = [...BACKUP_FORM_FIELDS];

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  stateDir = mkdtempSync(join(tmpdir(), 'aep-client-test-'));
});
after(async () => {
  await relay.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, rej) => {
      t = setTimeout(() => rej(new Error(`timed out: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

async function emitter(agent: string, extra: Partial<ConstructorParameters<typeof EmitterConnection>[0]> = {}) {
  return EmitterConnection.connect({ url: relay.url, token: TOKEN, agent, capture: 'redacted', control: { accepts: ['control.attention.respond'] }, ...extra });
}

/** Collects every event of a session seen over SSE (as received). */
function watch(session: string) {
  const events: { e: WireEvent; raw: string }[] = [];
  const sub = subscribe({ url: relay.url, token: TOKEN, filter: { session }, from: 'all' }, (e, raw) => events.push({ e, raw }));
  const until = async (pred: () => boolean, what: string, ms = 10_000) => {
    const start = Date.now();
    while (!pred()) {
      if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; saw ${events.map((x) => x.e.type).join(',')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { events, sub, until, types: () => events.map((x) => x.e.type) };
}

test('a valid form answer ends in accepted, answered and resolved; the agent holds the typed values', async () => {
  const conn = await emitter('agent-valid');
  const engine = new AttentionEngine(conn);
  conn.emit('s-valid', 'session.started', {});
  const w = watch('s-valid');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  const p = engine.requestAttention({ session: 's-valid', kind: 'form', prompt: 'Configure the nightly backup', subject: 'backup-config', fields: FIELDS });
  await w.until(() => w.types().includes('attention.requested'), 'request on the stream');
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const values = { '1': 'nightly-bk', '2': 30, '3': true, '4': ['1', '3'], '5': 'cold-line' };
  const r = await sender.respond({ session: 's-valid', requestId: p.id, answer: { values } });
  assert.equal(r.status, 'accepted');
  const outcome = await withTimeout(p, 5_000, 'outcome');
  assert.deepEqual(outcome, { status: 'answered', requestId: p.id, answer: { values }, via: 'control', by: 'aep-cli', commandId: r.command.id });
  await w.until(() => w.types().includes('attention.resolved'), 'resolved');
  const answered = w.events.find((x) => x.e.type === 'attention.answered')?.e;
  assert.ok(answered);
  assert.equal(answered.subject, p.id);
  assert.equal(answered.cause, r.command.id);
  assert.deepEqual(answered.data, { answer: { values }, by: 'aep-cli', via: 'control' });
  const resolved = w.events.find((x) => x.e.type === 'attention.resolved')?.e;
  assert.equal(resolved?.subject, p.id);
  assert.equal((resolved?.data as { resolution: string }).resolution, 'answered');
  // Order on the session: request, command (persisted by the relay), ack, answered, resolved.
  const order = w.types().filter((t) => t !== 'session.started');
  assert.deepEqual(
    order.filter((t) => t !== 'control.attention.respond'),
    ['attention.requested', 'control.accepted', 'attention.answered', 'attention.resolved'],
  );
  w.sub.close();
  await sender.close();
  await engine.shutdown();
  await conn.close();
});

test('a missing required field is rejected with its issue, the request stays pending, a corrected answer is accepted', async () => {
  const conn = await emitter('agent-missing');
  const rejected: string[][] = [];
  const engine = new AttentionEngine(conn);
  const p = engine.requestAttention({
    session: 's-missing',
    kind: 'form',
    prompt: 'Configure',
    fields: FIELDS,
    onRejected: (issues) => rejected.push(issues.map((i) => i.rule)),
  });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const bad = await sender.respond({ session: 's-missing', requestId: p.id, answer: { values: { '2': 30 } } });
  assert.equal(bad.status, 'rejected');
  assert.equal(bad.reason, 'invalid');
  assert.ok(
    bad.issues?.some((i) => i.rule === 'form.required-missing' && i.path.endsWith('/1')),
    JSON.stringify(bad.issues),
  );
  assert.deepEqual(rejected, [['form.required-missing']]);
  assert.deepEqual(engine.pending('s-missing'), [p.id]);
  const pend = await listPending({ url: relay.url, token: TOKEN, filter: { session: 's-missing' } });
  assert.deepEqual(
    pend.map((x) => x.id),
    [p.id],
  );
  const good = await sender.respond({ session: 's-missing', requestId: p.id, answer: { values: { '1': 'bk' } } });
  assert.equal(good.status, 'accepted');
  const outcome = await withTimeout(p, 5_000, 'outcome');
  assert.equal(outcome.status, 'answered');
  // An answer after resolution is refused (decided: reason `refused`).
  const late = await sender.respond({ session: 's-missing', requestId: p.id, answer: { values: { '1': 'again' } } });
  assert.equal(late.status, 'rejected');
  assert.equal(late.reason, 'refused');
  await sender.close();
  await engine.shutdown();
  await conn.close();
});

test('a forged choice id is rejected; an unknown request still gets an ack (never silent)', async () => {
  const conn = await emitter('agent-forged');
  const engine = new AttentionEngine(conn);
  const p = engine.requestAttention({ session: 's-forged', kind: 'form', prompt: 'Configure', fields: FIELDS });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const forged = await sender.respond({ session: 's-forged', requestId: p.id, answer: { values: { '1': 'bk', '4': ['1', '7'] } } });
  assert.equal(forged.status, 'rejected');
  assert.equal(forged.reason, 'invalid');
  assert.ok(
    forged.issues?.some((i) => i.rule === 'form.choice-forged'),
    JSON.stringify(forged.issues),
  );
  assert.deepEqual(engine.pending('s-forged'), [p.id]);
  const unknown = await sender.respond({ session: 's-forged', requestId: '01JUNKNOWNREQUEST000000000', answer: { option: 'allow' } });
  assert.equal(unknown.status, 'rejected');
  assert.equal(unknown.reason, 'invalid');
  await sender.close();
  await engine.shutdown();
  await conn.close();
});

test('a duplicated command gets the byte-identical recorded ack and is applied once', async () => {
  const conn = await emitter('agent-dup');
  const engine = new AttentionEngine(conn);
  const p = engine.requestAttention({
    session: 's-dup',
    kind: 'permission',
    prompt: 'Allow?',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
  });
  const w = watch('s-dup');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  // A raw sender: hello, subscribe to the session's acks, send the same bytes twice.
  const ws = new WebSocket(relay.url.replace('http', 'ws') + '/socket', { headers: { Authorization: `Bearer ${TOKEN}` } });
  const acks: string[] = [];
  let subscribed!: () => void;
  const subOk = new Promise<void>((r) => {
    subscribed = r;
  });
  ws.on('message', (b: Buffer) => {
    const text = b.toString('utf8');
    const m = JSON.parse(text) as { type: string };
    if (m.type === 'subscribed') subscribed();
    if (m.type === 'control.accepted' || m.type === 'control.rejected') acks.push(text);
  });
  await withTimeout(new Promise((r) => ws.once('open', r)), 5_000, 'ws open');
  ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
  ws.send(JSON.stringify({ type: 'subscribe', id: 's', filter: { session: 's-dup', type: ['control.accepted', 'control.rejected'] } }));
  await withTimeout(subOk, 5_000, 'subscribed');
  const cmd = JSON.stringify({
    aep: '0.1',
    id: '01JDUPCMD00000000000000001',
    type: 'control.attention.respond',
    subject: p.id,
    cause: p.id,
    time: new Date().toISOString(),
    source: 'aep://test/agent/raw-sender',
    agent: 'raw-sender',
    session: 's-dup',
    data: { answer: { text: ' ALLOW ' } },
    capture: 'redacted',
  });
  ws.send(cmd);
  const outcome = await withTimeout(p, 5_000, 'outcome');
  assert.deepEqual(outcome.status === 'answered' && outcome.answer, { option: 'allow' }); // AEP-0008: text mapped to the option
  ws.send(cmd);
  const start = Date.now();
  while (acks.length < 2 && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 20));
  assert.equal(acks.length, 2);
  assert.equal(acks[1], acks[0], 'the re-ack is byte-identical');
  assert.equal((JSON.parse(acks[0] ?? '{}') as { type: string }).type, 'control.accepted');
  // The relay fans the re-ack out again; the SDK subscriber dedupes on (source, id): one ack, one answer.
  await w.until(() => w.types().includes('attention.resolved'), 'resolved');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(w.types().filter((t) => t === 'control.accepted').length, 1);
  assert.equal(w.types().filter((t) => t === 'attention.answered').length, 1);
  w.sub.close();
  ws.close();
  await engine.shutdown();
  await conn.close();
});

test('permission: unmatched text never grants; expiry produces attention.timeout', async () => {
  const conn = await emitter('agent-exp');
  const engine = new AttentionEngine(conn);
  const w = watch('s-exp');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  const perm = engine.requestAttention({
    session: 's-exp',
    kind: 'permission',
    prompt: 'Allow?',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
  });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const r = await sender.respond({ session: 's-exp', requestId: perm.id, answer: { text: 'sure, go ahead' } });
  assert.equal(r.status, 'accepted');
  const o = await withTimeout(perm, 5_000, 'perm');
  assert.ok(o.status === 'answered');
  assert.equal(o.answer.option, 'deny');
  assert.equal(o.answer.text, 'sure, go ahead');
  const p = engine.requestAttention({ session: 's-exp', kind: 'form', prompt: 'Quick', fields: FIELDS, expiresInMs: 300 });
  const outcome = await withTimeout(p, 5_000, 'timeout');
  assert.deepEqual(outcome, { status: 'timeout', requestId: p.id });
  await w.until(() => w.events.some((x) => x.e.type === 'attention.timeout' && x.e.subject === p.id), 'attention.timeout');
  const late = await sender.respond({ session: 's-exp', requestId: p.id, answer: { values: { '1': 'x' } } });
  assert.equal(late.reason, 'refused');
  // Dismissal before session.ended (AEP-0002 §7.2).
  const d = engine.requestAttention({ session: 's-exp', kind: 'input', prompt: 'Name?' });
  engine.endSession('s-exp');
  assert.deepEqual(await withTimeout(d, 5_000, 'dismissed'), { status: 'dismissed', requestId: d.id, reason: 'session ended' });
  await w.until(() => w.types().includes('session.ended'), 'session.ended');
  const tail = w.types().slice(-2);
  assert.deepEqual(tail, ['attention.resolved', 'session.ended']);
  w.sub.close();
  await sender.close();
  await conn.close();
});

test('respond_via ["oob"] refuses control answers; an out-of-band answer is recorded via oob; abort dismisses', async () => {
  const conn = await emitter('agent-oob');
  const engine = new AttentionEngine(conn);
  const w = watch('s-oob');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  const p = engine.requestAttention({
    session: 's-oob',
    kind: 'permission',
    prompt: 'Allow?',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
    respondVia: ['oob'],
  });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const r = await sender.respond({ session: 's-oob', requestId: p.id, answer: { option: 'allow' } });
  assert.equal(r.status, 'rejected');
  assert.equal(r.reason, 'refused');
  assert.deepEqual(engine.answerOutOfBand(p.id, { option: 'maybe' }).ok, false);
  assert.deepEqual(engine.answerOutOfBand(p.id, { option: 'deny' }, 'terminal-user'), { ok: true, issues: [] });
  assert.deepEqual(await withTimeout(p, 5_000, 'oob'), { status: 'answered', requestId: p.id, answer: { option: 'deny' }, by: 'terminal-user', via: 'oob' });
  const ac = new AbortController();
  const q = engine.requestAttention({ session: 's-oob', kind: 'input', prompt: 'Name?', signal: ac.signal });
  ac.abort();
  assert.deepEqual(await withTimeout(q, 5_000, 'abort'), { status: 'dismissed', requestId: q.id, reason: 'aborted' });
  await w.until(() => w.events.filter((x) => x.e.type === 'attention.resolved').length === 2, 'two resolutions');
  const answered = w.events.find((x) => x.e.type === 'attention.answered')?.e;
  assert.deepEqual(answered?.data, { answer: { option: 'deny' }, by: 'terminal-user', via: 'oob' });
  const res = w.events.filter((x) => x.e.type === 'attention.resolved').map((x) => (x.e.data as { resolution: string }).resolution);
  assert.deepEqual(res, ['answered', 'dismissed']);
  w.sub.close();
  await sender.close();
  await engine.shutdown();
  await conn.close();
});

test('capture: at metadata the request is synthesized and the recorded answer keeps only structural values', async () => {
  const conn = await emitter('agent-meta', { capture: 'metadata' });
  const engine = new AttentionEngine(conn);
  const w = watch('s-meta');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  const p = engine.requestAttention({
    session: 's-meta',
    kind: 'form',
    prompt: 'Configure the secret backup of /home/alice',
    subject: 'backup-config',
    fields: FIELDS,
    capture: 'full',
  });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const values = { '1': 'nightly-bk', '2': 30, '3': true, '4': ['1', '3'], '5': 'cold-line' };
  assert.equal((await sender.respond({ session: 's-meta', requestId: p.id, answer: { values } })).status, 'accepted');
  const o = await withTimeout(p, 5_000, 'answer');
  assert.ok(o.status === 'answered');
  assert.deepEqual(o.answer.values, values, 'the agent gets the full answer');
  await w.until(() => w.types().includes('attention.resolved'), 'resolved');
  const req = w.events.find((x) => x.e.type === 'attention.requested');
  assert.ok(req);
  assert.equal(req.e.capture, undefined); // metadata (the default) is omitted on the wire
  assert.equal((req.e.data as { prompt: string }).prompt, 'agent-meta requests form: backup-config');
  assert.doesNotMatch(req.raw, /Bucket name|alice|secret|Storage class/);
  const ans = w.events.find((x) => x.e.type === 'attention.answered');
  assert.deepEqual((ans?.e.data as { answer: unknown }).answer, { values: { '2': 30, '3': true, '4': ['1', '3'] } });
  assert.doesNotMatch(ans?.raw ?? '', /nightly-bk|cold-line/);
  w.sub.close();
  await sender.close();
  await engine.shutdown();
  await conn.close();
});

test('an emitter restart keeps epoch monotonic (durable state dir, and the clock seed)', async () => {
  const dir = join(stateDir, 'epochs');
  const a = await emitter('agent-epoch', { stateDir: dir });
  const e1 = a.emit('s-epoch', 'session.started', {});
  await a.close();
  const b = await emitter('agent-epoch', { stateDir: dir });
  const e2 = b.emit('s-epoch', 'run.started', {});
  await b.close();
  assert.ok((e2.epoch ?? 0) > (e1.epoch ?? 0), `${e2.epoch} > ${e1.epoch}`);
  assert.equal(e2.seq, 0);
  const c = await emitter('agent-epoch-clock');
  const e3 = c.emit('s-epoch2', 'session.started', {});
  await c.close();
  await new Promise((r) => setTimeout(r, 5));
  const d = await emitter('agent-epoch-clock');
  const e4 = d.emit('s-epoch2', 'run.started', {});
  await d.close();
  assert.ok((e4.epoch ?? 0) > (e3.epoch ?? 0));
  // The relay orders them: the replay shows the later epoch after the earlier one.
  const seen: WireEvent[] = [];
  const sub = subscribe({ url: relay.url, token: TOKEN, filter: { session: 's-epoch' }, from: 'all', live: false }, (e) => seen.push(e));
  await withTimeout(sub.done, 10_000, 'replay');
  assert.deepEqual(
    seen.map((e) => [e.epoch ?? 0, e.seq]),
    [
      [e1.epoch ?? 0, 0],
      [e2.epoch ?? 0, 0],
    ],
  );
});

test('across a relay restart the emitter buffers, reconnects and re-claims; subscribers resume with no gap and no duplicate', async () => {
  const store = join(stateDir, 'relay.sqlite');
  let r2 = await startRelayProcess(['--store', store, '--token', TOKEN]);
  const port = new URL(r2.url).port;
  const url = r2.url;
  const conn = await EmitterConnection.connect({ url, token: TOKEN, agent: 'agent-buf', reconnect: { initialMs: 50, maxMs: 300 } });
  const sse: number[] = [];
  const ws: number[] = [];
  const opts = { url, token: TOKEN, filter: { session: 's-buf' }, reconnect: { initialMs: 50, maxMs: 300 } };
  const subSse = subscribe({ ...opts, transport: 'sse' }, (e) => {
    if (typeof e.seq === 'number') sse.push(e.seq);
  });
  const subWs = subscribe({ ...opts, transport: 'ws' }, (e) => {
    if (typeof e.seq === 'number') ws.push(e.seq);
  });
  try {
    await withTimeout(Promise.all([subSse.ready, subWs.ready]), 10_000, 'subscriptions');
    const waitFor = async (n: number) => {
      const start = Date.now();
      while ((sse.length < n || ws.length < n) && Date.now() - start < 20_000) await new Promise((r) => setTimeout(r, 20));
    };
    for (let i = 0; i < 3; i++) conn.emit('s-buf', 'progress.status', { percent: i });
    await waitFor(3);
    await r2.stop();
    // While the relay is away: emits never block, they are buffered.
    for (let i = 3; i < 6; i++) conn.emit('s-buf', 'progress.status', { percent: i }, { severity: 'notice' });
    assert.equal(conn.stats().connected, false);
    assert.equal(conn.stats().buffered, 3);
    r2 = await startRelayProcess(['--store', store, '--token', TOKEN, '--port', port]);
    await waitFor(6);
    assert.deepEqual(sse, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(ws, [0, 1, 2, 3, 4, 5]);
    assert.equal(conn.stats().reconnects, 1);
    assert.equal(conn.stats().dropped, 0);
    // The session is claimed again: a command is routed to this emitter's declaration, not no-route
    // (it accepts no commands, so the relay, or the emitter, says unsupported).
    const sender = await CommandSender.connect({ url, token: TOKEN, ackWindowMs: 5_000 });
    const r = await sender.cancel({ session: 's-buf', scope: 'session' });
    assert.ok(r.status === 'refused' || r.status === 'rejected', r.status);
    assert.equal(r.reason, 'unsupported');
    await sender.close();
  } finally {
    subSse.close();
    subWs.close();
    await conn.close();
    await r2.stop();
  }
});

test('the emitter buffer is bounded: debug/info are dropped first and counted', async () => {
  const conn = new EmitterConnection({ url: 'http://127.0.0.1:9', agent: 'agent-offline', bufferLimit: 4, reconnect: { initialMs: 1_000, maxMs: 1_000 } });
  conn.emit('s-off', 'session.started', {}, { severity: 'notice' });
  conn.emit('s-off', 'progress.status', { percent: 1 }, { severity: 'debug' });
  conn.emit('s-off', 'progress.status', { percent: 2 });
  conn.emit('s-off', 'attention.requested', { kind: 'input', prompt: 'x' }, { severity: 'notice' });
  conn.emit('s-off', 'progress.status', { percent: 3 }, { severity: 'warning' });
  conn.emit('s-off', 'progress.status', { percent: 4 }, { severity: 'warning' });
  assert.deepEqual({ buffered: conn.stats().buffered, dropped: conn.stats().dropped }, { buffered: 4, dropped: 2 });
  assert.equal(await conn.flush(50), false, 'flush is bounded and reports failure');
  await conn.close(0);
});

test('without a relay token every command is refused (unauthorized) and never reaches the emitter', async () => {
  const open = await startRelayProcess(['--memory', '--quiet']);
  try {
    const conn = await EmitterConnection.connect({ url: open.url, agent: 'agent-open', control: { accepts: ['control.attention.respond'] } });
    const engine = new AttentionEngine(conn);
    const p = engine.requestAttention({
      session: 's-open',
      kind: 'permission',
      prompt: 'Allow?',
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    });
    await conn.flush(2_000);
    const sender = await CommandSender.connect({ url: open.url, ackWindowMs: 2_000 });
    const r = await sender.respond({ session: 's-open', requestId: p.id, answer: { option: 'allow' } });
    assert.equal(r.status, 'refused');
    assert.equal(r.reason, 'unauthorized');
    assert.deepEqual(engine.pending('s-open'), [p.id]);
    assert.equal(conn.stats().commands, 0);
    await sender.close();
    await engine.shutdown();
    await conn.close();
  } finally {
    await open.stop();
  }
});

test('prebuilt data, a form declined by its option, an async validate hook (nack keeps pending, replaced answer), lifecycle capture and run', async () => {
  const conn = await emitter('agent-hooks');
  const engine = new AttentionEngine(conn, { lifecycleCapture: (type, c) => (type === 'attention.answered' ? c : 'redacted') });
  const w = watch('s-hooks');
  await withTimeout(w.sub.ready, 10_000, 'subscription');
  const data = {
    kind: 'form',
    prompt: 'agent-hooks requests input (1 fields)',
    fields: [{ id: '1', type: 'string', label: 'Bucket name', required: true }],
    options: [{ id: 'decline', label: 'Decline' }],
    respond_via: ['control'],
  };
  const seen: string[] = [];
  const p = engine.requestAttention({
    session: 's-hooks',
    kind: 'form',
    data,
    run: 'r-1',
    fields: [FIELDS[0]!],
    options: [{ id: 'decline', label: 'Decline' }],
    validate: async (answer, req) => {
      seen.push(req.id);
      await new Promise((r) => setTimeout(r, 5));
      // A typed refusal whose rule is no row of RULES is reported as validate-failed (one vocabulary).
      if (answer.values?.['1'] === 'forbidden')
        return { ok: false, issues: [{ rule: 'hook.forbidden', path: '/data/answer/values/1', message: 'not this bucket', section: 'caller' }] };
      return answer.option !== undefined ? { answer: { option: answer.option } } : [];
    },
  });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 5_000 });
  const bad = await sender.respond({ session: 's-hooks', requestId: p.id, answer: { values: { 1: 'forbidden' } } });
  assert.equal(bad.status, 'rejected');
  assert.equal(bad.reason, 'invalid');
  assert.deepEqual(
    bad.issues?.map((i) => [i.rule, i.path]),
    [['control.respond.validate-failed', '/data/answer/values/1']],
  );
  assert.deepEqual(engine.pending('s-hooks'), [p.id]);
  const unknown = await sender.respond({ session: 's-hooks', requestId: p.id, answer: { option: 'maybe' } });
  assert.equal(unknown.reason, 'invalid');
  const ok = await sender.respond({ session: 's-hooks', requestId: p.id, answer: { option: 'decline', text: 'not now' } });
  assert.equal(ok.status, 'accepted');
  assert.deepEqual(await withTimeout(p, 5_000, 'answered'), {
    status: 'answered',
    requestId: p.id,
    answer: { option: 'decline' },
    by: ok.command.agent,
    via: 'control',
    commandId: ok.command.id,
  });
  const late = await sender.respond({ session: 's-hooks', requestId: p.id, answer: { option: 'decline' } });
  assert.equal(late.reason, 'refused');
  assert.deepEqual(seen, [p.id, p.id], 'the hook ran only after the engine accepted the shape');
  await w.until(() => w.types().includes('attention.resolved'), 'resolved');
  const byType = (t: string) => w.events.find((x) => x.e.type === t)!.e;
  assert.deepEqual(byType('attention.requested').data, data, 'prebuilt data is sent as is');
  assert.deepEqual(byType('attention.answered').data, { answer: { option: 'decline' }, by: ok.command.agent, via: 'control' });
  assert.equal(byType('attention.answered').run, 'r-1');
  assert.equal(byType('attention.resolved').run, 'r-1');
  assert.equal(byType('attention.resolved').capture, 'redacted');
  w.sub.close();
  await sender.close();
  await engine.shutdown();
  await conn.close();
});
