// CommandSender envelopes and socket behaviour against a scripted WebSocket peer (exact frames):
// steering (contract C8: control.pause / control.resume beside control.cancel), extension
// attributes on respond (contract C1: approvalproof), a retry after the socket dropped
// (reconnect, re-subscribe, identical bytes), the roster, and refusals (issue 14: HTTP 401 is
// AEP_CLIENT_REFUSED after one attempt, never "unreachable").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import type { WebSocket as ServerSocket } from 'ws';
import { ClientError, CommandSender, EmitterConnection } from '@aep/client/node';
import { approvalProof } from '@aep/protocol';

interface Peer {
  url: string;
  frames: Record<string, unknown>[];
  raw: string[];
  upgrades: number;
  /** Upgrade request URL and Authorization header, per upgrade. */
  requests: { url: string; auth: string | undefined }[];
  sockets: ServerSocket[];
  close(): Promise<void>;
}

/** A scripted relay: hello (roster advertised or not), subscribed, and an ack per command unless `drop` says otherwise. */
async function scripted(opts: { roster?: boolean; refuse?: number; drop?: (cmd: Record<string, unknown>, n: number) => boolean } = {}): Promise<Peer> {
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const peer: Peer = { url: '', frames: [], raw: [], upgrades: 0, requests: [], sockets: [], close: async () => {} };
  let commands = 0;
  server.on('upgrade', (req, socket, head) => {
    peer.upgrades++;
    peer.requests.push({ url: req.url ?? '', auth: req.headers.authorization });
    if (opts.refuse) {
      socket.end(
        `HTTP/1.1 ${opts.refuse} Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 24\r\nConnection: close\r\n\r\n{"error":"unauthorized"}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      peer.sockets.push(ws);
      ws.on('message', (buf) => {
        const text = String(buf);
        const m = JSON.parse(text) as Record<string, unknown>;
        peer.frames.push(m);
        peer.raw.push(text);
        const type = String(m['type']);
        if (type === 'hello') ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'both', capabilities: opts.roster ? { roster: {} } : {} }));
        else if (type === 'subscribe') ws.send(JSON.stringify({ type: 'subscribed', id: m['id'] }));
        else if (type === 'roster')
          ws.send(
            JSON.stringify({
              type: 'roster',
              id: m['id'],
              entries: [{ session: 's', agent: 'a' }],
              offline: [{ request: 'q', session: 's', agent: 'a', source: 'aep://h/agent/a/session/s', since: '2026-01-01T00:00:00Z' }],
            }),
          );
        else if (type.startsWith('control.')) {
          if (opts.drop?.(m, commands++)) {
            ws.terminate();
            return;
          }
          ws.send(
            JSON.stringify({
              aep: '0.1',
              id: `ack-${String(m['id'])}`,
              type: 'control.accepted',
              time: new Date().toISOString(),
              source: 'aep://h/agent/t/session/s',
              agent: 't',
              session: m['session'],
              seq: commands,
              cause: m['id'],
            }),
          );
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.close = () =>
    new Promise((r) => {
      for (const s of wss.clients) s.terminate();
      server.closeAllConnections();
      server.close(() => r());
    });
  return peer;
}

const commandsOf = (p: Peer) => p.frames.filter((f) => String(f['type']).startsWith('control.'));

test('pause, resume and cancel build AEP-0004 §5 envelopes; respond carries extension attributes', async () => {
  const peer = await scripted();
  const s = await CommandSender.connect({ url: peer.url, token: 't', agent: 'steer', ackWindowMs: 2_000 });
  try {
    assert.equal((await s.pause({ session: 's', run: 'r1' })).status, 'accepted');
    assert.equal((await s.resume({ session: 's' })).status, 'accepted');
    assert.equal((await s.cancel({ session: 's', scope: 'run', run: 'r1', reason: 'stop it' })).status, 'accepted');
    const proof = approvalProof('req-1', 'rm -rf build');
    assert.equal((await s.respond({ session: 's', requestId: 'req-1', answer: { option: 'allow' }, extensions: { approvalproof: proof } })).status, 'accepted');
    const [pause, resume, cancel, respond] = commandsOf(peer);
    assert.deepEqual(
      { type: pause!['type'], session: pause!['session'], run: pause!['run'], data: pause!['data'], seq: pause!['seq'], capture: pause!['capture'] },
      { type: 'control.pause', session: 's', run: 'r1', data: {}, seq: undefined, capture: undefined },
    );
    assert.deepEqual({ type: resume!['type'], data: resume!['data'], run: resume!['run'] }, { type: 'control.resume', data: {}, run: undefined });
    assert.deepEqual(
      { type: cancel!['type'], run: cancel!['run'], data: cancel!['data'], capture: cancel!['capture'] },
      { type: 'control.cancel', run: 'r1', data: { scope: 'run', reason: 'stop it' }, capture: 'redacted' },
    );
    assert.equal(respond!['approvalproof'], proof);
    assert.equal(respond!['subject'], 'req-1');
    assert.equal(respond!['cause'], 'req-1');
    assert.equal(respond!['agent'], 'steer');
    // The Node entry's socket carries the token in the header, never in the URL (AEP-0003 §11).
    assert.deepEqual(peer.requests, [{ url: '/socket', auth: 'Bearer t' }]);
    // Hello: consumer, identity with the Node entry's instance default.
    const hello = peer.frames[0]!;
    assert.equal(hello['role'], 'consumer');
    assert.match(String((hello['identity'] as Record<string, unknown>)['instance']), /\/\d+$/);
    // The ack subscription was opened before the first command (AEP-0004 §4 step 2).
    assert.ok(peer.frames.findIndex((f) => f['type'] === 'subscribe') < peer.frames.findIndex((f) => f['type'] === 'control.pause'));
    await assert.rejects(s.cancel({ session: 's', scope: 'run' }), (e: unknown) => e instanceof ClientError && e.code === 'AEP_CLIENT_OPTION');
    await assert.rejects(s.pause({ session: 's', extensions: { seq: 1 } }), (e: unknown) => (e as { code?: string }).code === 'AEP_EXT_INVALID');
  } finally {
    await s.close();
    await peer.close();
  }
});

test('a command whose socket dropped is retried with identical bytes on a new connection, re-subscribed first', async () => {
  const peer = await scripted({ drop: (_c, n) => n === 0 });
  const s = new CommandSender({ url: peer.url, token: 't', ackWindowMs: 300, retries: 2 });
  try {
    const r = await s.pause({ session: 's' });
    assert.equal(r.status, 'accepted');
    const sent = peer.raw.filter((t) => t.includes('"control.pause"'));
    assert.equal(sent.length, 2);
    assert.equal(sent[0], sent[1], 'a retry resends the same bytes (AEP-0004 §2)');
    assert.equal(peer.sockets.length, 2, 'connected lazily, then reconnected');
    assert.equal(peer.frames.filter((f) => f['type'] === 'subscribe').length, 2, 'the ack subscription is re-made on the new socket');
  } finally {
    await s.close();
    await peer.close();
  }
});

test('roster(): the snapshot with offline requests where advertised, null where not', async () => {
  const withRoster = await scripted({ roster: true });
  const without = await scripted();
  const a = new CommandSender({ url: withRoster.url, token: 't' });
  const b = new CommandSender({ url: without.url, token: 't' });
  try {
    const r = await a.roster();
    assert.deepEqual(r?.entries, [{ session: 's', agent: 'a' }]);
    assert.equal(r?.offline?.[0]?.request, 'q');
    assert.equal(await b.roster(), null);
    assert.ok(!without.frames.some((f) => f['type'] === 'roster'), 'never asks an endpoint that did not advertise roster');
  } finally {
    await a.close();
    await b.close();
    await withRoster.close();
    await without.close();
  }
});

test('HTTP 401 on the upgrade: the sender and the emitter report AEP_CLIENT_REFUSED with the status, after one attempt, in one log line', async () => {
  const peer = await scripted({ refuse: 401 });
  try {
    await assert.rejects(
      CommandSender.connect({ url: peer.url, token: 'bad-token-xyz' }),
      (e: unknown) =>
        e instanceof ClientError && e.code === 'AEP_CLIENT_REFUSED' && e.status === 401 && /HTTP 401/.test(e.message) && !e.message.includes('bad-token-xyz'),
    );
    assert.equal(peer.upgrades, 1);
    const logs: string[] = [];
    const start = peer.upgrades;
    await assert.rejects(
      EmitterConnection.connect({
        url: peer.url,
        token: 'bad-token-xyz',
        agent: 'a',
        log: (l) => logs.push(l),
        reconnect: { initialMs: 10, maxMs: 20 },
        timeoutMs: 10_000,
      }),
      (e: unknown) => e instanceof ClientError && e.code === 'AEP_CLIENT_REFUSED' && e.status === 401,
    );
    assert.equal(peer.upgrades - start, 1, 'a refused token is not retried');
    assert.equal(logs.length, 1, logs.join('\n'));
    assert.match(logs[0]!, /HTTP 401.*not retrying/);
    // An emitter built without connect(): the refusal is remembered, waitReady rejects at once.
    const conn = new EmitterConnection({ url: peer.url, token: 'bad-token-xyz', agent: 'a', reconnect: { initialMs: 10, maxMs: 20 } });
    await assert.rejects(conn.waitReady(10_000), (e: unknown) => e instanceof ClientError && e.code === 'AEP_CLIENT_REFUSED');
    await assert.rejects(conn.waitReady(10_000), (e: unknown) => e instanceof ClientError && e.code === 'AEP_CLIENT_REFUSED');
    await conn.close(0);
  } finally {
    await peer.close();
  }
});
