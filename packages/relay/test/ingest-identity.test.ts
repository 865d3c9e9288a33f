// What the relay derives from an admitted Event (core.ts describe(), issue 20: the ingest
// range's survivors): the dedupe key is (source, id) (AEP-0001), not the id alone, and only an
// Event with a position (session, epoch, seq) carries a resume token (AEP-0001 §7.6; SSE
// `id: {session}:{epoch}:{seq}`, AEP-0003 §7). Events without one (a foreign emitter's
// `attention.routed`, agent-scoped `agent.*`) are replayed in arrival order after the position
// before them, with no `id:` line of their own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startRelay } from '@aep/relay';
import { ev, http, post, ulid } from './helpers.js';

/** The `id:` and `data:` lines of an SSE replay, in order. */
function replay(body: string): { ids: string[]; events: Array<Record<string, unknown>>; lines: string[] } {
  const lines = body.split('\n').filter((l) => l.startsWith('id: ') || l.startsWith('data: '));
  return {
    lines,
    ids: lines.filter((l) => l.startsWith('id: ')).map((l) => l.slice(4)),
    events: lines.filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>),
  };
}

describe('the identity and position of an admitted Event', () => {
  it('two emitters may use the same id: both are kept; a redelivery of either is one Event', async (t) => {
    const relay = await startRelay({ port: 0, storePath: null });
    t.after(() => relay.close());
    const S1 = `same-id-a-${ulid()}`;
    const S2 = `same-id-b-${ulid()}`;
    const id = ulid();
    const a = ev('session.started', S1, 0, { id });
    const b = ev('session.started', S2, 0, { id });
    assert.notEqual(a['source'], b['source']);
    assert.equal((await post(relay.url, a)).status, 202);
    assert.equal((await post(relay.url, b)).status, 202);
    assert.equal((await post(relay.url, a)).status, 202, 'a redelivery is accepted (and deduped)');
    assert.equal((await post(relay.url, b)).status, 202);
    const got = replay((await http(`${relay.url}/stream?live=0`)).body).events;
    assert.deepEqual(
      got.map((e) => [e['source'], e['id']]),
      [
        [a['source'], id],
        [b['source'], id],
      ],
    );
  });

  it('an Event without a position has no resume token; it replays after the position before it and is resumed past like any other', async (t) => {
    const relay = await startRelay({ port: 0, storePath: null });
    t.after(() => relay.close());
    const S = `unpositioned-${ulid()}`;
    const unpositioned = (data: Record<string, unknown>) => {
      const e = ev('attention.routed', S, 0, { subject: ulid(), data });
      delete e['seq'];
      delete e['epoch'];
      return e;
    };
    const heartbeat = ev('agent.heartbeat', S, 0);
    for (const k of ['session', 'seq', 'epoch']) delete heartbeat[k];
    const s0 = ev('session.started', S, 0);
    const r1 = unpositioned({ to: 'slack' });
    const s1 = ev('progress.status', S, 1);
    const r2 = unpositioned({ to: 'web' });
    const s2 = ev('progress.status', S, 2);
    for (const e of [heartbeat, s0, r1, s1, r2, s2]) assert.equal((await post(relay.url, e)).status, 202);
    const all = replay((await http(`${relay.url}/stream?live=0`)).body);
    assert.deepEqual(
      all.events.map((e) => e['id']),
      [heartbeat, s0, r1, s1, r2, s2].map((e) => e['id']),
    );
    assert.deepEqual(all.ids, [`${S}:0:0`, `${S}:0:1`, `${S}:0:2`], 'only positioned Events carry an id: line');
    for (const l of all.lines) assert.doesNotMatch(l, /^id: .*(NaN|undefined)/);
    // Resume strictly after s1: the unpositioned Event after it is delivered, the one before is not.
    const after = replay((await http(`${relay.url}/stream?live=0`, { headers: { 'last-event-id': `${S}:0:1` } })).body);
    assert.deepEqual(
      after.events.map((e) => e['id']),
      [r2, s2].map((e) => e['id']),
    );
  });
});
