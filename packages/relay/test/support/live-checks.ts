// One test per probe of the public live checker (AEP-0003 §10), against a real relay on port 0.
// A suite, so the same probes run against the SQLite relay (live-checks.test.ts) and against a
// cluster of relays on NATS JetStream (packages/relay-nats/test/live-checks.test.ts), where the
// resume probes read from a second relay of the cluster (issue 16).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { RelayHandle, RelayOptions } from '@aep/relay';
import { WsClient, auditEnvelope, cmd, dig, ev, http, post, sleep, sse, ulid } from '../helpers.js';

const TOKEN = 'test-token-0123456789';

/** A control-capable target (AEP-0004 §4): dedupe, one recorded ack per command, outcomes. */
class Target {
  seq = 0;
  readonly acks = new Map<string, string>();
  readonly received: Array<Record<string, unknown>> = [];
  constructor(
    readonly ws: WsClient,
    readonly session: string,
    readonly agent = 'test-target',
  ) {}
  static async start(base: string, token: string | undefined, session: string, accepts: string[]): Promise<Target> {
    const ws = await WsClient.open(base, token);
    const t = new Target(ws, session);
    ws.send({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: t.agent, instance: 'test/1' },
      capabilities: { emits: ['session', 'run', 'control'], control: { accepts, ack_window_ms: 2000 } },
    });
    await ws.waitFor((f) => f['type'] === 'hello');
    ws.ws.on('message', (d: Buffer) => t.onFrame(JSON.parse(d.toString('utf8')) as Record<string, unknown>, d.toString('utf8')));
    t.emit('session.started', {});
    t.emit('run.started', { data: { trigger: 'user' }, run: 'r-live' });
    return t;
  }
  event(type: string, extra: Record<string, unknown>): Record<string, unknown> {
    return {
      aep: '0.1',
      id: ulid(),
      type,
      time: new Date().toISOString(),
      source: `aep://test/agent/${this.agent}/session/${this.session}`,
      agent: this.agent,
      session: this.session,
      seq: this.seq++,
      epoch: 0,
      ...extra,
    };
  }
  emit(type: string, extra: Record<string, unknown>): string {
    const text = JSON.stringify(this.event(type, extra));
    this.ws.send(text);
    return text;
  }
  onFrame(f: Record<string, unknown>, _text: string): void {
    if (f['type'] === 'ping') {
      this.ws.send({ type: 'pong', t: f['t'] });
      return;
    }
    if (!('aep' in f) || typeof f['type'] !== 'string' || !/^(control\.|x\.[^.]+\.control\.)/.test(f['type'])) return;
    this.received.push(f);
    const key = `${String(f['source'])}\u0000${String(f['id'])}`;
    const recorded = this.acks.get(key);
    if (recorded) {
      this.ws.send(recorded);
      return;
    } // byte-identical re-ack (AEP-0004 §3)
    const type = f['type'];
    let ack: string;
    if (type === 'control.attention.respond') {
      ack = this.emit('control.rejected', { cause: f['id'], data: { reason: 'invalid' } }); // unknown request
    } else if (type === 'control.cancel') {
      ack = this.emit('control.accepted', { cause: f['id'] });
      this.emit('run.cancelled', { cause: f['id'], run: f['run'], data: {} });
    } else {
      ack = this.emit('control.rejected', { cause: f['id'], data: { reason: 'unsupported' } });
    }
    this.acks.set(key, ack);
  }
}

/**
 * Starts `n` relays with these options (relays of one cluster when n > 1, or fewer when the
 * implementation has no cluster: the probes then use the first one for everything).
 */
export type StartRelays = (opts: RelayOptions, n: number) => Promise<RelayHandle[]>;

/** Every live checker probe against relays made by `startRelays`. */
export function liveCheckSuite(label: string, startRelays: StartRelays): void {
  const startRelay = async (opts: RelayOptions): Promise<RelayHandle> => (await startRelays(opts, 1))[0]!;

  describe(`live checker probes, dev posture (no token)${label}`, () => {
    let relay: RelayHandle;
    let other: RelayHandle | undefined;
    let base: string;
    /** Where resume probes read: a second relay of the cluster when there is one. */
    let resumeBase: string;
    let S = '';
    let posted: Array<Record<string, unknown>> = [];
    before(async () => {
      [relay, other] = await startRelays({ port: 0, storePath: null }, 2);
      base = relay.url;
      resumeBase = other?.url ?? base;
    });
    after(async () => {
      await relay.close();
      await other?.close();
    });

    it('discovery: GET /events and /.well-known/aep serve the document', async () => {
      const r = await http(`${base}/events`);
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      const d = r.json;
      const aep = dig(d, 'aep');
      assert.ok(Array.isArray(aep) && aep.includes('0.1'));
      assert.equal(dig(d, 'endpoints', 'events'), '/events');
      assert.equal(dig(d, 'endpoints', 'stream'), '/stream');
      assert.equal(dig(d, 'endpoints', 'socket'), '/socket');
      assert.deepEqual(dig(d, 'capabilities', 'replay'), { buffer: 10000, all: true });
      assert.deepEqual(dig(d, 'capabilities', 'roster'), {});
      assert.deepEqual(dig(d, 'capabilities', 'control'), { accepts: [] });
      const w = await http(`${base}/.well-known/aep`);
      assert.deepEqual(w.json, r.json);
    });

    it('version-gate: aep-version 9.9 gets 426 with versions', async () => {
      const r = await post(base, ev('session.started', 's-vg', 0), undefined, '9.9');
      assert.equal(r.status, 426);
      assert.deepEqual((r.json as Record<string, unknown>)['versions'], ['0.1']);
    });

    it('reject-invalid: an Event without id gets 400 invalid-event', async () => {
      const bad = { aep: '0.1', type: 'session.started', time: new Date().toISOString(), source: 'aep://x', agent: 'aep-live-check', session: 's', seq: 0 };
      const r = await post(base, bad);
      assert.equal(r.status, 400);
      assert.equal((r.json as Record<string, unknown>)['error'], 'invalid-event');
    });

    it('ingest-fanout: a subscriber live within 150 ms gets the 3 Events in order', async () => {
      S = `live-${ulid().toLowerCase()}`;
      const sub = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
      assert.equal(await sub.status, 200);
      await sleep(150);
      const e0 = ev('session.started', S, 0, { data: { client: { name: 'aep-live-check' } } });
      const e1 = ev('tool.completed', S, 1, { cause: e0['id'], data: { tool: { name: 'demo' }, status: 'success' } });
      const e2 = ev('session.ended', S, 2, { data: { reason: 'normal' } });
      posted = [e0, e1, e2];
      const r = await post(base, posted);
      assert.equal(r.status, 202);
      await sub.waitFor((m) => m.filter((x) => x.data).length >= 3);
      await sleep(100);
      const got = sub.events();
      sub.close();
      assert.deepEqual(
        got.map((e) => e['id']),
        posted.map((e) => e['id']),
      );
      for (const e of got) assert.deepEqual(auditEnvelope(e), []);
      assert.deepEqual(
        sub.messages.filter((m) => m.id).map((m) => m.id),
        [`${S}:0:0`, `${S}:0:1`, `${S}:0:2`],
      );
    });

    it('resume: from seq 0 delivers exactly seq 1 and 2', async () => {
      const from = JSON.stringify([{ session: S, epoch: 0, seq: 0 }]);
      const sub = sse(resumeBase, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}&from=${encodeURIComponent(from)}`);
      await sub.waitFor((m) => m.filter((x) => x.data).length >= 2);
      await sleep(300);
      sub.close();
      assert.deepEqual(
        sub.events().map((e) => e['id']),
        [posted[1]!['id'], posted[2]!['id']],
      );
    });

    it('resume: Last-Event-ID resumes one session strictly after', async () => {
      const sub = sse(resumeBase, `live=0`, { headers: { 'last-event-id': `${S}:0:1` } });
      await sub.ended;
      assert.deepEqual(
        sub.events().map((e) => e['id']),
        [posted[2]!['id']],
      );
    });

    it('capture-downlevel: redacted run.started under capture=metadata loses the prompt', async () => {
      const s = `live-cd-${ulid().toLowerCase()}`;
      const sub = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: s }))}&capture=metadata`);
      await sub.status;
      await sleep(150);
      const r = await post(
        base,
        ev('run.started', s, 0, { capture: 'redacted', run: 'r1', data: { trigger: 'user', prompt: 'LIVE-CHECK-CANARY do not deliver at metadata' } }),
      );
      assert.equal(r.status, 202);
      await sub.waitFor((m) => m.some((x) => x.data));
      sub.close();
      const first = sub.messages.find((m) => m.data)!;
      assert.ok(!first.data!.includes('LIVE-CHECK-CANARY'));
      const e: unknown = JSON.parse(first.data!);
      assert.equal(dig(e, 'capture'), 'metadata');
      assert.equal(dig(e, 'data', 'prompt'), undefined);
      assert.equal(dig(e, 'data', 'trigger'), 'user');
    });

    it('hello-ws: Event first -> hello-required; 9.9 -> version-unsupported with versions; bare hello -> ["0.1"]', async () => {
      const a = await WsClient.open(base);
      a.send(ev('session.started', 's-h', 0));
      const ea = await a.waitFor((f) => f['type'] === 'error');
      assert.match(String(ea['code']), /hello/);
      a.close();
      const b = await WsClient.open(base);
      b.send({ type: 'hello', versions: ['9.9'], role: 'consumer' });
      const eb = await b.waitFor((f) => f['type'] === 'error');
      assert.match(String(eb['code']), /version/);
      assert.deepEqual(eb['versions'], ['0.1']);
      b.close();
      const c = await WsClient.open(base);
      c.send({ type: 'hello', versions: ['0.1'], role: 'consumer' });
      const hc = await c.waitFor((f) => f['type'] === 'hello');
      assert.deepEqual(hc['versions'], ['0.1']);
      c.close();
    });

    it('subscribe-limits: 1024 from positions and a malformed from answer in-band; follow-ups subscribe', async () => {
      const codes = ['invalid-filter', 'unknown-dialect', 'unauthorized', 'limit-exceeded'];
      const a = await WsClient.open(base);
      const positions = Array.from({ length: 1024 }, (_, i) => ({ session: `live-sub-cap-${i}`, epoch: 0, seq: 0 }));
      a.send({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: 'aep-live-check', instance: 'live-check' }, capabilities: {} });
      a.send({ type: 'subscribe', id: 'sub-cap', filter: { type: ['agent.*'] }, from: positions });
      a.send({ type: 'subscribe', id: 'sub-cap-follow', filter: { type: ['agent.*'] } });
      const r1 = await a.waitFor((f) => f['id'] === 'sub-cap');
      assert.ok(r1['type'] === 'subscribed' || (r1['type'] === 'error' && codes.includes(String(r1['code']))), JSON.stringify(r1));
      assert.equal((await a.waitFor((f) => f['id'] === 'sub-cap-follow'))['type'], 'subscribed');
      a.close();
      const b = await WsClient.open(base);
      b.send({ type: 'hello', versions: ['0.1'], role: 'consumer' });
      b.send({ type: 'subscribe', id: 'sub-malformed', filter: { type: ['agent.*'] }, from: {} });
      b.send({ type: 'subscribe', id: 'sub-malformed-follow', filter: { type: ['agent.*'] } });
      const r2 = await b.waitFor((f) => f['id'] === 'sub-malformed');
      assert.equal(r2['type'], 'error');
      assert.equal(r2['code'], 'invalid-filter');
      assert.equal((await b.waitFor((f) => f['id'] === 'sub-malformed-follow'))['type'], 'subscribed');
      assert.equal(b.closed, false);
      b.close();
    });

    it('ignore-unknown: an unknown frame gets no reply and the connection keeps working', async () => {
      const c = await WsClient.open(base);
      const id = `sub-ignore-${ulid()}`;
      c.send({ type: 'hello', versions: ['0.1'], role: 'consumer', capabilities: { futurecap: { enabled: true } } });
      c.send({ type: 'zigzag', note: 'unknown frame' });
      c.send({ type: 'subscribe', id, filter: { type: ['agent.*'] } });
      await c.waitFor((f) => f['type'] === 'hello');
      await c.waitFor((f) => f['type'] === 'subscribed' && f['id'] === id);
      assert.equal(c.frames.filter((f) => f['type'] === 'error').length, 0);
      c.close();
    });

    it('replay-all: from=all&live=0 dumps every held session and ends, with no marker', async () => {
      const s1 = `live-ra1-${ulid().toLowerCase()}`;
      const s2 = `live-ra2-${ulid().toLowerCase()}`;
      assert.equal(
        (
          await post(base, [
            ev('session.started', s1, 0),
            ev('tool.completed', s1, 1, { data: { tool: { name: 'x' }, status: 'success' } }),
            ev('session.started', s2, 0),
          ])
        ).status,
        202,
      );
      const r = await http(`${base}/stream?live=0&from=all`);
      assert.equal(r.status, 200);
      const lines = r.body
        .split('\n')
        .map((l) => /^data: (.+)$/.exec(l)?.[1])
        .filter((x): x is string => x !== undefined)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        lines.filter((e) => e['session'] === s1).map((e) => e['seq']),
        [0, 1],
      );
      assert.deepEqual(
        lines.filter((e) => e['session'] === s2).map((e) => e['seq']),
        [0],
      );
      assert.ok(!r.body.includes('replay-exhausted'));
    });

    it('roster: a claimant appears with its hello identity and control; an emitter asking is refused in-band', async () => {
      const claimant = await WsClient.open(base);
      const session = `live-roster-${ulid().toLowerCase()}`;
      claimant.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'aep-live-check-roster', instance: 'live-check' },
        capabilities: { emits: ['session'], control: { accepts: ['control.attention.respond'], ack_window_ms: 10000 } },
      });
      await claimant.waitFor((f) => f['type'] === 'hello');
      claimant.send(ev('session.started', session, 0));
      await sleep(300);
      const asker = await WsClient.open(base);
      const rid = `roster-${ulid()}`;
      asker.send({ type: 'hello', versions: ['0.1'], role: 'consumer' });
      asker.send({ type: 'roster', id: rid });
      const ro = await asker.waitFor((f) => f['type'] === 'roster' && f['id'] === rid);
      const entry = (ro['entries'] as Array<Record<string, unknown>>).find((e) => e['session'] === session);
      assert.ok(entry, JSON.stringify(ro));
      assert.equal(entry['agent'], 'aep-live-check-roster');
      assert.equal(entry['instance'], 'live-check');
      assert.deepEqual(entry['control'], { accepts: ['control.attention.respond'], ack_window_ms: 10000 });
      const deny = await WsClient.open(base);
      const did = `roster-deny-${ulid()}`;
      deny.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'aep-live-check-roster-b' } });
      deny.send({ type: 'roster', id: did });
      const de = await deny.waitFor((f) => f['id'] === did);
      assert.equal(de['type'], 'error');
      assert.equal(de['code'], 'unauthorized');
      await sleep(100);
      assert.equal(deny.closed, false);
      // The claim ends with the connection.
      claimant.close();
      await sleep(100);
      asker.send({ type: 'roster', id: `${rid}-2` });
      const ro2 = await asker.waitFor((f) => f['id'] === `${rid}-2`);
      assert.equal((ro2['entries'] as Array<Record<string, unknown>>).filter((e) => e['session'] === session).length, 0);
      asker.close();
      deny.close();
    });

    it('control-auth-gate: without a token a command never reaches the target and gets unauthorized', async () => {
      const session = `live-auth-${ulid().toLowerCase()}`;
      const target = await WsClient.open(base);
      target.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'aep-live-check-target' },
        capabilities: { control: { accepts: ['control.attention.respond'], ack_window_ms: 10000 } },
      });
      await target.waitFor((f) => f['type'] === 'hello');
      target.send(ev('session.started', session, 0));
      const watch = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session }))}`);
      await watch.status;
      const sender = await WsClient.open(base);
      await sender.hello();
      await sleep(50);
      const c = cmd('control.attention.respond', session, { subject: ulid(), data: { answer: { option: 'live-check-probe' } } });
      sender.send(c);
      const err = await sender.waitFor((f) => f['type'] === 'error' && f['cause'] === c['id']);
      assert.equal(err['code'], 'unauthorized');
      await sleep(500);
      assert.equal(target.frames.filter((f) => String(f['type']).startsWith('control.')).length, 0);
      assert.equal(watch.events().filter((e) => e['cause'] === c['id']).length, 0);
      assert.equal(watch.events().filter((e) => e['id'] === c['id']).length, 0);
      watch.close();
      target.close();
      sender.close();
    });

    it('control checks without a token: POSTing a command is refused 403 and nothing is stored', async () => {
      const session = `live-post-cmd-${ulid().toLowerCase()}`;
      const r = await post(base, cmd('control.pause', session));
      assert.equal(r.status, 403);
      assert.equal((r.json as Record<string, unknown>)['error'], 'unauthorized');
      const all = await http(`${base}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session }))}`);
      assert.ok(!all.body.includes('data:'));
    });
  });

  describe(`live checker probes, authenticated posture with a control-capable target${label}`, () => {
    let relay: RelayHandle;
    let base: string;
    let target: Target;
    const S = `ctl-${ulid().toLowerCase()}`;
    before(async () => {
      relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
      base = relay.url;
      target = await Target.start(base, TOKEN, S, ['control.attention.respond', 'control.cancel']);
      await sleep(50);
    });
    after(async () => {
      target.ws.close();
      await relay.close();
    });

    async function sender(): Promise<WsClient> {
      const s = await WsClient.open(base, TOKEN);
      await s.hello();
      return s;
    }

    it('auth gate: every endpoint needs the token; header and access_token both work', async () => {
      assert.equal((await http(`${base}/events`)).status, 401);
      assert.equal((await http(`${base}/events`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
      assert.equal((await http(`${base}/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
      assert.equal((await http(`${base}/events?access_token=${TOKEN}`)).status, 200);
      assert.equal((await http(`${base}/stream?live=0`)).status, 401);
      assert.equal((await post(base, ev('session.started', 'x', 0))).status, 401);
      await assert.rejects(WsClient.open(base), /401/);
      const h = await http(`${base}/healthz`);
      assert.equal(h.status, 200);
      assert.deepEqual(h.json, { ok: true }); // no topology counts without the token
    });

    it('control-behalf-refusal: no live claimant -> no-route frame; nothing enters the history', async () => {
      const session = `live-behalf-${ulid().toLowerCase()}`;
      assert.equal((await post(base, ev('session.started', session, 0), TOKEN)).status, 202);
      const e1 = ev('run.started', session, 1, { run: 'r-behalf', data: { trigger: 'user' } });
      assert.equal((await post(base, e1, TOKEN)).status, 202);
      const s = await sender();
      const c = cmd('control.pause', session, { data: { reason: 'aep-live-check behalf-refusal probe' } });
      s.send(c);
      const err = await s.waitFor((f) => f['type'] === 'error' && f['cause'] === c['id']);
      assert.equal(err['code'], 'no-route');
      const from = encodeURIComponent(JSON.stringify([{ session, epoch: 0, seq: 0 }]));
      const r = await http(`${base}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session }))}&from=${from}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const ids = r.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => (JSON.parse(l.slice(6)) as Record<string, unknown>)['id']);
      assert.deepEqual(ids, [e1['id']]);
      s.close();
    });

    it('control-ack: a declared command reaches the target; exactly one distinct valid ack on the stream', async () => {
      const watch = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
      await watch.status;
      const s = await sender();
      const c = cmd('control.attention.respond', S, { subject: ulid(), data: { answer: { option: 'live-check-probe' } } });
      s.send(c);
      await watch.waitFor((m) => m.some((x) => x.data?.includes(String(c['id'])) && /control\.(accepted|rejected)/.test(x.data)));
      await sleep(300);
      const acks = watch.events().filter((e) => e['cause'] === c['id'] && /^control\.(accepted|rejected)$/.test(String(e['type'])));
      assert.equal(new Set(acks.map((a) => JSON.stringify(a))).size, 1);
      const ack = acks[0]!;
      assert.deepEqual(auditEnvelope(ack), []);
      assert.ok(!(ack['type'] === 'control.rejected' && (ack['data'] as Record<string, unknown>)['reason'] === 'unsupported'));
      // The target got the exact bytes the sender sent.
      assert.equal(target.received.filter((f) => f['id'] === c['id']).length, 1);
      assert.equal(s.frames.filter((f) => f['type'] === 'error').length, 0);
      watch.close();
      s.close();
    });

    it('control-nack-unsupported: an undeclared type is refused unsupported by the relay; no accepted', async () => {
      const watch = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
      await watch.status;
      const s = await sender();
      const c = cmd('control.pause', S, { data: {} });
      s.send(c);
      const err = await s.waitFor((f) => f['type'] === 'error' && f['cause'] === c['id']);
      assert.match(String(err['code']), /unsupported/);
      await sleep(300);
      assert.equal(watch.events().filter((e) => e['cause'] === c['id'] && e['type'] === 'control.accepted').length, 0);
      assert.equal(target.received.filter((f) => f['id'] === c['id']).length, 0);
      watch.close();
      s.close();
    });

    it('control-dedupe: a retried command is forwarded again; the recorded ack fans out byte-identically', async () => {
      const watch = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
      await watch.status;
      const s = await sender();
      const c = cmd('control.attention.respond', S, { subject: ulid(), data: { answer: { option: 'live-check-probe' } } });
      const text = JSON.stringify(c);
      s.send(text);
      await sleep(120);
      s.send(text);
      await watch.waitFor((m) => m.filter((x) => x.data?.includes(`"cause":"${String(c['id'])}"`)).length >= 2);
      await sleep(300);
      const ackTexts = watch.messages.filter((m) => m.data?.includes(`"cause":"${String(c['id'])}"`)).map((m) => m.data!);
      assert.equal(ackTexts.length, 2);
      assert.equal(new Set(ackTexts).size, 1);
      assert.equal(target.received.filter((f) => f['id'] === c['id']).length, 2);
      // Buffer admission deduped: the replay holds the command and its ack once each.
      const r = await http(`${base}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(r.body.split('\n').filter((l) => l.startsWith('data: ') && l.includes(`"cause":"${String(c['id'])}"`)).length, 1);
      watch.close();
      s.close();
    });

    it('control-cancel: one accepted ack and one run.cancelled caused by the command', async () => {
      const watch = sse(base, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
      await watch.status;
      const s = await sender();
      const c = cmd('control.cancel', S, { run: 'r-live', capture: 'redacted', data: { scope: 'run', reason: 'aep-live-check control-class certification' } });
      s.send(c);
      await watch.waitFor((m) => m.some((x) => x.data?.includes('run.cancelled')));
      await sleep(300);
      const evs = watch.events();
      const acks = evs.filter((e) => e['cause'] === c['id'] && /^control\.(accepted|rejected)$/.test(String(e['type'])));
      assert.equal(acks.length, 1);
      assert.equal(acks[0]!['type'], 'control.accepted');
      const cancelled = evs.filter((e) => e['type'] === 'run.cancelled' && e['run'] === 'r-live');
      assert.equal(cancelled.length, 1);
      assert.ok(cancelled[0]!['cause'] === c['id'] || cancelled[0]!['cause'] === acks[0]!['id']);
      assert.deepEqual(auditEnvelope(cancelled[0]!), []);
      // The command itself is in the session history for observers (AEP-0004 §4.4).
      assert.equal(evs.filter((e) => e['id'] === c['id']).length, 1);
      watch.close();
      s.close();
    });

    it('vendor commands are gated by accepts like core ones; a target without control declared gets nothing', async () => {
      const session = `vendor-${ulid().toLowerCase()}`;
      const t = await Target.start(base, TOKEN, session, ['x.acme.control.reindex']);
      const plain = await WsClient.open(base, TOKEN);
      plain.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'plain' } });
      await plain.waitFor((f) => f['type'] === 'hello');
      const bare = `bare-${ulid().toLowerCase()}`;
      plain.send(ev('session.started', bare, 0));
      await sleep(100);
      const s = await sender();
      const ok = cmd('x.acme.control.reindex', session, { data: {} });
      s.send(ok);
      await sleep(200);
      assert.equal(t.received.filter((f) => f['id'] === ok['id']).length, 1);
      assert.equal(s.frames.filter((f) => f['cause'] === ok['id'] && f['type'] === 'error').length, 0);
      const other = cmd('x.acme.control.purge', session, { data: {} });
      s.send(other);
      assert.equal((await s.waitFor((f) => f['type'] === 'error' && f['cause'] === other['id']))['code'], 'unsupported');
      const none = cmd('control.resume', bare);
      s.send(none);
      assert.equal((await s.waitFor((f) => f['type'] === 'error' && f['cause'] === none['id']))['code'], 'unsupported');
      assert.equal(plain.frames.filter((f) => 'aep' in f).length, 0);
      const bad = { ...cmd('control.pause', session), seq: 3 };
      s.send(bad);
      assert.equal((await s.waitFor((f) => f['type'] === 'error' && f['cause'] === bad['id']))['code'], 'invalid-event');
      t.ws.close();
      plain.close();
      s.close();
    });

    it('ambiguous: two live claimants of a session -> the command is refused, delivered to none', async () => {
      const session = `amb-${ulid().toLowerCase()}`;
      const t1 = await Target.start(base, TOKEN, session, ['control.attention.respond']);
      const t2 = await Target.start(base, TOKEN, session, ['control.attention.respond']);
      await sleep(100);
      const s = await sender();
      const c = cmd('control.attention.respond', session, { subject: ulid(), data: { answer: { option: 'x' } } });
      s.send(c);
      const err = await s.waitFor((f) => f['type'] === 'error' && f['cause'] === c['id']);
      assert.equal(err['code'], 'ambiguous');
      await sleep(100);
      assert.equal(t1.received.length + t2.received.length, 0);
      t1.ws.close();
      t2.ws.close();
      s.close();
    });
  });

  describe(`live checker eviction probes (buffer 512)${label}`, () => {
    let relay: RelayHandle;
    let other: RelayHandle | undefined;
    let base: string;
    before(async () => {
      [relay, other] = await startRelays({ port: 0, storePath: null, bufferDepth: 512 }, 2);
      base = relay.url;
    });
    after(async () => {
      await relay.close();
      await other?.close();
    });

    it('evict-replay-exhausted + evict-byte-identity: both bindings mark the same earliest and replay raw bytes', async () => {
      const buffer = dig((await http(`${base}/events`)).json, 'capabilities', 'replay', 'buffer') as number;
      assert.equal(buffer, 512);
      const S = `live-evict-${ulid().toLowerCase()}`;
      const total = buffer + 8;
      const lines: string[] = [];
      for (let i = 0; i < total; i++) {
        lines.push(
          JSON.stringify({
            aep: '0.1',
            id: ulid(),
            type: 'progress.status',
            time: new Date().toISOString(),
            source: `aep://live-check/agent/aep-live-check/session/${S}`,
            agent: 'aep-live-check',
            session: S,
            seq: i,
            epoch: 1,
          }),
        );
      }
      for (let i = 0; i < total; i += 500) {
        const r = await http(`${base}/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
          body: lines.slice(i, i + 500).join('\n') + '\n',
        });
        assert.equal(r.status, 202);
      }
      const from = encodeURIComponent(JSON.stringify([{ session: S, epoch: 1, seq: 0 }]));
      const r = await http(`${base}/stream?live=0&from=${from}`);
      assert.equal(r.status, 200);
      const bodyLines = r.body.split('\n');
      const markerIdx = bodyLines.findIndex((l) => /^:\s*replay-exhausted\s+(\S+)\s+(\d+):(\d+)/.test(l));
      const firstData = bodyLines.findIndex((l) => l.startsWith('data:'));
      assert.ok(markerIdx >= 0 && markerIdx < firstData);
      const m = /^:\s*replay-exhausted\s+(\S+)\s+(\d+):(\d+)/.exec(bodyLines[markerIdx]!)!;
      assert.equal(m[1], S);
      const sseEarliest = { epoch: Number(m[2]), seq: Number(m[3]) };
      assert.deepEqual(sseEarliest, { epoch: 1, seq: 8 });
      const sseData = bodyLines.filter((l) => l.startsWith('data:')).map((l) => l.replace(/^data: ?/, ''));
      assert.equal(sseData.length, buffer);
      // strict byte identity
      assert.deepEqual(sseData, lines.slice(8));

      // The WebSocket half reads at the second relay of a cluster: the same marker, the same bytes.
      const ws = await WsClient.open(other?.url ?? base);
      const subId = `sub-evict-${ulid()}`;
      ws.send({ type: 'hello', versions: ['0.1'], role: 'consumer' });
      ws.send({ type: 'subscribe', id: subId, filter: { session: S }, from: [{ session: S, epoch: 1, seq: 0 }] });
      await ws.waitFor((f) => f['seq'] === total - 1);
      const markerPos = ws.frames.findIndex((f) => f['type'] === 'replay-exhausted');
      const firstEvent = ws.frames.findIndex((f) => 'aep' in f);
      assert.ok(markerPos >= 0 && markerPos < firstEvent);
      const marker = ws.frames[markerPos]!;
      assert.equal(marker['sub'], subId);
      assert.equal(marker['session'], S);
      assert.deepEqual(marker['earliest'], sseEarliest);
      const wsTexts = ws.texts.filter((t) => t.includes('"aep"'));
      assert.deepEqual(wsTexts, lines.slice(8));
      ws.close();
    });

    it('a whole evicted session keeps a tombstone: the gap is still declared', async () => {
      const small = await startRelay({ port: 0, storePath: null, bufferDepth: 4, maxSessions: 2 });
      try {
        const a = `ts-a-${ulid()}`;
        await post(small.url, [ev('session.started', a, 0), ev('progress.status', a, 1)]);
        await post(small.url, [ev('session.started', 'ts-b', 0)]);
        await post(small.url, [ev('session.started', 'ts-c', 0)]); // evicts session a
        const from = encodeURIComponent(JSON.stringify([{ session: a, epoch: 0, seq: 0 }]));
        const r = await http(`${small.url}/stream?live=0&from=${from}`);
        assert.match(r.body, new RegExp(`^: replay-exhausted ${a} 0:2$`, 'm'));
        assert.ok(!r.body.includes('data:'));
      } finally {
        await small.close();
      }
    });
  });
}
