// Edges found by the mutation run after the first round of mutation-*.test.ts files
// (docs/testing.md): closed attention requests are bounded per session while open ones are kept
// (CLOSED_PER_SESSION), an SSE data line that starts with a line break is refused, and the
// builder's scope for a non-string type when validation is off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamValidator, CLOSED_PER_SESSION, encodeSseMessage, createEmitter, AepError } from '@aep/protocol';

test('closed attention requests are forgotten beyond CLOSED_PER_SESSION, oldest first; an open one is never evicted', () => {
  const sv = new StreamValidator({ dedupeWindow: 100 });
  let seq = 0;
  const ev = (type: string, extra: Record<string, unknown>) => ({
    aep: '0.1',
    id: `Q${seq}`,
    type,
    time: '2026-08-01T09:00:00Z',
    source: 'aep://q/agent/a/session/q',
    agent: 'a',
    session: 'q',
    seq: seq++,
    ...extra,
  });
  sv.push(ev('attention.requested', { data: { kind: 'input', prompt: 'p' } }), 0); // Q0 stays open
  const N = CLOSED_PER_SESSION + 500;
  for (let k = 0; k < N; k++) {
    const id = `Q${seq}`;
    sv.push(ev('attention.requested', { data: { kind: 'input', prompt: 'p' } }), seq);
    sv.push(ev('attention.resolved', { subject: id, data: { resolution: 'answered' } }), seq);
  }
  const f = sv.footprint;
  assert.ok(f.closedUnits <= CLOSED_PER_SESSION, `bounded: ${f.closedUnits}`);
  assert.ok(f.closedUnits >= CLOSED_PER_SESSION * 0.9, `only the oldest are dropped: ${f.closedUnits}`);
  assert.equal(f.openRequests, 1, 'the open request is kept');
  const newest = `Q${seq - 2}`;
  // The oldest closed request (Q1) was forgotten: a second terminal for it is not recognized.
  assert.deepEqual(
    sv.push(ev('attention.timeout', { subject: 'Q1' }), seq).map((i) => i.rule),
    [],
  );
  assert.deepEqual(
    sv.push(ev('attention.timeout', { subject: newest }), seq).map((i) => i.rule),
    ['stream.attention-terminal-duplicate'],
  );
  assert.deepEqual(
    sv.push(ev('session.ended', {}), seq).map((i) => i.rule),
    ['stream.attention-open-at-session-end'],
  );
});

test('SSE: a data or event field that starts or ends with a line break is refused', () => {
  for (const m of [{ data: '\n{}' }, { data: '\r{}' }, { data: '{}\n' }, { event: '\nx', data: '{}' }]) {
    assert.throws(
      () => encodeSseMessage(m),
      (e: unknown) => e instanceof AepError && e.code === 'AEP_SSE_LINE',
      JSON.stringify(m),
    );
  }
  assert.equal(encodeSseMessage({ data: '{}' }), 'data: {}\n\n');
});

test('with validation off, an event whose type is not a string is still treated as session-scoped (gets a seq)', () => {
  const em = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', validate: false });
  const e = em.build({ type: 42 as never });
  assert.equal(e.seq, 0);
  assert.equal(e.session, 's');
  assert.equal(em.build({ type: 'agent.heartbeat' }).seq, undefined);
});
