// Prepared WebSocket frames (issue 19): the relay writes one prebuilt text frame per (Event,
// ceiling) to every subscriber's socket instead of calling `ws.send`. The frame must be exactly
// what `ws` itself sends (RFC 6455 §5.2: FIN, text opcode, no mask, 7/16/64-bit length) at every
// length boundary, and a real client must receive the exact text, in order, also beside frames
// `ws` writes itself (the relay's control frames).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startRelay } from '@aep/relay';
import { wsTextFrame } from '../src/ws.js';
import { WsClient, ev, post } from './helpers.js';

const Sender = createRequire(import.meta.url)('ws').Sender as { frame(data: Buffer, o: Record<string, unknown>): Buffer[] };

describe('prepared WebSocket frames', () => {
  it('equal the frames ws builds, at every length boundary, for ASCII and multi-byte text', () => {
    for (const n of [0, 1, 125, 126, 127, 65535, 65536, 70000]) {
      for (const text of ['x'.repeat(n), 'é'.repeat(n >> 1) + 'x'.repeat(n & 1)]) {
        const data = Buffer.from(text, 'utf8');
        const theirs = Buffer.concat(Sender.frame(data, { fin: true, opcode: 1, mask: false, readOnly: true, rsv1: false }));
        assert.deepEqual(wsTextFrame(text), theirs, `${data.length} bytes`);
      }
    }
  });

  it('a client receives every Event exactly, in order, beside the frames ws writes itself', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    try {
      const c = await WsClient.open(relay.url);
      await c.hello();
      c.send({ type: 'subscribe', id: 'q', filter: { session: 'wsf' } });
      await c.waitFor((f) => f['type'] === 'subscribed');
      const sizes = [10, 120, 126, 70_000, 65_000, 3];
      const sent = sizes.map((n, i) => ev('progress.status', 'wsf', i, { data: { phase: 'ü'.repeat(n) } }));
      for (const e of sent) assert.equal((await post(relay.url, e)).status, 202);
      c.send({ type: 'ping', id: 'p1' }); // answered by ws.send: must come after the Events
      await c.waitFor((f) => f['type'] === 'pong' || (f['type'] === 'error' && f['id'] === 'p1'));
      const got = c.events();
      assert.deepEqual(
        got.map((e) => e['id']),
        sent.map((e) => e['id']),
      );
      assert.deepEqual(
        got.map((e) => ((e['data'] as Record<string, unknown>)['phase'] as string).length),
        sizes,
      );
      c.close();
    } finally {
      await relay.close();
    }
  });
});
