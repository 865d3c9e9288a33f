// The Event frames bound for one consumer within a tick are written as one buffer at the end of
// the tick (util.ts TickBatch, issue 19). What that must not change: a replay many times the
// backpressure soft mark, to a consumer that reads, arrives whole and in order over SSE and
// WebSocket (the frames waiting for the end of the tick count in the consumer's queue, and
// waiting for the queue to drain writes them first: otherwise the replay loop, which waits for
// the drain whenever the queue is above the soft mark, would wait for bytes never written); and
// the live frames of one ingest batch reach every consumer in order, with the frames the relay
// writes itself in between (a replay-exhausted marker before its session's Events).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startRelay } from '@aep/relay';
import { WsClient, ev, post, sse, ulid } from './helpers.js';
import { relayInWorker } from './support/relay-worker.js';

const N = 600;
const pad = 'r'.repeat(400);

async function relayWithHistory(session: string) {
  // A soft mark of 4 KiB: the replay of N ~600-byte Events passes it every seven Events. In a
  // worker thread: a replay that never yields again fails this test on its timeout instead of
  // freezing it.
  const relay = await relayInWorker({ port: 0, storePath: null, slowConsumerBytes: 4096, maxConsumerBytes: 64 * 1024 * 1024 });
  const ids: string[] = [];
  for (let b = 0; b < N / 100; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => ev('progress.status', session, b * 100 + i, { capture: 'redacted', data: { message: pad } }));
    for (const e of batch) ids.push(e['id'] as string);
    assert.equal((await post(relay.url, batch)).status, 202);
  }
  return { relay, ids };
}

/** The ids of the first N Events a consumer on `binding` receives asking for session `S` from the start. */
async function replayedIds(url: string, S: string, binding: 'sse' | 'ws'): Promise<unknown[]> {
  if (binding === 'sse') {
    const c = sse(url, `from=all&filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    try {
      await c.waitFor((m) => m.filter((x) => x.data !== undefined).length >= N, 20_000);
      return c.events().map((e) => e['id']);
    } finally {
      c.close();
    }
  }
  const w = await WsClient.open(url);
  try {
    await w.hello();
    w.send({ type: 'subscribe', id: 'r', from: 'all', filter: { session: S } });
    await w.waitFor(() => w.events().length >= N, 20_000);
    return w.events().map((e) => e['id']);
  } finally {
    w.close();
  }
}

describe('fan-out writes batched per tick', () => {
  for (const binding of ['sse', 'ws'] as const) {
    const name = binding === 'sse' ? 'an SSE' : 'a WebSocket';
    it(`a replay far above the soft mark reaches ${name} consumer whole and in order`, { timeout: 30_000 }, async () => {
      const S = `batch-${binding}-${ulid()}`;
      const { relay, ids } = await relayWithHistory(S);
      try {
        assert.deepEqual(await replayedIds(relay.url, S, binding), ids);
      } finally {
        await relay.close();
      }
    });
  }

  it('live: one batch reaches SSE and WebSocket consumers in order, each consumer its own copy', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const S = `batch-live-${ulid()}`;
    const filter = encodeURIComponent(JSON.stringify({ session: S }));
    const a = sse(relay.url, `filter=${filter}`);
    const b = sse(relay.url, `filter=${filter}&capture=metadata`);
    const w = await WsClient.open(relay.url);
    await w.hello();
    w.send({ type: 'subscribe', id: 'l', filter: { session: S } });
    await w.waitFor((f) => f['type'] === 'subscribed');
    assert.equal(await a.status, 200);
    assert.equal(await b.status, 200);
    const batch = Array.from({ length: 50 }, (_, i) => ev('progress.status', S, i, { capture: 'redacted', data: { message: `m${i}` } }));
    const ids = batch.map((e) => e['id']);
    assert.equal((await post(relay.url, batch)).status, 202);
    await a.waitFor((m) => m.filter((x) => x.data !== undefined).length >= 50);
    await b.waitFor((m) => m.filter((x) => x.data !== undefined).length >= 50);
    await w.waitFor(() => w.events().length >= 50);
    assert.deepEqual(
      a.events().map((e) => e['id']),
      ids,
    );
    assert.deepEqual(
      a.events().map((e) => (e['data'] as { message?: string }).message),
      batch.map((_, i) => `m${i}`),
      'at redacted, the message is carried',
    );
    assert.deepEqual(
      b.events().map((e) => e['id']),
      ids,
    );
    assert.ok(
      b.events().every((e) => e['data'] === undefined || (e['data'] as { message?: unknown }).message === undefined),
      'the metadata consumer gets its own frames, without the message',
    );
    assert.deepEqual(
      w.events().map((e) => e['id']),
      ids,
    );
    a.close();
    b.close();
    w.close();
    await relay.close();
  });
});
