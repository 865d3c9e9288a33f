// Small core contracts that no protocol test pinned before the mutation run (docs/testing.md):
// the level orders (AEP-0001 §8), registry lookups (AEP-0002 §4), type names (AEP-0001 §6),
// resume tokens (AEP-0001 §7.6), emitter positions (AEP-0001 §7.2), ULIDs, printable URLs
// (AEP-0003 §11), NDJSON encoding (AEP-0003 §3.1), the payload rule ids (AEP-0002 §5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CAPTURE_LEVELS,
  SEVERITIES,
  DEFAULT_CAPTURE,
  DEFAULT_SEVERITY,
  captureRank,
  severityRank,
  isCaptureLevel,
  isSeverity,
  REGISTERED_TYPES,
  registryEntry,
  isRegisteredType,
  hasPayloadSchema,
  TYPE_REGISTRY,
  isValidTypeName,
  isCommandType,
  formatResumeToken,
  parseResumeToken,
  createEmitter,
  AepError,
  cryptoRandomSource,
  isUlid,
  ulidTime,
  ulid,
  ULID_ALPHABET,
  ULID_PATTERN,
  redactUrl,
  socketUrl,
  streamUrl,
  encodeNdjson,
  encodeNdjsonLines,
  hasInvisible,
  validateEvent,
} from '@aep/protocol';

const code = (c: string) => (e: unknown) => e instanceof AepError && e.code === c;

test('levels: the two total orders, their defaults, and nothing else is a level', () => {
  assert.deepEqual(CAPTURE_LEVELS.map(captureRank), [0, 1, 2, 3]);
  assert.deepEqual(SEVERITIES.map(severityRank), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual([...SEVERITIES], ['debug', 'info', 'notice', 'warning', 'error', 'critical']);
  assert.equal(DEFAULT_CAPTURE, 'metadata');
  assert.equal(DEFAULT_SEVERITY, 'info');
  for (const v of ['toString', '__proto__', 'constructor', 'INFO', '', 3, null, undefined]) {
    assert.equal(severityRank(v), -1, String(v));
    assert.equal(captureRank(v), -1, String(v));
    assert.equal(isSeverity(v), false);
    assert.equal(isCaptureLevel(v), false);
  }
  assert.ok(isSeverity('debug') && isSeverity('critical') && !isSeverity('none'));
  assert.ok(isCaptureLevel('none') && isCaptureLevel('full') && !isCaptureLevel('info'));
});

test('registry: every generated row is registered and looked up by name; vendor and unknown names are not', () => {
  assert.equal(REGISTERED_TYPES.size, TYPE_REGISTRY.length);
  for (const row of TYPE_REGISTRY) {
    assert.ok(isRegisteredType(row.type), row.type);
    assert.equal(registryEntry(row.type), row);
    assert.equal(hasPayloadSchema(row.type), row.schema != null, row.type);
  }
  assert.ok(hasPayloadSchema('attention.requested'));
  assert.ok(
    TYPE_REGISTRY.some((r) => r.schema == null),
    'some types have no payload schema',
  );
  for (const t of ['x.acme.thing', 'tool.exploded', 'toString', '']) {
    assert.equal(isRegisteredType(t), false, t);
    assert.equal(registryEntry(t), undefined, t);
    assert.equal(hasPayloadSchema(t), false, t);
  }
});

test('type names: a core category or x.<vendor> then lower-case dotted segments; commands are control.* except the acks, or x.<vendor>.control.*', () => {
  for (const t of ['tool.completed', 'x.acme.agent.ping', 'tool.some_new_thing', 'control.cancel']) assert.ok(isValidTypeName(t), t);
  for (const t of ['Tool.completed', 'tool', 'tool.', '.tool', 'tool..x', 'tool.comp leted', 'acme.thing', 'x.acme', ''])
    assert.equal(isValidTypeName(t), false, t);
  assert.ok(isCommandType('control.attention.respond') && isCommandType('control.cancel') && isCommandType('x.acme.control.reboot'));
  assert.ok(!isCommandType('control.accepted') && !isCommandType('control.rejected') && !isCommandType('tool.control.x'));
});

test('resume tokens: formatting refuses an empty session and positions that are not integers >= 0', () => {
  assert.equal(formatResumeToken({ session: 'a:b', epoch: 0, seq: 0 }), 'a:b:0:0');
  assert.deepEqual(parseResumeToken('a:b:0:0'), { session: 'a:b', epoch: 0, seq: 0 });
  assert.throws(
    () => formatResumeToken({ session: '', epoch: 0, seq: 0 }),
    (e: unknown) => code('AEP_RESUME_INVALID')(e) && /session must be a non-empty string/.test((e as Error).message),
  );
  for (const [epoch, seq, name] of [
    [-1, 0, 'epoch'],
    [0, -1, 'seq'],
    [0.5, 0, 'epoch'],
    [0, 2 ** 53, 'seq'],
    [Number.NaN, 0, 'epoch'],
  ] as const) {
    assert.throws(
      () => formatResumeToken({ session: 's', epoch, seq }),
      (e: unknown) => code('AEP_RESUME_INVALID')(e) && (e as Error).message.includes(`${name} must be an integer`),
      `${epoch}:${seq}`,
    );
  }
});

test('emitter positions: setPosition refuses non-integer or negative values, a lower epoch, a repeated seq; accepts equal and higher', () => {
  const em = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's' });
  for (const p of [
    { epoch: -1, nextSeq: 0 },
    { epoch: 0, nextSeq: -1 },
    { epoch: 0.5, nextSeq: 0 },
    { epoch: 0, nextSeq: 1.5 },
  ]) {
    assert.throws(
      () => em.setPosition('s', p),
      (e: unknown) => code('AEP_POSITION_INVALID')(e) && /integers >= 0/.test((e as Error).message),
      JSON.stringify(p),
    );
  }
  em.setPosition('s', { epoch: 2, nextSeq: 5 });
  em.setPosition('s', { epoch: 2, nextSeq: 5 });
  assert.deepEqual(em.position('s'), { epoch: 2, nextSeq: 5 });
  assert.throws(
    () => em.setPosition('s', { epoch: 1, nextSeq: 99 }),
    (e: unknown) => code('AEP_POSITION_INVALID')(e) && /epoch 1 is below the session's epoch 2/.test((e as Error).message),
  );
  assert.throws(
    () => em.setPosition('s', { epoch: 2, nextSeq: 4 }),
    (e: unknown) => code('AEP_POSITION_INVALID')(e) && /seq 4 would repeat positions of epoch 2/.test((e as Error).message),
  );
  em.setPosition('s', { epoch: 3, nextSeq: 0 });
  const e = em.build({ type: 'progress.status', session: 's' });
  assert.equal(e.epoch, 3);
  assert.equal(e.seq, 0);
  assert.deepEqual(em.position('s'), { epoch: 3, nextSeq: 1 });
  const p = em.position('s');
  p.nextSeq = 99;
  assert.equal(em.position('s').nextSeq, 1, 'position() returns a copy');
});

test('ULIDs: no crypto means AEP_NO_RANDOM; the crypto source refills its batch; ulidTime only decodes ULIDs', () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  try {
    Object.defineProperty(globalThis, 'crypto', { value: undefined, configurable: true });
    assert.throws(() => cryptoRandomSource(), code('AEP_NO_RANDOM'));
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    assert.throws(() => cryptoRandomSource(), code('AEP_NO_RANDOM'));
  } finally {
    if (saved) Object.defineProperty(globalThis, 'crypto', saved);
  }
  const r = cryptoRandomSource();
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const x = r();
    assert.ok(x >= 0 && x < 1, String(x));
    seen.add(x);
  }
  assert.ok(seen.size > 190, 'past the first batch of 64 the values are still fresh');
  assert.equal(ULID_ALPHABET, '0123456789ABCDEFGHJKMNPQRSTVWXYZ');
  assert.ok(new RegExp(ULID_PATTERN).test(ulid(0)));
  assert.equal(ulidTime('not a ulid'), undefined);
  assert.equal(ulidTime('01arz3ndektsv4rrffq69g5fav'), undefined, 'lower case is not canonical');
  assert.equal(isUlid('8ZZZZZZZZZZZZZZZZZZZZZZZZZ'), false, 'time past 2^48-1');
  assert.equal(ulidTime('7ZZZZZZZZZZZZZZZZZZZZZZZZZ'), 2 ** 48 - 1);
  assert.equal(isUlid(42), false);
  assert.throws(() => ulid(2 ** 48), code('AEP_ULID_TIME'));
  assert.equal(
    ulid(2 ** 48 - 1, () => 0),
    '7ZZZZZZZZZ' + '0'.repeat(16),
  );
  assert.equal(
    ulid(0, () => 1),
    '0'.repeat(10) + 'Z'.repeat(16),
    'a source returning 1.0 is clamped into the alphabet',
  );
  assert.equal(
    ulid(0, () => Number.NaN),
    '0'.repeat(26),
  );
});

test('URLs: a printable URL has no credentials, query or fragment; an unparsable one is replaced', () => {
  assert.equal(redactUrl('not a url'), '<invalid url>');
  assert.equal(redactUrl('https://user:pw@h/x?access_token=t#f'), 'https://h/x');
  assert.equal(socketUrl('ws://h:1/x'), 'ws://h:1/socket');
  assert.equal(socketUrl('wss://h/x'), 'wss://h/socket');
  assert.equal(new URL(streamUrl('http://h', { accessToken: 'tok', live: true })).searchParams.get('access_token'), 'tok');
  assert.equal(new URL(streamUrl('http://h', { live: true })).searchParams.get('live'), null, 'live is the default');
});

test('NDJSON encoding refuses line breaks, blank lines and unserializable values, naming the line', () => {
  assert.equal(encodeNdjsonLines([]), '');
  assert.equal(encodeNdjson([]), '');
  assert.equal(encodeNdjsonLines(['{}', '1']), '{}\n1\n');
  assert.throws(
    () => encodeNdjsonLines(['{}', 'a\nb']),
    (e: unknown) => code('AEP_NDJSON_LINE')(e) && /line 1 holds a line break/.test((e as Error).message),
  );
  assert.throws(
    () => encodeNdjsonLines(['a\rb']),
    (e: unknown) => code('AEP_NDJSON_LINE')(e) && /line 0 holds a line break/.test((e as Error).message),
  );
  assert.throws(
    () => encodeNdjsonLines(['{}', '', '{}']),
    (e: unknown) => code('AEP_NDJSON_LINE')(e) && /line 1 is blank/.test((e as Error).message),
  );
  assert.throws(
    () => encodeNdjsonLines([' \t ']),
    (e: unknown) => code('AEP_NDJSON_LINE')(e) && /line 0 is blank/.test((e as Error).message),
  );
  assert.throws(
    () => encodeNdjson([{}, undefined]),
    (e: unknown) => code('AEP_NDJSON_LINE')(e) && /value 1 is not serializable/.test((e as Error).message),
  );
  assert.throws(() => encodeNdjson([() => 1]), code('AEP_NDJSON_LINE'));
});

test('hasInvisible: true exactly when visibleText would change the text', () => {
  assert.equal(hasInvisible('plain text'), false);
  assert.equal(hasInvisible(''), false);
  assert.equal(hasInvisible('a\u200Bb'), true);
  assert.equal(hasInvisible('evil\u202Etxt'), true);
  assert.equal(hasInvisible('\u001B[31mred'), true);
});

const EV = { aep: '0.1', id: 'E1', time: '2026-08-01T09:00:00Z', source: 'aep://conf/agent/bot/session/s', agent: 'bot', session: 's', seq: 1 };

test('payload rule ids: each schema keyword maps to its own rule (AEP-0002 §5), with the member path', () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ ...EV, type: 'run.finished', run: 'r', data: { duration_ms: -1 } }, 'payload.range', '/data/duration_ms'],
    [{ ...EV, type: 'run.finished', run: 'r', data: { duration_ms: '5' } }, 'payload.type', '/data/duration_ms'],
    [{ ...EV, type: 'attention.requested', data: { kind: 'input', prompt: 'p', expires_at: 'tomorrow' } }, 'payload.format', '/data/expires_at'],
    [{ ...EV, type: 'attention.requested', data: { kind: 'question', prompt: 'p' } }, 'payload.enum', '/data/kind'],
    [{ ...EV, type: 'tool.requested', data: {} }, 'payload.required', '/data'],
  ];
  for (const [e, rule, path] of cases) {
    const issues = validateEvent(e);
    assert.deepEqual(
      issues.map((i) => i.rule),
      [rule],
      JSON.stringify(e),
    );
    assert.ok(issues[0]!.path.startsWith(path), `${rule}: ${issues[0]!.path}`);
  }
});

test('a command without subject is command.subject-required; an attention reply without one is attention.subject-required', () => {
  const cmd = {
    aep: '0.1',
    id: 'C1',
    type: 'control.attention.respond',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://conf/agent/sender',
    agent: 'sender',
    session: 's',
    data: { answer: { option: 'a' } },
  };
  assert.deepEqual(
    validateEvent(cmd).map((i) => [i.rule, i.path]),
    [['command.subject-required', '/subject']],
  );
  const reply = { ...EV, type: 'attention.resolved', data: { resolution: 'answered' } };
  assert.deepEqual(
    validateEvent(reply).map((i) => [i.rule, i.path]),
    [['attention.subject-required', '/subject']],
  );
});
