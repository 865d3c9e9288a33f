// Frame catalogue (AEP-0003 §2-§6): every member rule of the WebSocket frame parser,
// each side of its boundary. A malformed 0.1 frame is refused with a reason naming the member
// and the rule (never silently accepted, never an Event); a well-formed edge value is accepted.
// Written from the mutation run's survivors (docs/testing.md): each row below was a rule no
// test could tell from its absence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSocketMessage, classifySocketValue, errorFrame, rosterReplyFrame, pongFrame, subscribeFrame, isRosterReply, FRAME_TYPES } from '@aep/protocol';

const CLAIM = 'A'.repeat(22);

test('frames: each malformed member is refused with a reason that names it and its rule', () => {
  const bad: [unknown, RegExp][] = [
    [{ type: 'hello', versions: [1] }, /^hello\.versions must be an array of strings \(AEP-0003 §4\)$/],
    [{ type: 'hello', versions: '0.1' }, /^hello\.versions must be an array of strings/],
    [{ type: 'hello', versions: ['0.1'], identity: 'me' }, /^hello\.identity must be an object \(AEP-0003 §4\)$/],
    [{ type: 'hello', versions: ['0.1'], identity: [] }, /^hello\.identity must be an object/],
    [{ type: 'hello', versions: ['0.1'], capabilities: null }, /^hello\.capabilities must be an object \(AEP-0003 §4\)$/],
    [{ type: 'hello', versions: ['0.1'], role: 'admin' }, /^hello\.role must be emitter, consumer or both \(AEP-0003 §4\)$/],
    [{ type: 'hello', versions: ['0.1'], claim: 'x'.repeat(21) }, /^hello\.claim must be 22-64 base64url characters \(contract C3\)$/],
    [{ type: 'subscribe' }, /^subscribe\.id must be a non-empty string \(AEP-0003 §6\.5\)$/],
    [{ type: 'subscribe', id: 's', filter: [] }, /^subscribe\.filter must be an object \(AEP-0003 §6\.1\)$/],
    [{ type: 'subscribe', id: 's', from: 'none' }, /^subscribe\.from must be "all" or an array of \{session, epoch\?, seq\} \(AEP-0003 §6\.5\)$/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', seq: -1 }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', seq: 1.5 }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', seq: 2 ** 53 }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', seq: '1' }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 1, seq: 1 }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', epoch: -1, seq: 1 }] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', from: [{ session: 's', seq: 1 }, null] }, /^subscribe\.from/],
    [{ type: 'subscribe', id: 's', capture: 'everything' }, /^subscribe\.capture must be one of none, metadata, redacted, full \(AEP-0003 §6\.4\)$/],
    [{ type: 'subscribed', id: '' }, /^subscribed\.id must be a non-empty string \(AEP-0003 §6\.5\)$/],
    [{ type: 'unsubscribe', id: 3 }, /^unsubscribe\.id must be a non-empty string/],
    [{ type: 'unsubscribed' }, /^unsubscribed\.id must be a non-empty string/],
    [{ type: 'roster' }, /^roster\.id must be a non-empty string \(AEP-0003 §4\.1\)$/],
    [{ type: 'roster', id: 'r', entries: {} }, /^roster\.entries must be an array of \{session, …\} \(AEP-0003 §4\.1\)$/],
    [{ type: 'roster', id: 'r', entries: [{ session: 's' }, 'x'] }, /^roster\.entries/],
    [{ type: 'roster', id: 'r', entries: [], offline: {} }, /^roster\.offline must be an array of \{request, session, agent, source, since\} \(contract C4\)$/],
    ...(['request', 'session', 'agent', 'source', 'since'] as const).map((k): [unknown, RegExp] => {
      const entry: Record<string, unknown> = { request: 'q', session: 's', agent: 'a', source: 'aep://h/agent/a', since: '2026-01-01T00:00:00Z' };
      entry[k] = k === 'request' ? '' : 7;
      return [{ type: 'roster', id: 'r', entries: [], offline: [entry] }, /^roster\.offline/];
    }),
    [{ type: 'error', code: '' }, /^error\.code must be a non-empty string \(AEP-0003 §2\.2\)$/],
    [{ type: 'error', code: 'x', detail: 1 }, /^error\.detail, id and cause must be strings \(AEP-0003 §2\.2\)$/],
    [{ type: 'error', code: 'x', id: null }, /^error\.detail, id and cause must be strings/],
    [{ type: 'error', code: 'x', cause: {} }, /^error\.detail, id and cause must be strings/],
    [{ type: 'error', code: 'x', versions: '0.1' }, /^error\.versions must be an array of strings \(AEP-0003 §4\)$/],
    [{ type: 'replay-exhausted', session: 'x', earliest: { epoch: 0, seq: 0 } }, /^replay-exhausted needs string sub and session \(AEP-0003 §5\)$/],
    [{ type: 'replay-exhausted', sub: 's', earliest: { epoch: 0, seq: 0 } }, /^replay-exhausted needs string sub and session/],
    [{ type: 'replay-exhausted', sub: 's', session: 'x' }, /^replay-exhausted\.earliest must be \{epoch, seq\} integers >= 0 \(AEP-0003 §5\)$/],
    [{ type: 'replay-exhausted', sub: 's', session: 'x', earliest: { epoch: 0 } }, /^replay-exhausted\.earliest/],
    [{ type: 'replay-exhausted', sub: 's', session: 'x', earliest: { seq: 0 } }, /^replay-exhausted\.earliest/],
    [{ type: 'closing', reason: 5 }, /^closing\.reason must be a string \(AEP-0003 §3\.5\.4\)$/],
    [{ type: 'closing', delivered: {} }, /^closing\.delivered must be an array of \{sub, session, epoch, seq\} \(AEP-0003 §3\.5\.4\)$/],
    [{ type: 'closing', delivered: [{ session: 's' }] }, /^closing\.delivered/],
    [{ type: 'closing', delivered: [{ seq: 1 }] }, /^closing\.delivered/],
    [{ type: 'closing', delivered: [7] }, /^closing\.delivered/],
  ];
  for (const [value, re] of bad) {
    const text = JSON.stringify(value);
    const m = parseSocketMessage(text);
    assert.equal(m.kind, 'invalid', text);
    assert.match(m.kind === 'invalid' ? m.reason : '', re, text);
    assert.equal(m.kind === 'invalid' && m.type, (value as { type: string }).type, `${text}: the refusal names the frame type`);
    assert.deepEqual(m.kind === 'invalid' && m.value, value, `${text}: the refusal carries the received value`);
  }
});

test('frames: edge values on the accepted side of each rule stay frames, unknown members kept', () => {
  const good: unknown[] = [
    { type: 'hello', versions: [] },
    { type: 'hello', versions: ['0.1'], identity: null, capabilities: {}, role: 'both', claim: CLAIM, extra: 1 },
    { type: 'hello', versions: ['0.1'], role: 'consumer', claim: 'b'.repeat(64) },
    { type: 'subscribe', id: 's', filter: {}, from: 'all', capture: 'none' },
    { type: 'subscribe', id: 's', from: [] },
    {
      type: 'subscribe',
      id: 's',
      from: [
        { session: '', seq: 0 },
        { session: 's', epoch: 0, seq: Number.MAX_SAFE_INTEGER },
      ],
    },
    { type: 'subscribed', id: 'x' },
    { type: 'roster', id: 'r', entries: [{ session: '' }], offline: [] },
    { type: 'roster', id: 'r', entries: [], offline: [{ request: 'q', session: '', agent: '', source: '', since: '' }] },
    { type: 'ping' },
    { type: 'pong', t: { any: 'thing' } },
    { type: 'error', code: 'x', detail: '', id: '', cause: '', versions: [] },
    { type: 'replay-exhausted', sub: '', session: '', earliest: { epoch: 0, seq: 0 } },
    { type: 'closing' },
    { type: 'closing', reason: '', delivered: [{ session: 's', seq: 0 }] },
  ];
  for (const value of good) {
    const m = classifySocketValue(value);
    assert.equal(m.kind, 'frame', JSON.stringify(m));
    assert.equal(m.kind === 'frame' && m.frame, value, 'the received object itself, not a copy');
  }
});

test('frames: a string type with a dot is an Event (envelope not checked here), without a dot and outside the catalogue it is ignored', () => {
  assert.deepEqual(classifySocketValue({ type: 'a.b' }), { kind: 'event', type: 'a.b', event: { type: 'a.b' } });
  assert.deepEqual(classifySocketValue({ type: 'hello-v2' }), { kind: 'unknown', type: 'hello-v2', value: { type: 'hello-v2' } });
  assert.deepEqual(classifySocketValue({ type: '' }), {
    kind: 'invalid',
    reason: 'a WebSocket message needs a string "type" (AEP-0003 §2)',
    value: { type: '' },
  });
  assert.deepEqual(classifySocketValue(null), { kind: 'invalid', reason: 'a WebSocket message must be one JSON object (AEP-0003 §2)', value: null });
  assert.deepEqual(parseSocketMessage('{'), { kind: 'invalid', reason: 'a WebSocket message must be JSON (AEP-0003 §2)' });
  assert.deepEqual([...FRAME_TYPES].sort(), [
    'closing',
    'error',
    'hello',
    'ping',
    'pong',
    'replay-exhausted',
    'roster',
    'subscribe',
    'subscribed',
    'unsubscribe',
    'unsubscribed',
  ]);
});

test('frame builders: absent members are omitted, given ones copied (not aliased)', () => {
  assert.deepEqual(errorFrame({ code: 'no-route' }), { type: 'error', code: 'no-route' });
  const versions = ['0.1'];
  const e = errorFrame({ code: 'version-unsupported', detail: 'd', id: 'i', cause: 'c', versions });
  assert.deepEqual(e, { type: 'error', code: 'version-unsupported', id: 'i', cause: 'c', detail: 'd', versions: ['0.1'] });
  assert.notEqual(e.versions, versions);
  assert.deepEqual(rosterReplyFrame('r', []), { type: 'roster', id: 'r', entries: [] });
  assert.ok(!('offline' in rosterReplyFrame('r', [])));
  assert.deepEqual(rosterReplyFrame('r', [], []), { type: 'roster', id: 'r', entries: [], offline: [] });
  assert.ok(isRosterReply(rosterReplyFrame('r', [])));
  assert.deepEqual(pongFrame(undefined), { type: 'pong' });
  assert.ok(!('t' in pongFrame(undefined)));
  assert.deepEqual(pongFrame(0), { type: 'pong', t: 0 });
  assert.deepEqual(subscribeFrame({ id: 's', filter: { type: 'a.*' }, from: [{ session: 's', epoch: 1, seq: 2, extra: 1 } as never], capture: 'full' }), {
    type: 'subscribe',
    id: 's',
    filter: { type: 'a.*' },
    from: [{ session: 's', epoch: 1, seq: 2 }],
    capture: 'full',
  });
  assert.deepEqual(subscribeFrame({ id: 's', from: 'all' }), { type: 'subscribe', id: 's', from: 'all' });
});
