// Capture enforcement against a real relay (issue 12 "Must show"): random Events with a random
// declared capture, lying or not, posted to the relay; consumers at every ceiling over SSE and
// WebSocket, live, replay-all and resume. No delivered Event carries a canary above
// min(ceiling, declared), and below `full` none carries an unannotated member.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, http, post, sse, type SseClient } from './helpers.js';
import { LEVELS, eventArb, forbiddenTags, type Level } from './capture-gen.js';

const RUNS = Math.min(Number(process.env['AEP_FUZZ_RUNS'] ?? 40), 400);
const CEILINGS: Array<Level | undefined> = [...LEVELS, undefined];

function check(texts: string[], declared: Map<string, Level>, ceiling: Level | undefined, where: string): number {
  let n = 0;
  for (const t of texts) {
    const id = (JSON.parse(t) as { id: string }).id;
    const d = declared.get(id);
    if (d === undefined) continue;
    n++;
    for (const tag of forbiddenTags(d, ceiling)) assert.ok(!t.includes(tag), `${where}, ceiling ${String(ceiling)}, declared ${d}: ${tag} in ${t}`);
  }
  return n;
}

function sseTexts(body: string): string[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

describe('capture enforcement over every binding (property)', () => {
  let relay: RelayHandle;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null });
  });
  after(async () => {
    await relay.close();
  });

  it('no subscriber, replay or resume gets a member above its ceiling or the declared capture', async () => {
    const q = (c: Level | undefined) => (c ? `capture=${c}` : '');
    const liveSse: Array<[Level | undefined, SseClient]> = CEILINGS.map((c) => [c, sse(relay.url, q(c))]);
    for (const [, s] of liveSse) assert.equal(await s.status, 200);
    const liveWs: Array<[Level | undefined, WsClient]> = [];
    for (const c of CEILINGS) {
      const w = await WsClient.open(relay.url);
      await w.hello();
      w.send({ type: 'subscribe', id: 'p', ...(c ? { capture: c } : {}) });
      await w.waitFor((f) => f['type'] === 'subscribed');
      liveWs.push([c, w]);
    }
    const declared = new Map<string, Level>();
    const sessions: string[] = [];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }).chain((k) => fc.tuple(...Array.from({ length: k }, () => eventArb(`prop-${run}`)))),
        async (batch) => {
          const session = `prop-${run++}`;
          sessions.push(session);
          const evs = batch.map(({ ev, declared: d }, i) => {
            const e = { ...ev, session, seq: i, source: `aep://prop/agent/p/session/${session}` };
            declared.set(e['id'] as string, d);
            return e;
          });
          assert.equal((await post(relay.url, evs)).status, 202);
        },
      ),
      { numRuns: RUNS },
    );
    const total = declared.size;
    // Live: every consumer got every Event, and none above its ceiling.
    for (const [c, s] of liveSse) {
      await s.waitFor((m) => m.filter((x) => x.data).length >= total, 20_000);
      assert.equal(
        check(
          s.messages.filter((m) => m.data).map((m) => m.data!),
          declared,
          c,
          'SSE live',
        ),
        total,
      );
      s.close();
    }
    for (const [c, w] of liveWs) {
      await w.waitFor(() => w.texts.filter((t) => t.includes('"aep"')).length >= total, 20_000);
      assert.equal(
        check(
          w.texts.filter((t) => t.includes('"aep"')),
          declared,
          c,
          'WS live',
        ),
        total,
      );
      w.close();
    }
    // Replay-all and resume, both bindings.
    for (const c of CEILINGS) {
      const all = await http(`${relay.url}/stream?live=0&from=all${c ? `&capture=${c}` : ''}`);
      assert.equal(check(sseTexts(all.body), declared, c, 'SSE replay-all'), total);
      const from = encodeURIComponent(JSON.stringify(sessions.map((s) => ({ session: s, epoch: 0, seq: 0 }))));
      const resumed = await http(`${relay.url}/stream?live=0&from=${from}${c ? `&capture=${c}` : ''}`);
      check(sseTexts(resumed.body), declared, c, 'SSE resume');
      const w = await WsClient.open(relay.url);
      await w.hello();
      w.send({ type: 'subscribe', id: 'r', from: 'all', ...(c ? { capture: c } : {}) });
      await w.waitFor(() => w.texts.filter((t) => t.includes('"aep"')).length >= total, 20_000);
      assert.equal(
        check(
          w.texts.filter((t) => t.includes('"aep"')),
          declared,
          c,
          'WS replay-all',
        ),
        total,
      );
      w.close();
    }
  });
});
