// The inbox's store (packages/web/src/store.ts) lists as pending what the client's `AttentionFold`
// (what `aep inbox` and `listPending` use, and what the store delegates to) lists, and the
// status it shows on each request agrees with it (issue 13/14; docs/decisions.md
// "Web inbox (issues 11, 14)"): a request is open from its `attention.requested` until the first
// `attention.resolved` / `attention.timeout` of the same (session, subject); an answered request
// whose resolution has not arrived yet is still open (marked answered). Property-based over
// random interleavings (lifecycle before its request, duplicates, several sessions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AttentionFold } from '@aep/client';
import { InboxStore, isOpen, requestKey } from '../src/store.js';

type Step = { kind: 'requested' | 'answered' | 'resolved' | 'timeout' | 'routed'; session: 's1' | 's2'; req: 0 | 1 | 2 };

function events(steps: Step[]): Record<string, unknown>[] {
  let n = 0;
  return steps.map((s) => {
    n++;
    const reqId = `REQ${s.session}${s.req}`.padEnd(26, '0');
    const base = {
      aep: '0.1',
      time: `2026-08-01T09:00:${String(n % 60).padStart(2, '0')}Z`,
      source: `aep://h/agent/a/session/${s.session}`,
      agent: 'a',
      session: s.session,
    };
    if (s.kind === 'requested') return { ...base, id: reqId, type: 'attention.requested', seq: n, capture: 'redacted', data: { kind: 'input', prompt: 'p' } };
    const id = `E${String(n).padStart(25, '0')}`;
    if (s.kind === 'routed') return { ...base, id, type: 'attention.routed', subject: reqId };
    return {
      ...base,
      id,
      type: `attention.${s.kind}`,
      subject: reqId,
      seq: n,
      data: s.kind === 'resolved' ? { resolution: 'answered' } : s.kind === 'answered' ? { answer: { text: 'x' }, via: 'control' } : {},
    };
  });
}

const step = fc.record({
  kind: fc.constantFrom('requested', 'answered', 'resolved', 'timeout', 'routed') as fc.Arbitrary<Step['kind']>,
  session: fc.constantFrom('s1', 's2') as fc.Arbitrary<Step['session']>,
  req: fc.constantFrom(0, 1, 2) as fc.Arbitrary<Step['req']>,
});

test('property: the inbox store and the client AttentionFold list the same open requests', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 40 }), fc.boolean(), (steps, redeliver) => {
      let evs = events(steps);
      // Redelivery (AEP-0003 §5): the same events again; both sides must be unaffected.
      if (redeliver) evs = [...evs, ...evs];
      const store = new InboxStore();
      const fold = new AttentionFold();
      for (const e of evs) {
        store.apply(e);
        fold.push(e as never);
      }
      const fromStore = store
        .pending()
        .map((r) => r.key)
        .sort();
      const fromFold = fold
        .pending()
        .map((p) => requestKey(p.session, p.id))
        .sort();
      assert.deepEqual(fromStore, fromFold);
      // The status each request shows (open or closed) is the fold's verdict too.
      const shownOpen = [...store.requests.values()]
        .filter((r) => isOpen(r.status))
        .map((r) => r.key)
        .sort();
      assert.deepEqual(shownOpen, fromFold);
      // An answer seen after its request marks it answered on both sides (still open).
      for (const p of fold.pending()) {
        const entry = store.findRequest(p.id, p.session);
        if (p.answered) assert.equal(entry?.status, 'answered');
      }
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 500) },
  );
});

test('an answered request stays open until its resolution; a flood of routed events never hides a terminal', () => {
  const [req, answered, resolved] = events([
    { kind: 'requested', session: 's1', req: 0 },
    { kind: 'answered', session: 's1', req: 0 },
    { kind: 'resolved', session: 's1', req: 0 },
  ]);
  const store = new InboxStore();
  store.apply(req);
  store.apply(answered);
  assert.deepEqual(
    store.pending().map((r) => r.status),
    ['answered'],
  );
  store.apply(resolved);
  assert.equal(store.pending().length, 0);
  // Lifecycle before the request: 40 routed events, then the timeout, then the request.
  const early = new InboxStore();
  const steps: Step[] = [];
  for (let i = 0; i < 40; i++) steps.push({ kind: 'routed', session: 's2', req: 1 });
  steps.push({ kind: 'timeout', session: 's2', req: 1 }, { kind: 'requested', session: 's2', req: 1 });
  for (const e of events(steps)) early.apply(e);
  assert.equal(early.pending().length, 0);
  assert.equal(early.requests.values().next().value?.status, 'timeout');
});
