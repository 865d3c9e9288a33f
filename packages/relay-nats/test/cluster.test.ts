// Three relays on one real nats-server (issue 16 "Must show"): ordering and dedupe under
// concurrent ingest at all three, resume across relays, cross-relay control routing and its
// refusals, the cluster-wide roster (C4 offline included), tokens valid cluster-wide.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { RelayHandle } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, sse, ulid } from '../../relay/test/support/probes.js';
import { startCluster } from './cluster.js';
import { NatsServer } from './nats-server.js';

const TOKEN = 'cluster-token-0123456789';

/** Parse a `live=0` SSE body into Events. */
function events(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

async function until(pred: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** An emitter connection (role emitter, control declared) that records the commands it receives. */
async function emitter(
  base: string,
  session: string,
  opts: { claim?: string; accepts?: string[]; agent?: string } = {},
): Promise<WsClient & { seq: number; emit: (type: string, extra?: Record<string, unknown>) => Record<string, unknown> }> {
  const ws = (await WsClient.open(base, TOKEN)) as WsClient & { seq: number; emit: (type: string, extra?: Record<string, unknown>) => Record<string, unknown> };
  ws.send({
    type: 'hello',
    versions: ['0.1'],
    role: 'emitter',
    identity: { agent: opts.agent ?? 'cluster-agent', instance: `i-${base.slice(-5)}` },
    capabilities: { control: { accepts: opts.accepts ?? ['control.attention.respond', 'control.pause'], ack_window_ms: 2000 } },
    ...(opts.claim ? { claim: opts.claim } : {}),
  });
  await ws.waitFor((f) => f['type'] === 'hello');
  ws.seq = 0;
  ws.emit = (type, extra = {}) => {
    const e = ev(type, session, ws.seq++, extra);
    ws.send(e);
    return e;
  };
  return ws;
}

async function sender(base: string): Promise<WsClient> {
  const s = await WsClient.open(base, TOKEN);
  await s.hello();
  return s;
}

async function roster(base: string): Promise<Record<string, unknown>> {
  const c = await sender(base);
  const id = `r-${ulid()}`;
  c.send({ type: 'roster', id });
  const f = await c.waitFor((x) => x['type'] === 'roster' && x['id'] === id);
  c.close();
  return f;
}

describe('three relays on one JetStream', () => {
  let ns: NatsServer;
  let relays: RelayHandle[];
  let A: string;
  let B: string;
  let C: string;
  before(async () => {
    ns = await NatsServer.start();
    relays = await startCluster(ns, { port: 0, token: TOKEN }, 3);
    [A, B, C] = relays.map((r) => r.url) as [string, string, string];
  });
  after(async () => {
    for (const r of relays) await r.close();
    await ns.dispose();
  });

  it('concurrent ingest of the same Events at all three: every relay holds each once, in seq order, and delivers them live in one cluster order', async () => {
    const sessions = [`co-a-${ulid()}`, `co-b-${ulid()}`, `co-c-${ulid()}`];
    const N = 40;
    const filter = encodeURIComponent(JSON.stringify({ session: sessions }));
    const subs = [A, B, C].map((b) => sse(b, `filter=${filter}`, { token: TOKEN }));
    for (const s of subs) assert.equal(await s.status, 200);
    await sleep(100);
    const all = sessions.map((s) => Array.from({ length: N }, (_, i) => ev(i === 0 ? 'session.started' : 'progress.status', s, i)));
    // Every Event is POSTed at every relay, in batches of 5, all requests in flight at once.
    const posts: Array<Promise<{ status: number }>> = [];
    for (const base of [A, B, C]) {
      for (const list of all) for (let i = 0; i < N; i += 5) posts.push(post(base, list.slice(i, i + 5), TOKEN));
    }
    const results = await Promise.all(posts);
    assert.deepEqual([...new Set(results.map((r) => r.status))], [202]);
    const ids = new Set(all.flat().map((e) => e['id'] as string));
    for (const s of subs) await s.waitFor(() => new Set(s.events().map((e) => e['id'])).size === ids.size, 10_000);
    // Live: the first delivery of each Event comes in the same order at every relay (the stream's).
    const firstOrder = subs.map((s) => {
      const seen = new Set<unknown>();
      return s
        .events()
        .map((e) => e['id'])
        .filter((id) => !seen.has(id) && seen.add(id));
    });
    assert.deepEqual(firstOrder[1], firstOrder[0]);
    assert.deepEqual(firstOrder[2], firstOrder[0]);
    for (const s of subs) s.close();
    // Held: each Event exactly once per session, ascending seq, at every relay (dedupe on (source, id)).
    for (const base of [A, B, C]) {
      const r = await http(`${base}/stream?live=0&filter=${filter}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      for (const s of sessions) {
        assert.deepEqual(
          events(r.body)
            .filter((e) => e['session'] === s)
            .map((e) => e['seq']),
          Array.from({ length: N }, (_, i) => i),
          `${base} ${s}`,
        );
      }
    }
    // JetStream saw the copies and refused them (Nats-Msg-Id): the stream holds 3N, not 9N.
    const dups = relays.reduce((n, r) => n + (r.stats() as unknown as Record<string, number>)['natsDuplicates']!, 0);
    const published = relays.reduce((n, r) => n + (r.stats() as unknown as Record<string, number>)['natsPublished']!, 0);
    assert.ok(dups > 0, 'copies were refused as duplicates by JetStream');
    assert.ok(published - dups <= 3 * N, `stream appends ${published - dups} <= ${3 * N}`);
  });

  it('an Event a relay already holds is not published again: its own (source, id) index dedupes beyond the JetStream duplicate window', async () => {
    const s = `late-${ulid()}`;
    const e0 = ev('session.started', s, 0);
    assert.equal((await post(A, [e0], TOKEN)).status, 202);
    await until(
      async () =>
        events(
          (await http(`${C}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: s }))}`, { headers: { authorization: `Bearer ${TOKEN}` } }))
            .body,
        ).length === 1,
      'C to hold it',
    );
    const before = (relays[2]!.stats() as unknown as Record<string, number>)['natsPublished']!;
    // At C the Event is held: it is not published again (JetStream's window may have passed).
    assert.equal((await post(C, [e0], TOKEN)).status, 202);
    assert.equal((relays[2]!.stats() as unknown as Record<string, number>)['natsPublished'], before);
  });

  it('resume across relays: a consumer of A resumes at B and at C with the same tokens, strictly after, no gap', async () => {
    const s1 = `res-1-${ulid()}`;
    const s2 = `res-2-${ulid()}`;
    assert.equal((await post(A, [ev('session.started', s1, 0), ev('progress.status', s1, 1), ev('session.started', s2, 0)], TOKEN)).status, 202);
    const filter = encodeURIComponent(JSON.stringify({ session: [s1, s2] }));
    const first = sse(
      A,
      `filter=${filter}&from=${encodeURIComponent(
        JSON.stringify([
          { session: s1, epoch: 0, seq: 0 },
          { session: s2, epoch: 0, seq: 0 },
        ]),
      )}`,
      { token: TOKEN },
    );
    await first.waitFor((m) => m.filter((x) => x.data).length === 1);
    first.close();
    const lastId = first.messages.find((m) => m.data)!.id!;
    assert.equal(lastId, `${s1}:0:1`);
    assert.equal((await post(B, [ev('progress.status', s1, 2), ev('progress.status', s2, 1)], TOKEN)).status, 202);
    // SSE at B with Last-Event-ID (one session) and WS at C with `from` (both sessions).
    const atB = sse(B, `filter=${filter}`, { token: TOKEN, headers: { 'last-event-id': lastId } });
    await atB.waitFor((m) => m.filter((x) => x.data).length >= 1);
    assert.deepEqual(
      atB
        .events()
        .filter((e) => e['session'] === s1)
        .map((e) => e['seq']),
      [2],
    );
    atB.close();
    const ws = await sender(C);
    ws.send({
      type: 'subscribe',
      id: 'r',
      filter: { session: [s1, s2] },
      from: [
        { session: s1, epoch: 0, seq: 1 },
        { session: s2, epoch: 0, seq: 0 },
      ],
    });
    await ws.waitFor((f) => f['session'] === s2 && f['seq'] === 1);
    assert.deepEqual(
      ws.events().map((e) => `${String(e['session'])}:${String(e['seq'])}`),
      [`${s1}:2`, `${s2}:1`],
    );
    ws.close();
  });

  it('a command sent at A reaches the emitter connected to B; its ack, emitted at B, reaches the sender at A', async () => {
    const s = `ctl-${ulid()}`;
    const target = await emitter(B, s);
    target.emit('session.started');
    await until(async () => ((await roster(A))['entries'] as Array<Record<string, unknown>>).some((e) => e['session'] === s), 'the claim to reach A');
    const snd = await sender(A);
    snd.send({ type: 'subscribe', id: 'acks', filter: { session: s } });
    await snd.waitFor((f) => f['type'] === 'subscribed');
    const c = cmd('control.pause', s, { data: {} });
    snd.send(c);
    const got = await target.waitFor((f) => f['id'] === c['id']);
    assert.equal(
      target.texts.find((t) => t.includes(String(c['id']))),
      JSON.stringify(c),
      'forwarded byte-identically',
    );
    assert.equal(got['type'], 'control.pause');
    const ack = target.emit('control.accepted', { cause: c['id'] });
    await snd.waitFor((f) => f['id'] === ack['id']);
    // The command's history copy is in the session at every relay (AEP-0004 §4.4).
    await until(
      async () =>
        events(
          (await http(`${C}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: s }))}`, { headers: { authorization: `Bearer ${TOKEN}` } }))
            .body,
        ).some((e) => e['id'] === c['id']),
      'the command in the history at C',
    );
    assert.ok(!snd.frames.some((f) => f['type'] === 'error'));
    snd.close();
    target.close();
  });

  it('refusals are exact across relays: no-route, ambiguous (claimants at B and C), unsupported', async () => {
    const snd = await sender(A);
    const none = cmd('control.pause', `nobody-${ulid()}`, { data: {} });
    snd.send(none);
    assert.equal((await snd.waitFor((f) => f['cause'] === none['id']))['code'], 'no-route');

    const s = `amb-${ulid()}`;
    const t1 = await emitter(B, s);
    t1.emit('session.started');
    const t2 = await emitter(C, s);
    t2.emit('progress.status');
    await until(
      async () => ((await roster(A))['entries'] as Array<Record<string, unknown>>).filter((e) => e['session'] === s).length === 2,
      'both claims at A',
    );
    const amb = cmd('control.pause', s, { data: {} });
    snd.send(amb);
    assert.equal((await snd.waitFor((f) => f['cause'] === amb['id']))['code'], 'ambiguous');
    await sleep(200);
    assert.ok(![...t1.frames, ...t2.frames].some((f) => f['id'] === amb['id']), 'delivered to none');
    t2.close();
    await until(async () => ((await roster(A))['entries'] as Array<Record<string, unknown>>).filter((e) => e['session'] === s).length === 1, 'one claim left');
    const uns = cmd('control.resume', s, { data: {} });
    snd.send(uns);
    assert.equal((await snd.waitFor((f) => f['cause'] === uns['id']))['code'], 'unsupported');
    const ok = cmd('control.pause', s, { data: {} });
    snd.send(ok);
    await t1.waitFor((f) => f['id'] === ok['id']);
    assert.ok(!snd.frames.some((f) => f['cause'] === ok['id']));
    snd.close();
    t1.close();
  });

  it('an answer goes to the asker wherever it is (C3): another claimant of the session gets nothing; the asker back at another relay gets it', async () => {
    const s = `ask-${ulid()}`;
    const claim = createHash('sha256').update(ulid()).digest('base64url').slice(0, 30);
    const asker = await emitter(B, s, { claim });
    asker.emit('session.started');
    const req = asker.emit('attention.requested', { data: { kind: 'question', prompt: 'Which one?' } });
    await until(
      async () =>
        events(
          (await http(`${A}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: s }))}`, { headers: { authorization: `Bearer ${TOKEN}` } }))
            .body,
        ).some((e) => e['id'] === req['id']),
      'the request at A',
    );
    asker.close();
    // The asker is gone: its pending request is listed offline in the roster of every relay (C4).
    await until(async () => ((await roster(C))['offline'] as Array<Record<string, unknown>>).some((o) => o['request'] === req['id']), 'offline at C');
    const intruder = await emitter(C, s);
    intruder.emit('progress.status');
    await until(async () => ((await roster(A))['entries'] as Array<Record<string, unknown>>).some((e) => e['session'] === s), 'the intruder claim at A');
    const snd = await sender(A);
    const ans = cmd('control.attention.respond', s, { subject: req['id'], cause: req['id'], data: { answer: { text: 'x' } }, capture: 'redacted' });
    snd.send(ans);
    const refusal = await snd.waitFor((f) => f['cause'] === ans['id']);
    assert.equal(refusal['code'], 'no-route');
    assert.match(String(refusal['detail']), /offline/);
    assert.ok(!intruder.frames.some((f) => f['id'] === ans['id']));
    const back = await emitter(C, s, { claim });
    await until(async () => !((await roster(A))['offline'] as Array<Record<string, unknown>>).some((o) => o['request'] === req['id']), 'no longer offline');
    const again = cmd('control.attention.respond', s, { subject: req['id'], cause: req['id'], data: { answer: { text: 'x' } }, capture: 'redacted' });
    snd.send(again);
    await back.waitFor((f) => f['id'] === again['id']);
    assert.ok(!intruder.frames.some((f) => f['id'] === again['id']));
    snd.close();
    intruder.close();
    back.close();
  });

  it('the roster is cluster-wide: claimants at A, B and C are listed at each relay with their hello identity and control', async () => {
    const s = [`ro-a-${ulid()}`, `ro-b-${ulid()}`, `ro-c-${ulid()}`];
    const conns = await Promise.all(
      [A, B, C].map(async (base, i) => {
        const e = await emitter(base, s[i]!, { agent: `agent-${i}`, accepts: ['control.pause'] });
        e.emit('session.started');
        return e;
      }),
    );
    for (const base of [A, B, C]) {
      await until(async () => {
        const entries = (await roster(base))['entries'] as Array<Record<string, unknown>>;
        return s.every((x, i) =>
          entries.some(
            (e) =>
              e['session'] === x &&
              e['agent'] === `agent-${i}` &&
              JSON.stringify(e['control']) === JSON.stringify({ accepts: ['control.pause'], ack_window_ms: 2000 }),
          ),
        );
      }, `all three at ${base}`);
    }
    // The claim digest never shows (contract C3).
    const r = JSON.stringify(await roster(A));
    assert.ok(!/claim/.test(r));
    for (const c of conns) c.close();
    await until(
      async () => !((await roster(B))['entries'] as Array<Record<string, unknown>>).some((e) => s.includes(e['session'] as string)),
      'claims gone when the connections close',
    );
  });

  it('capture ceilings apply at every relay: posted at A, a metadata subscriber at B and a read:metadata token at C never see the prompt', async () => {
    const s = `cap-${ulid()}`;
    const filter = encodeURIComponent(JSON.stringify({ session: s }));
    const atB = sse(B, `filter=${filter}&capture=metadata`, { token: TOKEN });
    const made = await http(`${A}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['read:metadata'] }),
    });
    const reader = (made.json as { token: string }).token;
    await until(async () => (await http(`${C}/stream?live=0`, { headers: { authorization: `Bearer ${reader}` } })).status === 200, 'the reader token at C');
    const atC = sse(C, `filter=${filter}`, { token: reader });
    assert.equal(await atB.status, 200);
    assert.equal(await atC.status, 200);
    await sleep(100);
    assert.equal(
      (await post(A, ev('run.started', s, 0, { capture: 'redacted', run: 'r1', data: { trigger: 'user', prompt: 'CLUSTER-CANARY not at metadata' } }), TOKEN))
        .status,
      202,
    );
    for (const sub of [atB, atC]) {
      await sub.waitFor(() => sub.events().length === 1);
      const e = sub.events()[0]!;
      assert.equal(e['capture'], 'metadata');
      assert.equal((e['data'] as Record<string, unknown>)['trigger'], 'user');
      assert.ok(!sub.raw().includes('CLUSTER-CANARY'));
      sub.close();
    }
  });

  it('a scoped token created at A works at B and C; revoked at C it stops working at A', async () => {
    const made = await http(`${A}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'reader', scopes: ['read'] }),
    });
    assert.equal(made.status, 201);
    const { id, token } = made.json as { id: string; token: string };
    await until(async () => (await http(`${B}/stream?live=0`, { headers: { authorization: `Bearer ${token}` } })).status === 200, 'the token at B');
    assert.equal((await http(`${C}/stream?live=0`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    // Scopes hold at the other relay too: read does not allow emit.
    assert.equal((await post(B, [ev('session.started', `tok-${ulid()}`, 0)], token)).status, 403);
    assert.equal((await http(`${C}/tokens/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    await until(async () => (await http(`${A}/stream?live=0`, { headers: { authorization: `Bearer ${token}` } })).status === 401, 'revoked at A');
  });
});
