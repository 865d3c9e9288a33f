// Contracts C3 and C4, client side. C3: every `hello` of an EmitterConnection carries one random
// `claim` per instance, reused on reconnects, never in a log line or in stats. C4: after each
// hello, where the relay advertises `roster`, the connection asks for it (role `both`) and
// dismisses (`attention.resolved{resolution:"dismissed"}`, subject = request id, as the session
// owner) the `offline` requests of its own (source, session)s that it did not raise.
// A scripted WebSocket peer feeds exact frames; the last test runs against the real relay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { WebSocket as ServerSocket } from 'ws';
import { AttentionEngine, CommandSender, EmitterConnection, subscribe } from '@aep/client/node';
import type { WireEvent } from '@aep/client/node';
import { CLAIM_PATTERN } from '@aep/protocol';
import { startRelayProcess } from '../../../test/support/cli.js';

async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Peer {
  url: string;
  hellos: Record<string, unknown>[];
  /** Every frame and Event received, in order, per connection. */
  received: Record<string, unknown>[][];
  sockets: ServerSocket[];
  close(): Promise<void>;
}

/**
 * A scripted relay: answers hello (advertising roster unless told not to), and answers each
 * roster request with `offline(n)` for the n-th connection (0-based).
 */
async function scriptedRelay(opts: { roster?: boolean; offline?: (n: number) => unknown[] | undefined } = {}): Promise<Peer> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const peer: Peer = {
    url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    hellos: [],
    received: [],
    sockets: [],
    close: () =>
      new Promise((r) => {
        for (const s of wss.clients) s.terminate();
        wss.close(() => r());
      }),
  };
  wss.on('connection', (ws) => {
    const n = peer.received.length;
    const mine: Record<string, unknown>[] = [];
    peer.received.push(mine);
    peer.sockets.push(ws);
    ws.on('message', (buf) => {
      const m = JSON.parse(String(buf)) as Record<string, unknown>;
      mine.push(m);
      if (m['type'] === 'hello') {
        peer.hellos.push(m);
        ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'both', capabilities: opts.roster === false ? {} : { roster: {} } }));
      } else if (m['type'] === 'roster') {
        const offline = opts.offline?.(n);
        ws.send(JSON.stringify({ type: 'roster', id: m['id'], entries: [], ...(offline ? { offline } : {}) }));
      }
    });
  });
  return peer;
}

const events = (frames: Record<string, unknown>[]) =>
  frames.filter((f) => typeof f['type'] === 'string' && (f['type'] as string).includes('.')) as unknown as WireEvent[];

test('C3: one random claim per instance, in every hello, reused on reconnect, never logged, never in stats', async () => {
  const peer = await scriptedRelay();
  const logs: string[] = [];
  const a = await EmitterConnection.connect({ url: peer.url, agent: 'claimer', log: (l) => logs.push(l), reconnect: { initialMs: 10, maxMs: 20 } });
  const b = await EmitterConnection.connect({ url: peer.url, agent: 'claimer', reconnect: { initialMs: 10, maxMs: 20 } });
  try {
    const first = peer.hellos[0]!;
    const claim = first['claim'];
    assert.equal(typeof claim, 'string');
    assert.match(claim as string, new RegExp(CLAIM_PATTERN));
    assert.equal(first['role'], 'both', 'role both: the connection may ask for the roster (AEP-0003 §4.1 rule 2)');
    assert.notEqual(peer.hellos[1]!['claim'], claim, 'another instance has another claim');
    // Drop a's socket: it reconnects and presents the same claim.
    peer.sockets[0]!.terminate();
    await until(() => peer.hellos.length >= 3, 'the reconnect hello');
    await a.waitReady();
    assert.equal(peer.hellos[2]!['claim'], claim);
    assert.equal(a.stats().reconnects, 1);
    a.emit('s1', 'session.started', {});
    await a.flush();
    const seen = JSON.stringify({ logs, stats: a.stats(), options: a.options, strings: Object.values(a).filter((v) => typeof v === 'string') });
    assert.ok(!seen.includes(claim as string), 'the claim is in no log line, stats, options or own enumerable member');
  } finally {
    await a.close(0);
    await b.close(0);
    await peer.close();
  }
});

test('C4: offline requests of its own (source, session)s are dismissed once the session is owned; others never', async () => {
  let raisedByMe = '';
  const base = 'aep://host-x/agent/back';
  const peer = await scriptedRelay({
    offline: (n) =>
      n === 0
        ? [
            { request: 'r-old', session: 's1', agent: 'back', source: `${base}/session/s1`, since: '2026-01-01T00:00:00Z' },
            { request: 'r-later', session: 's2', agent: 'back', source: `${base}/session/s2`, since: '2026-01-01T00:00:00Z' },
            { request: 'r-foreign', session: 's1', agent: 'other', source: 'aep://host-x/agent/other/session/s1', since: '2026-01-01T00:00:00Z' },
            { request: 'r-unowned', session: 's9', agent: 'back', source: `${base}/session/s9`, since: '2026-01-01T00:00:00Z' },
          ]
        : // After the reconnect: the already dismissed one again, and one this connection raised.
          [
            { request: 'r-old', session: 's1', agent: 'back', source: `${base}/session/s1`, since: '2026-01-01T00:00:00Z' },
            { request: raisedByMe, session: 's1', agent: 'back', source: `${base}/session/s1`, since: '2026-01-01T00:00:00Z' },
          ],
  });
  const conn = await EmitterConnection.connect({ url: peer.url, agent: 'back', source: base, reconnect: { initialMs: 10, maxMs: 20 } });
  try {
    await until(() => peer.received[0]!.some((f) => f['type'] === 'roster'), 'the roster request');
    assert.equal(conn.stats().dismissed, 0, 'nothing is dismissed before the connection owns the session');
    conn.emit('s1', 'session.started', {});
    raisedByMe = conn.emit('s1', 'attention.requested', { kind: 'input', prompt: 'x' }, { severity: 'notice' }).id;
    await until(() => events(peer.received[0]!).some((e) => e.type === 'attention.resolved'), 'the dismissal in s1');
    const e1 = events(peer.received[0]!);
    const dismissal = e1.find((e) => e.type === 'attention.resolved')!;
    assert.equal(dismissal.subject, 'r-old');
    assert.equal(dismissal.session, 's1');
    assert.equal(dismissal.source, `${base}/session/s1`, 'as the session owner');
    assert.deepEqual(dismissal.data, { resolution: 'dismissed' });
    assert.deepEqual(
      e1.map((e) => e.type),
      ['session.started', 'attention.resolved', 'attention.requested'],
      'the claim first, then the dismissal',
    );
    conn.emit('s2', 'session.started', {});
    await until(() => events(peer.received[0]!).filter((e) => e.type === 'attention.resolved').length === 2, 'the dismissal in s2');
    assert.deepEqual(
      events(peer.received[0]!)
        .filter((e) => e.type === 'attention.resolved')
        .map((e) => e.subject),
      ['r-old', 'r-later'],
    );
    assert.equal(conn.stats().dismissed, 2);
    // Reconnect: the new roster lists r-old (already dismissed) and a request this connection raised.
    peer.sockets[0]!.terminate();
    await until(() => peer.received.length === 2 && peer.received[1]!.some((f) => f['type'] === 'roster'), 'the second roster request');
    conn.emit('s1', 'progress.status', { phase: 'after' });
    await until(() => events(peer.received[1]!).some((e) => e.type === 'progress.status'), 'an event after the second roster');
    await conn.flush();
    // Frames in flight are re-sent after a reconnect (same ids, the relay dedupes); no new dismissal.
    const before = new Set(
      events(peer.received[0]!)
        .filter((e) => e.type === 'attention.resolved')
        .map((e) => e.id),
    );
    const again = events(peer.received[1]!).filter((e) => e.type === 'attention.resolved');
    assert.ok(
      again.every((e) => before.has(e.id)),
      'no second dismissal, never its own request',
    );
    assert.ok(!again.some((e) => e.subject === raisedByMe));
    assert.equal(conn.stats().dismissed, 2);
  } finally {
    await conn.close(0);
    await peer.close();
  }
});

test('C4: no roster request where the relay does not advertise roster, and none with dismissOffline:false', async () => {
  for (const [peerOpts, connOpts] of [
    [{ roster: false }, {}],
    [{}, { dismissOffline: false }],
  ] as const) {
    const peer = await scriptedRelay(peerOpts);
    const conn = await EmitterConnection.connect({ url: peer.url, agent: 'quiet', ...connOpts });
    try {
      conn.emit('s1', 'session.started', {});
      await until(() => events(peer.received[0]!).length === 1, 'the event');
      assert.ok(!peer.received[0]!.some((f) => f['type'] === 'roster'));
    } finally {
      await conn.close(0);
      await peer.close();
    }
  }
});

test('C4 against the real relay: an emitter that comes back dismisses the request its predecessor left (asserted when the relay lists offline requests)', async () => {
  const TOKEN = 'test-token-claims';
  const relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  const seen: WireEvent[] = [];
  const watch = subscribe({ url: relay.url, token: TOKEN, filter: { session: 's-back' }, from: 'all' }, (e) => seen.push(e));
  try {
    await watch.ready;
    const first = await EmitterConnection.connect({ url: relay.url, token: TOKEN, agent: 'comeback', control: { accepts: ['control.attention.respond'] } });
    const engine = new AttentionEngine(first);
    first.emit('s-back', 'session.started', {});
    const p = engine.requestAttention({ session: 's-back', kind: 'input', prompt: 'Still there?' });
    p.catch(() => {
      /* never settles: the process "dies" */
    });
    await until(() => seen.some((e) => e.type === 'attention.requested'), 'the request on the stream');
    await first.close(0); // gone without dismissing (a crash, a kill -9)

    const sender = await CommandSender.connect({ url: relay.url, token: TOKEN });
    const roster = await sender.roster();
    await sender.close();
    assert.ok(roster, 'the relay advertises roster');
    const second = await EmitterConnection.connect({ url: relay.url, token: TOKEN, agent: 'comeback' });
    try {
      second.emit('s-back', 'session.started', {});
      const mine = second.emit('s-back', 'attention.requested', { kind: 'input', prompt: 'New question' }, { severity: 'notice' });
      if (Array.isArray(roster.offline)) {
        // The relay side of C4 is there: the predecessor's request is listed, and dismissed.
        assert.ok(
          roster.offline.some((o) => o.request === p.id && o.session === 's-back'),
          JSON.stringify(roster.offline),
        );
        await until(() => seen.some((e) => e.type === 'attention.resolved' && e.subject === p.id), 'the dismissal on the stream');
        const d = seen.find((e) => e.type === 'attention.resolved' && e.subject === p.id)!;
        assert.deepEqual(d.data, { resolution: 'dismissed' });
        assert.equal(d.source, second.sourceFor('s-back'));
        assert.ok(!seen.some((e) => e.type === 'attention.resolved' && e.subject === mine.id), 'its own request stays pending');
        assert.equal(second.stats().dismissed, 1);
      } else {
        // A relay without C4 lists no offline requests: the emitter has nothing to dismiss.
        assert.equal(roster.offline, undefined);
        await second.flush();
        assert.equal(second.stats().dismissed, 0);
        assert.ok(!seen.some((e) => e.type === 'attention.resolved'));
      }
    } finally {
      await second.close(0);
    }
  } finally {
    watch.close();
    await relay.stop();
  }
});

test('onState: true after each hello (claims and queue sent first), false when the socket goes and on close', async () => {
  const peer = await scriptedRelay();
  const states: boolean[] = [];
  let bufferedAtConnect = -1;
  const conn = new EmitterConnection({ url: peer.url, agent: 'stateful', reconnect: { initialMs: 10, maxMs: 20 } });
  const off = conn.onState((up) => {
    states.push(up);
    if (up && bufferedAtConnect < 0) bufferedAtConnect = conn.stats().buffered;
  });
  conn.onState(() => {
    throw new Error('a throwing listener is contained');
  });
  try {
    conn.emit('s-state', 'session.started', {});
    await conn.waitReady();
    await until(() => states.length === 1, 'the first state event');
    assert.deepEqual(states, [true]);
    assert.equal(conn.stats().connected, true);
    await until(() => (peer.received[0] ?? []).some((f) => f['type'] === 'session.started'), 'the queued event');
    assert.equal(bufferedAtConnect, 0, 'listeners hear "connected" once the queued event went out');
    peer.sockets[0]!.terminate();
    await until(() => states.length >= 3, 'down then up again');
    assert.deepEqual(states.slice(0, 3), [true, false, true]);
    off();
    await conn.close(0);
    assert.deepEqual(states, [true, false, true], 'a removed listener hears nothing more');
  } finally {
    await conn.close(0);
    await peer.close();
  }
});
