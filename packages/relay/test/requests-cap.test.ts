// RequestIndex at its cap (issue 19): the oldest request is forgotten first, in insertion order,
// with its claim set and its stored binding, however many have come and gone before it. The
// order is kept beside the Map (the Map's own oldest entry cost a walk past every deleted one).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestIndex, type BindingSink } from '../src/requests.js';

class Sink implements BindingSink {
  readonly bound: string[] = [];
  readonly unbound: string[] = [];
  bind(session: string, request: string): void {
    this.bound.push(`${session}/${request}`);
  }
  unbind(session: string, request: string): void {
    this.unbound.push(`${session}/${request}`);
  }
}

const request = (session: string, id: string): Record<string, unknown> => ({
  type: 'attention.requested',
  session,
  id,
  source: 'agent://a',
  agent: 'a',
  data: { kind: 'form', fields: [{ id: 'x', type: 'string' }] },
});

describe('RequestIndex cap', () => {
  it('forgets the oldest first, one per admission past the cap, over many turns of the order', () => {
    const sink = new Sink();
    const idx = new RequestIndex(3, sink, () => false);
    for (let i = 0; i < 5000; i++) idx.observe(request('s', `r${i}`), i % 2 === 0 ? 'claim-a' : null, 1);
    assert.equal(idx.size, 3);
    for (let i = 0; i < 4997; i++) assert.equal(idx.get('s', `r${i}`), undefined, `r${i} forgotten`);
    for (let i = 4997; i < 5000; i++) assert.ok(idx.get('s', `r${i}`), `r${i} kept`);
    // Only bound requests (raised on a connection) were stored, and each is unbound when forgotten.
    assert.equal(sink.bound.length, 2500);
    assert.deepEqual(
      sink.unbound,
      Array.from({ length: 4997 }, (_, i) => i)
        .filter((i) => i % 2 === 0)
        .map((i) => `s/r${i}`),
    );
    // The claim's set lost the forgotten ones: only r4998 is offline (r4997 and r4999 are unbound).
    assert.deepEqual(
      idx.offline(2, 60_000).map((o) => o.request),
      ['r4998'],
    );
  });

  it('a restored binding replaced under the same key keeps the newer entry until its own turn', () => {
    const idx = new RequestIndex(2, null, () => false);
    idx.restore('s', 'a', 'c1', null, 1);
    idx.restore('s', 'b', 'c1', null, 1);
    idx.restore('s', 'a', 'c2', null, 1); // the same key again: replaces the entry, size stays 2
    assert.equal(idx.size, 2);
    idx.observe(request('s', 'c'), null, 1); // past the cap: the stale first 'a' is skipped, 'b' goes
    assert.equal(idx.size, 2);
    assert.equal(idx.get('s', 'b'), undefined);
    assert.equal(idx.get('s', 'a')?.claim, 'c2');
    idx.observe(request('s', 'd'), null, 1); // then the newer 'a'
    assert.equal(idx.get('s', 'a'), undefined);
    assert.ok(idx.get('s', 'c') && idx.get('s', 'd'));
  });

  it('a retransmitted request does not take a second place in the order', () => {
    const idx = new RequestIndex(2, null, () => false);
    idx.observe(request('s', 'a'), null, 1);
    idx.observe(request('s', 'a'), null, 1);
    idx.observe(request('s', 'b'), null, 1);
    assert.equal(idx.size, 2);
    idx.observe(request('s', 'c'), null, 1);
    assert.equal(idx.get('s', 'a'), undefined);
    assert.ok(idx.get('s', 'b') && idx.get('s', 'c'));
  });

  it('the order array is cut back as the oldest go: bounded however many requests pass', () => {
    const idx = new RequestIndex(10, null, () => false);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      idx.observe(request('s', `r${i}`), null, 1);
      most = Math.max(most, idx.orderSlots);
    }
    // Cut once 1,024 are forgotten and they are at least half the array: never past 2,048 + 10.
    assert.ok(most <= 2 * 1024 + 10, `${most} slots at most`);
    assert.ok(most >= 1024, `${most}: cut only past 1,024 forgotten (not on every admission)`);
    assert.equal(idx.size, 10);
  });

  it("a claim's requests stay together as the oldest are forgotten: going offline reaches all that are left", () => {
    let live = true;
    const idx = new RequestIndex(3, null, () => live);
    for (const id of ['a', 'b', 'c', 'd']) idx.observe(request('s', id), 'claim-1', 1); // 'a' is forgotten
    idx.observe(request('s', 'e'), 'claim-2', 1); // 'b' is forgotten
    live = false;
    idx.claimState('claim-1', 5_000);
    idx.claimState('claim-2', 6_000);
    // Every request left is listed with the time its own asker went away (not "now").
    assert.deepEqual(
      idx.offline(7_000, 60_000).map((o) => [o.request, o.since]),
      [
        ['c', new Date(5_000).toISOString()],
        ['d', new Date(5_000).toISOString()],
        ['e', new Date(6_000).toISOString()],
      ],
    );
  });
});
