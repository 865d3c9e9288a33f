// The wire layer (issue 13 item 3): SSE codec, NDJSON bodies, WS frames, ULIDs, binding URLs.
// Round trips, the brief's wire-hygiene rules (AEP-0003 §3.3, AEP-0003 §10) and input tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  encodeSseEvent,
  encodeSseMessage,
  encodeSseComment,
  encodeReplayExhausted,
  SSE_PING,
  SseParser,
  parseSse,
  parseSseComment,
  splitNdjson,
  parseNdjson,
  encodeNdjson,
  encodeNdjsonLines,
  helloFrame,
  relayHelloFrame,
  subscribeFrame,
  subscribedFrame,
  unsubscribeFrame,
  unsubscribedFrame,
  rosterRequestFrame,
  rosterReplyFrame,
  pingFrame,
  pongFrame,
  errorFrame,
  replayExhaustedFrame,
  closingFrame,
  encodeFrame,
  parseSocketMessage,
  isRosterReply,
  generateClaim,
  isClaim,
  base64url,
  CLAIM_PATTERN,
  ulid,
  monotonicFactory,
  isUlid,
  ulidTime,
  createEmitter,
  socketUrl,
  streamUrl,
  eventsUrl,
  redactUrl,
  selectVersion,
  isEventType,
  AepError,
} from '@aep/protocol';
import type { SseItem } from '@aep/protocol';

const EVENT = {
  aep: '0.1',
  id: '01JX9YB4RQ000000000000GOLD',
  type: 'tool.completed',
  time: '2026-07-03T10:15:09.000Z',
  source: 'aep://h/agent/a/session/s_8f2c',
  agent: 'a',
  session: 's_8f2c',
  seq: 187,
  data: { status: 'success' },
};

test('SSE: an Event message is event/data/id lines, LF only, one-line data with exactly one space, blank-line terminated', () => {
  const json = JSON.stringify(EVENT);
  const msg = encodeSseEvent(EVENT.type, json, { session: 's_8f2c', epoch: 0, seq: 187 });
  assert.equal(msg, `event: tool.completed\ndata: ${json}\nid: s_8f2c:0:187\n\n`);
  assert.ok(!msg.includes('\r'), 'no CR anywhere (AEP-0003 §10)');
  // The checker's readers: split on \n\n, and ^data: (.+)$ with exactly one space.
  const block = msg.split('\n\n')[0]!;
  const data = block
    .split('\n')
    .map((l) => /^data: (.+)$/.exec(l)?.[1])
    .find((x) => x !== undefined);
  assert.deepEqual(JSON.parse(data!), EVENT);
  // No position: no id line (agent-scoped and seq-less Events, AEP-0003 §3.3).
  assert.equal(encodeSseEvent('agent.heartbeat', '{}'), 'event: agent.heartbeat\ndata: {}\n\n');
});

test('SSE: the encoder refuses multi-line data and event names, drops an id that cannot be one line', () => {
  assert.throws(
    () => encodeSseMessage({ data: '{\n"a":1}' }),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_SSE_LINE',
  );
  assert.throws(
    () => encodeSseMessage({ data: '{"a":1}\r' }),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_SSE_LINE',
  );
  assert.throws(
    () => encodeSseMessage({ event: 'a\nb', data: '{}' }),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_SSE_LINE',
  );
  assert.equal(encodeSseEvent('x.y', '{}', { session: 'evil\nid: forged', epoch: 0, seq: 1 }), 'event: x.y\ndata: {}\n\n');
});

test('SSE: comments and the replay-exhausted marker are one line each; an untrusted session cannot inject lines', () => {
  assert.equal(SSE_PING, ': ping\n\n');
  assert.equal(encodeReplayExhausted('s_8f2c', { epoch: 3, seq: 17 }), ': replay-exhausted s_8f2c 3:17\n\n');
  assert.equal(encodeReplayExhausted('a\r\nevent: x', { epoch: 0, seq: 1 }), ': replay-exhausted a??event: x 0:1\n\n');
  assert.equal(encodeSseComment('hello\nworld'), ': hello?world\n\n');
});

test('SSE parser: messages, structured comments (ping, replay-exhausted parsed, others kept) in stream order', () => {
  const json = JSON.stringify(EVENT);
  const body =
    encodeReplayExhausted('s with: spaces', { epoch: 2, seq: 9 }) +
    SSE_PING +
    encodeSseEvent(EVENT.type, json, { session: 's_8f2c', epoch: 0, seq: 187 }) +
    ': something else\n\n';
  assert.deepEqual(parseSse(body), [
    { kind: 'replay-exhausted', session: 's with: spaces', earliest: { epoch: 2, seq: 9 } },
    { kind: 'ping' },
    { kind: 'message', event: 'tool.completed', data: json, id: 's_8f2c:0:187' },
    { kind: 'comment', text: 'something else' },
  ]);
});

test('SSE parser: WHATWG rules (CRLF/CR, BOM, multi-line data joined, no data = no dispatch, unterminated block dropped)', () => {
  const cases: [string, SseItem[]][] = [
    ['data: a\r\ndata: b\r\n\r\n', [{ kind: 'message', event: 'message', data: 'a\nb' }]],
    [
      'data:a\r\rdata: b\n\n',
      [
        { kind: 'message', event: 'message', data: 'a' },
        { kind: 'message', event: 'message', data: 'b' },
      ],
    ],
    ['\uFEFFevent: x.y\ndata: 1\n\n', [{ kind: 'message', event: 'x.y', data: '1' }]],
    ['event: x.y\nid: 7\n\n', []],
    ['data\n\n', [{ kind: 'message', event: 'message', data: '' }]],
    ['retry: 10\nfoo: bar\ndata:  two spaces\n\n', [{ kind: 'message', event: 'message', data: ' two spaces' }]],
    ['data: complete\n\ndata: never terminated\n', [{ kind: 'message', event: 'message', data: 'complete' }]],
    [':no space\n\n', [{ kind: 'comment', text: 'no space' }]],
    [': replay-exhausted s 01:2\n\n', [{ kind: 'comment', text: 'replay-exhausted s 01:2' }]],
    [': replay-exhausted 0:2\n\n', [{ kind: 'comment', text: 'replay-exhausted 0:2' }]],
    ['data: x\r', []],
    ['data: x\r\r', [{ kind: 'message', event: 'message', data: 'x' }]],
  ];
  for (const [body, want] of cases) assert.deepEqual(parseSse(body), want, JSON.stringify(body));
  assert.deepEqual(parseSseComment('replay-exhausted a:b:c 4:5'), { kind: 'replay-exhausted', session: 'a:b:c', earliest: { epoch: 4, seq: 5 } });
});

test('SSE parser: a CRLF split between chunks is one line end; the sticky last event id is kept; a line past the limit throws', () => {
  const p = new SseParser();
  assert.deepEqual(p.push('data: a\r'), []);
  assert.deepEqual(p.push('\n\r'), []);
  assert.deepEqual(p.push('\nid: s:0:1\ndata: b\n\ndata: c\n\n'), [
    { kind: 'message', event: 'message', data: 'a' },
    { kind: 'message', event: 'message', data: 'b', id: 's:0:1' },
    { kind: 'message', event: 'message', data: 'c' },
  ]);
  assert.equal(p.lastEventId, 's:0:1');
  const small = new SseParser({ maxLineLength: 16 });
  assert.throws(
    () => small.push('data: ' + 'x'.repeat(32)),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_SSE_LINE_TOO_LONG',
  );
});

test('NDJSON: split tolerates CRLF and skips blank lines while keeping physical line numbers; encode is LF with a trailing newline', () => {
  assert.deepEqual(splitNdjson('{"a":1}\r\n\n  \r\n{"b":2}\n'), [
    { line: 0, text: '{"a":1}' },
    { line: 3, text: '{"b":2}' },
  ]);
  assert.deepEqual(splitNdjson(''), []);
  assert.deepEqual(splitNdjson('{"a":1}'), [{ line: 0, text: '{"a":1}' }]);
  const r = parseNdjson('{"a":1}\n\n{bad\n');
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.line, 2);
  const body = encodeNdjson([EVENT, { ...EVENT, seq: 188 }]);
  assert.equal(body, `${JSON.stringify(EVENT)}\n${JSON.stringify({ ...EVENT, seq: 188 })}\n`);
  const back = parseNdjson(body);
  assert.ok(back.ok);
  assert.deepEqual(back.ok && back.values.map((v) => v.value), [EVENT, { ...EVENT, seq: 188 }]);
  assert.equal(encodeNdjson([]), '');
  assert.throws(
    () => encodeNdjsonLines(['{"a":\n1}']),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_NDJSON_LINE',
  );
  assert.throws(
    () => encodeNdjsonLines(['  ']),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_NDJSON_LINE',
  );
});

test('frames: every builder round-trips through the parser as the same typed frame', () => {
  const claim = generateClaim();
  const frames = [
    helloFrame({
      role: 'both',
      identity: { agent: 'a', instance: 'h/1' },
      capabilities: { control: { accepts: ['control.cancel'], ack_window_ms: 10_000 } },
      claim,
    }),
    helloFrame(),
    relayHelloFrame({ roster: {}, replay: { buffer: 8, all: true } }),
    subscribeFrame({ id: 'sub-1', filter: { type: ['attention.*'] }, from: [{ session: 's', epoch: 0, seq: 3 }], capture: 'metadata' }),
    subscribeFrame({ id: 'sub-2', from: 'all' }),
    subscribedFrame('sub-1'),
    unsubscribeFrame('sub-1'),
    unsubscribedFrame('sub-1'),
    rosterRequestFrame('r-1'),
    rosterReplyFrame(
      'r-1',
      [{ session: 's', agent: 'a', control: { accepts: [] } }],
      [{ request: 'q', session: 's', agent: 'a', source: 'aep://h/agent/a/session/s', since: '2026-01-01T00:00:00Z' }],
    ),
    pingFrame(42),
    pongFrame(42),
    pongFrame(undefined),
    errorFrame({ code: 'no-route', cause: 'c1', detail: 'the emitter that raised request q is offline' }),
    errorFrame({ code: 'version-unsupported', versions: ['0.1'] }),
    replayExhaustedFrame('sub-1', 's', { epoch: 0, seq: 4 }),
    closingFrame('shutdown', [{ sub: 'sub-1', session: 's', epoch: 0, seq: 9 }]),
  ];
  for (const f of frames) {
    const m = parseSocketMessage(encodeFrame(f));
    assert.equal(m.kind, 'frame', JSON.stringify(m));
    assert.deepEqual(m.kind === 'frame' && m.frame, f);
  }
  assert.deepEqual(helloFrame(), { type: 'hello', versions: ['0.1'] });
  assert.deepEqual(subscribeFrame({ id: 'x', filter: {} }), { type: 'subscribe', id: 'x' }, 'an empty filter is omitted');
  assert.deepEqual(Object.keys(helloFrame({ role: 'emitter', claim, identity: {}, capabilities: {} })), [
    'type',
    'versions',
    'role',
    'identity',
    'capabilities',
    'claim',
  ]);
  const roster = parseSocketMessage('{"type":"roster","id":"r"}');
  assert.ok(roster.kind === 'frame' && roster.frame.type === 'roster' && !isRosterReply(roster.frame));
});

test('frames: the parser tells Events, unknown frames (ignored) and malformed frames apart, and never throws', () => {
  assert.deepEqual(parseSocketMessage(JSON.stringify(EVENT)).kind, 'event');
  assert.deepEqual(parseSocketMessage('{"type":"x-future","a":1}'), { kind: 'unknown', type: 'x-future', value: { type: 'x-future', a: 1 } });
  const bad: [string, RegExp][] = [
    ['not json', /must be JSON/],
    ['[1]', /one JSON object/],
    ['{"t":1}', /string "type"/],
    ['{"type":"hello"}', /hello\.versions/],
    ['{"type":"hello","versions":["0.1"],"role":"admin"}', /hello\.role/],
    ['{"type":"hello","versions":["0.1"],"claim":"short"}', /hello\.claim/],
    ['{"type":"subscribe","id":""}', /subscribe\.id/],
    ['{"type":"subscribe","id":"s","from":{}}', /subscribe\.from/],
    ['{"type":"subscribe","id":"s","capture":"toString"}', /subscribe\.capture/],
    ['{"type":"roster","id":"r","entries":[{}]}', /roster\.entries/],
    ['{"type":"roster","id":"r","entries":[],"offline":[{"request":"q"}]}', /roster\.offline/],
    ['{"type":"error"}', /error\.code/],
    ['{"type":"replay-exhausted","sub":"s","session":"x","earliest":{"epoch":-1,"seq":0}}', /earliest/],
  ];
  for (const [text, re] of bad) {
    const m = parseSocketMessage(text);
    assert.equal(m.kind, 'invalid', text);
    assert.match(m.kind === 'invalid' ? m.reason : '', re, text);
  }
  assert.throws(
    () => helloFrame({ claim: 'x' }),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_FRAME_INVALID',
  );
  assert.throws(
    () => helloFrame({ role: 'admin' as never }),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_FRAME_INVALID',
  );
});

test('claims: 43 base64url characters from 32 random bytes, distinct per call; base64url matches RFC 4648 §5', () => {
  const a = generateClaim();
  const b = generateClaim();
  assert.match(a, new RegExp(CLAIM_PATTERN));
  assert.equal(a.length, 43);
  assert.notEqual(a, b);
  assert.ok(isClaim(a) && !isClaim('a'.repeat(21)) && !isClaim('a'.repeat(65)) && !isClaim('a'.repeat(30) + '='));
  assert.equal(
    generateClaim((bytes) => bytes.fill(0xff)),
    '_'.repeat(42) + '8',
  );
  for (const s of ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar']) {
    assert.equal(base64url(new TextEncoder().encode(s)), Buffer.from(s).toString('base64url'));
  }
});

test('ULID: 26 Crockford characters, time-decodable; monotonic within a millisecond and when the clock goes back', () => {
  const id = ulid(1_700_000_000_000);
  assert.ok(isUlid(id));
  assert.equal(ulidTime(id), 1_700_000_000_000);
  let i = 0;
  const fixed = () => [0.5, 0.999999][i++ % 2]!;
  const next = monotonicFactory(fixed);
  const ids = [next(1000), next(1000), next(999), next(1001)];
  for (let k = 1; k < ids.length; k++) assert.ok(ids[k - 1]! < ids[k]!, `${ids[k - 1]} < ${ids[k]}`);
  assert.equal(ulidTime(ids[2]!), 1000, 'a clock going back keeps the last time');
  assert.equal(ids[1]!.slice(10), incrementB32(ids[0]!.slice(10)));
  assert.equal(monotonicFactory(() => 0)(0), '0'.repeat(26));
  assert.throws(
    () => ulid(-1),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_ULID_TIME',
  );
  const saturated = monotonicFactory(() => 0.99999999);
  saturated(5);
  assert.throws(
    () => saturated(5),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_ULID_OVERFLOW',
  );
});

function incrementB32(s: string): string {
  const A = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const c = s.split('');
  for (let i = c.length - 1; i >= 0; i--) {
    const k = A.indexOf(c[i]!);
    if (k < 31) {
      c[i] = A[k + 1]!;
      break;
    }
    c[i] = '0';
  }
  return c.join('');
}

test('ULID: the event builder takes its ids from the same generator (injected randomness pins them)', () => {
  const b = createEmitter({ source: 'aep://h/agent/a', agent: 'a', now: () => 1000, random: () => 0 });
  const e1 = b.build({ type: 'agent.heartbeat' });
  const e2 = b.build({ type: 'agent.heartbeat' });
  const ref = monotonicFactory(() => 0);
  assert.equal(e1.id, ref(1000));
  assert.equal(e2.id, ref(1000));
});

test('binding URLs: fixed origin-root paths, ws(s) for the socket, the stream query, tokens only when asked, printable URLs', () => {
  assert.equal(eventsUrl('http://h:1/base/?x=1'), 'http://h:1/events');
  assert.equal(socketUrl('https://h/base'), 'wss://h/socket');
  assert.equal(socketUrl('http://h:8787', { accessToken: 't k' }), 'ws://h:8787/socket?access_token=t+k');
  const u = new URL(
    streamUrl('http://h:1/x', { filter: { type: 'attention.*' }, capture: 'metadata', from: [{ session: 's', epoch: 0, seq: 2 }], live: false }),
  );
  assert.equal(u.pathname, '/stream');
  assert.deepEqual(JSON.parse(u.searchParams.get('filter')!), { type: 'attention.*' });
  assert.equal(u.searchParams.get('capture'), 'metadata');
  assert.deepEqual(JSON.parse(u.searchParams.get('from')!), [{ session: 's', epoch: 0, seq: 2 }]);
  assert.equal(u.searchParams.get('live'), '0');
  assert.equal(u.searchParams.get('access_token'), null);
  assert.equal(streamUrl('http://h:1', { filter: {}, from: 'all' }), 'http://h:1/stream?from=all');
  assert.equal(redactUrl('ws://u:p@h:1/socket?access_token=secret#x'), 'ws://h:1/socket');
  assert.equal(selectVersion(['9.9', '0.1']), '0.1');
  assert.equal(selectVersion(['9.9']), undefined);
  assert.ok(isEventType('a.b') && !isEventType('hello'));
});
