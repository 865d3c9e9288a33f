// Answers go to their asker (issue 12 item 3; contracts C3 and C4): a control.attention.respond
// naming a request the relay holds reaches only a live connection presenting the claim that
// raised it; pending requests whose asker is gone are listed `offline` in the roster; bindings
// survive a restart. The claim never leaves the relay.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, cmd, http, post, sleep, ulid } from './helpers.js';

const TOKEN = 'routing-token-0123456789';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const claim = () => randomBytes(24).toString('base64url');

/** An emitter connection: hello (with `claim` when given), one session, control accepted. */
class Emitter {
  seq = 0;
  constructor(
    readonly ws: WsClient,
    readonly session: string,
  ) {}
  static async connect(relay: RelayHandle, session: string, opts: { claim?: string; agent?: string } = {}): Promise<Emitter> {
    const ws = await WsClient.open(relay.url, TOKEN);
    ws.send({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: opts.agent ?? 'asker', instance: 'i' },
      capabilities: { control: { accepts: ['control.attention.respond'], ack_window_ms: 2000 } },
      ...(opts.claim ? { claim: opts.claim } : {}),
    });
    await ws.waitFor((f) => f['type'] === 'hello');
    return new Emitter(ws, session);
  }
  emit(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const e = {
      aep: '0.1',
      id: ulid(),
      type,
      time: new Date().toISOString(),
      source: `aep://host/agent/asker/session/${this.session}`,
      agent: 'asker',
      session: this.session,
      seq: this.seq++,
      ...extra,
    };
    this.ws.send(e);
    return e;
  }
  request(extra: Record<string, unknown> = {}): string {
    const e = this.emit('attention.requested', {
      subject: 'pw',
      capture: 'redacted',
      severity: 'notice',
      data: { kind: 'form', prompt: 'Password?', fields: [{ id: 'pw', type: 'string', label: 'Password' }], respond_via: ['control'], ...extra },
    });
    return e['id'] as string;
  }
  received(id: string): boolean {
    return this.ws.frames.some((f) => f['id'] === id);
  }
}

async function sender(relay: RelayHandle): Promise<WsClient> {
  const s = await WsClient.open(relay.url, TOKEN);
  await s.hello();
  return s;
}

async function roster(s: WsClient): Promise<Record<string, unknown>> {
  const id = `r-${ulid()}`;
  s.send({ type: 'roster', id });
  return s.waitFor((f) => f['type'] === 'roster' && f['id'] === id);
}

async function settle(relay: RelayHandle, session: string): Promise<void> {
  // Wait until the relay holds what the emitters sent (WebSocket ingest has no acknowledgement).
  for (let i = 0; i < 100; i++) {
    const r = await http(`${relay.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session }))}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    if (r.body.includes('attention.requested')) return;
    await sleep(10);
  }
}

describe('answers go to their asker', () => {
  it('a new claimant of the session gets nothing; the sender gets no-route; the asker back with its claim gets the answer', async () => {
    const logs: string[] = [];
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN, log: (l) => logs.push(l) });
    const S = `route-${ulid()}`;
    const K = claim();
    const asker = await Emitter.connect(relay, S, { claim: K });
    asker.emit('session.started');
    const R = asker.request();
    await settle(relay, S);
    const watcher = await sender(relay);
    asker.ws.close();
    await sleep(50);
    // The request is listed offline: pending, asker gone.
    const ro = await roster(watcher);
    const off = (ro['offline'] as Array<Record<string, unknown>>).find((o) => o['request'] === R);
    assert.ok(off, JSON.stringify(ro));
    assert.deepEqual(Object.keys(off), ['request', 'session', 'agent', 'source', 'since']);
    assert.equal(off['session'], S);
    assert.equal(off['agent'], 'asker');
    assert.ok(!Number.isNaN(Date.parse(String(off['since']))));
    // Another token holder says hello as that session and claims it.
    const intruder = await Emitter.connect(relay, S, { claim: claim(), agent: 'asker' });
    intruder.emit('session.started');
    await sleep(50);
    const s = await sender(relay);
    const answer = cmd('control.attention.respond', S, { subject: R, cause: R, capture: 'redacted', data: { answer: { values: { pw: 'typed-secret' } } } });
    s.send(answer);
    const err = await s.waitFor((f) => f['type'] === 'error' && f['cause'] === answer['id']);
    assert.equal(err['code'], 'no-route');
    assert.equal(err['detail'], `the emitter that raised request ${R} is offline`);
    await sleep(100);
    assert.equal(intruder.received(answer['id'] as string), false, 'the intruder never receives the answer');
    assert.ok(!intruder.ws.texts.join('\n').includes('typed-secret'));
    // The original emitter reconnects presenting its claim: no longer offline, and it gets the retry.
    const back = await Emitter.connect(relay, S, { claim: K });
    const ro2 = await roster(watcher);
    assert.equal((ro2['offline'] as Array<Record<string, unknown>>).filter((o) => o['request'] === R).length, 0);
    s.send(answer);
    await back.ws.waitFor((f) => f['id'] === answer['id']);
    assert.equal(
      back.ws.texts.find((t) => t.includes(String(answer['id']))),
      JSON.stringify(answer),
    );
    await sleep(100);
    assert.equal(intruder.received(answer['id'] as string), false);
    // The claim never leaves the relay: not in frames, roster, healthz or logs.
    const h = await http(`${relay.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
    for (const text of [JSON.stringify(ro), JSON.stringify(ro2), ...s.texts, ...intruder.ws.texts, ...back.ws.texts, ...watcher.texts, h.body, ...logs])
      assert.ok(!text.includes(K), 'claim leaked');
    // Other commands still follow the session claim (the intruder's now: it is the only claimant of S... and back is not).
    for (const c of [watcher, s, intruder.ws, back.ws]) c.close();
    await relay.close();
  });

  it('the newest of several connections presenting the claim receives; an unbound subject is routed by session', async () => {
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
    const S = `newest-${ulid()}`;
    const K = claim();
    const a = await Emitter.connect(relay, S, { claim: K });
    a.emit('session.started');
    const R = a.request();
    await settle(relay, S);
    const b = await Emitter.connect(relay, S, { claim: K });
    const s = await sender(relay);
    const answer = cmd('control.attention.respond', S, { subject: R, data: { answer: { option: 'x' } } });
    s.send(answer);
    await b.ws.waitFor((f) => f['id'] === answer['id']);
    await sleep(50);
    assert.equal(a.received(answer['id'] as string), false);
    // A subject the relay holds no binding for (the live checker's random one): session claim (a only).
    const free = cmd('control.attention.respond', S, { subject: ulid(), data: { answer: { option: 'x' } } });
    s.send(free);
    await a.ws.waitFor((f) => f['id'] === free['id']);
    a.ws.close();
    b.ws.close();
    s.close();
    await relay.close();
  });

  it('a request POSTed over HTTP has no connection to bind to: its answer follows the session claim; never listed offline', async () => {
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
    const S = `http-${ulid()}`;
    const R = ulid();
    const req = {
      aep: '0.1',
      id: R,
      type: 'attention.requested',
      time: new Date().toISOString(),
      source: 'aep://h/agent/x',
      agent: 'x',
      session: S,
      seq: 0,
      subject: 'q',
      data: { kind: 'question', prompt: 'x' },
    };
    assert.equal((await post(relay.url, req, TOKEN)).status, 202);
    const s = await sender(relay);
    const ro = await roster(s);
    assert.equal(
      (ro['offline'] as Array<Record<string, unknown>>).filter((o) => o['request'] === R).length,
      0,
      'not offline: the relay cannot know where its emitter listens',
    );
    const answer = cmd('control.attention.respond', S, { subject: R, data: { answer: { option: 'x' } } });
    s.send(answer);
    assert.equal((await s.waitFor((f) => f['cause'] === answer['id']))['code'], 'no-route', 'no session claimant yet');
    const claimant = await Emitter.connect(relay, S);
    claimant.emit('progress.status', { data: { percent: 1 } });
    await sleep(50);
    const again = cmd('control.attention.respond', S, { subject: R, data: { answer: { option: 'x' } } });
    s.send(again);
    await claimant.ws.waitFor((f) => f['id'] === again['id']);
    claimant.ws.close();
    s.close();
    await relay.close();
  });

  it('an entry leaves the offline list when the request resolves, when expires_at has passed, and after --offline-ttl', async () => {
    // Without timing: expiry is pinned by a past expires_at, the ttl by a relay whose ttl is 0.
    const offlineOf = async (ttl: number | undefined): Promise<{ ids: unknown[]; want: Record<string, string> }> => {
      const relay = await startRelay({ port: 0, storePath: null, token: TOKEN, ...(ttl !== undefined ? { offlineTtlMs: ttl } : {}) });
      const S = `off-${ulid()}`;
      const e = await Emitter.connect(relay, S, { claim: claim() });
      e.emit('session.started');
      const resolved = e.request();
      const expired = e.request({ expires_at: new Date(Date.now() - 1000).toISOString() });
      const future = e.request({ expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      const kept = e.request();
      e.emit('attention.resolved', { subject: resolved, data: { resolution: 'dismissed' } });
      e.emit('attention.timeout', { subject: kept, data: { after_ms: 1 } });
      const plain = e.request();
      await settle(relay, S);
      await sleep(50);
      const s = await sender(relay);
      const before = ((await roster(s))['offline'] as Array<Record<string, unknown>>).filter((o) => o['session'] === S);
      assert.deepEqual(before, [], 'nothing is offline while the asker is connected');
      e.ws.close();
      await sleep(50);
      const ids = ((await roster(s))['offline'] as Array<Record<string, unknown>>).filter((o) => o['session'] === S).map((o) => o['request']);
      s.close();
      await relay.close();
      return { ids, want: { resolved, expired, future, kept, plain } };
    };
    const normal = await offlineOf(undefined);
    assert.deepEqual(normal.ids, [normal.want['future'], normal.want['plain']], 'resolved, timed out and expired requests are not listed');
    const ttl0 = await offlineOf(0);
    assert.deepEqual(ttl0.ids, [], 'offline for longer than --offline-ttl');
  });

  it('bindings survive a restart: after it, an intruder gets nothing and the asker presenting its claim gets the answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aep-routing-'));
    dirs.push(dir);
    const storePath = join(dir, 'relay.sqlite');
    const S = `restart-${ulid()}`;
    const K = claim();
    let relay = await startRelay({ port: 0, storePath, token: TOKEN });
    const a = await Emitter.connect(relay, S, { claim: K });
    a.emit('session.started');
    const R = a.request();
    await settle(relay, S);
    a.ws.close();
    await sleep(50);
    await relay.close();
    relay = await startRelay({ port: 0, storePath, token: TOKEN });
    const s = await sender(relay);
    const ro = await roster(s);
    assert.ok(
      (ro['offline'] as Array<Record<string, unknown>>).some((o) => o['request'] === R),
      'still pending, asker offline',
    );
    const intruder = await Emitter.connect(relay, S);
    intruder.emit('session.started');
    await sleep(50);
    const answer = cmd('control.attention.respond', S, { subject: R, data: { answer: { values: { pw: 'x' } } }, capture: 'redacted' });
    s.send(answer);
    assert.equal((await s.waitFor((f) => f['cause'] === answer['id']))['code'], 'no-route');
    const back = await Emitter.connect(relay, S, { claim: K });
    s.send(answer);
    await back.ws.waitFor((f) => f['id'] === answer['id']);
    assert.equal(intruder.received(answer['id'] as string), false);
    s.close();
    intruder.ws.close();
    back.ws.close();
    await relay.close();
  });

  it('a malformed claim counts as none: presenting it again proves nothing', async () => {
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
    const S = `bad-claim-${ulid()}`;
    const a = await Emitter.connect(relay, S, { claim: 'short' });
    a.emit('session.started');
    const R = a.request();
    await settle(relay, S);
    a.ws.close();
    const again = await Emitter.connect(relay, S, { claim: 'short' });
    again.emit('progress.status', { data: { percent: 2 } });
    await sleep(50);
    const s = await sender(relay);
    const answer = cmd('control.attention.respond', S, { subject: R, data: { answer: { option: 'x' } } });
    s.send(answer);
    assert.equal((await s.waitFor((f) => f['cause'] === answer['id']))['code'], 'no-route');
    assert.equal(again.received(answer['id'] as string), false);
    s.close();
    again.ws.close();
    await relay.close();
  });
});
