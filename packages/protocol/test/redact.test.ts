// redact / redactValue beyond the conformance corpus: options, linear behaviour on huge inputs,
// prototype-safe keys, never mutating, configured names and values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redact, redactValue, isCredentialKey, REDACTED_SECRET, REDACTED_PII } from '@aep/protocol';

test('configured secret values: literal, longest first, short ones ignored, regex characters safe', () => {
  assert.equal(redact('a.b*c+d and a.b*c', { secretValues: ['a.b*c', 'a.b*c+d'] }), `${REDACTED_SECRET} and ${REDACTED_SECRET}`);
  assert.equal(redact('abc abcd', { secretValues: ['abc'] }), 'abc abcd');
  assert.equal(redact('x', { secretValues: [] }), 'x');
  assert.equal(redact('a     b', { secretValues: ['     ', ' ab '] }), 'a     b', 'blank or too short once trimmed: ignored');
});

test('configured secret names: NAME=value and "NAME": "value"', () => {
  assert.equal(redact('DB_PASS=abc1 other=1', { secretNames: ['DB_PASS'] }), `DB_PASS=${REDACTED_SECRET} other=1`);
  assert.equal(redact('{"DB_PASS": "q w"}', { secretNames: ['DB_PASS'] }), `{"DB_PASS": "${REDACTED_SECRET}"}`);
  assert.equal(redact('MY_DB_PASS=abc1', { secretNames: ['DB_PASS'] }), 'MY_DB_PASS=abc1', 'whole name only');
  assert.deepEqual(redactValue({ db_pass: 12, other: 'x' }, { secretNames: ['DB_PASS'] }), { db_pass: REDACTED_SECRET, other: 'x' });
});

test('credential assignments keep the key and quotes, redact the value', () => {
  assert.equal(redact('password = "two words"'), `password = "${REDACTED_SECRET}"`);
  assert.equal(redact("secret_key: 'abc'"), `secret_key: '${REDACTED_SECRET}'`);
  assert.equal(redact('clientSecret=abc'), `clientSecret=${REDACTED_SECRET}`);
  assert.equal(redact('AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG'), `AWS_SECRET_ACCESS_KEY=${REDACTED_SECRET}`);
  assert.equal(redact('Authorization: Token abcdef123'), `Authorization: ${REDACTED_SECRET}`);
});

test('PEM: an unterminated block is redacted to the end; a label mismatch too', () => {
  assert.equal(redact('x -----BEGIN PRIVATE KEY-----\nMIIE...truncated'), `x ${REDACTED_SECRET}`);
  assert.equal(redact('-----BEGIN RSA PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\ntail'), REDACTED_SECRET);
  assert.equal(redact('talk about -----BEGIN lower-----'), 'talk about -----BEGIN lower-----', 'not a PEM label');
});

test('PII opt-out keeps e-mails and phones; secrets are still redacted', () => {
  assert.equal(redact('a@b.example.org token=x1', { pii: false }), `a@b.example.org token=${REDACTED_SECRET}`);
  assert.equal(redact('a@b.example.org'), REDACTED_PII);
});

test('huge and adversarial inputs finish (linear patterns) and keep their length class', () => {
  const big = 'a'.repeat(2_000_000);
  assert.equal(redact(big), big);
  const manyAt = 'x@'.repeat(200_000);
  assert.equal(typeof redact(manyAt), 'string');
  const manyBegin = '-----BEGIN A-----'.repeat(50_000);
  assert.equal(redact(manyBegin), REDACTED_SECRET);
  const digits = '1-'.repeat(300_000);
  assert.equal(redact(digits), digits);
  const jwtish = 'eyJ'.repeat(300_000);
  assert.equal(redact(jwtish), jwtish, 'a long eyJ run without dots is not quadratic (and not a JWT)');
  assert.equal(redact('x eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. y'), `x ${REDACTED_SECRET} y`, 'an unsigned JWT still matches');
  const tokens = 'token='.repeat(100_000);
  assert.ok(!redact(tokens).includes('token=token'));
});

test('non-strings pass through redact unchanged', () => {
  assert.equal(redact(''), '');
  assert.equal(redact(undefined as unknown as string), undefined);
});

test('redactValue: never mutates, keeps __proto__ as an own key, bounded depth', () => {
  const input = JSON.parse('{"__proto__":{"password":"p"},"list":[{"token":"t"}],"s":"me@x.org"}') as Record<string, unknown>;
  const before = JSON.stringify(input);
  const out = redactValue(input) as Record<string, unknown>;
  assert.equal(JSON.stringify(input), before);
  assert.ok(Object.prototype.hasOwnProperty.call(out, '__proto__'));
  assert.equal(Object.getPrototypeOf(out), Object.prototype, 'prototype not replaced');
  assert.equal(JSON.stringify(out), `{"__proto__":{"password":"${REDACTED_SECRET}"},"list":[{"token":"${REDACTED_SECRET}"}],"s":"${REDACTED_PII}"}`);
  let deep: unknown = 'x';
  for (let i = 0; i < 2000; i++) deep = [deep];
  assert.doesNotThrow(() => redactValue(deep));
});

test('isCredentialKey: last word or last two words name a credential', () => {
  for (const k of [
    'password',
    'PASSWORD',
    'client_secret',
    'accessToken',
    'x-api-key',
    'apiKey',
    'AWS_SECRET_ACCESS_KEY',
    'private-key',
    'privatekey',
    'credentials',
    'Authorization',
    'refresh_token',
    'secretKey',
  ]) {
    assert.ok(isCredentialKey(k), k);
  }
  for (const k of ['token_count', 'tokens', 'max_tokens', 'secret_name', 'passwordless', 'key', 'name', '']) assert.ok(!isCredentialKey(k), k);
});

test('a secret right after a JSON/C escape (\\n, \\t, \\uXXXX) is still redacted (the adapter property test found it)', () => {
  const key = 'sk-proj-' + 'a1B2c3D4e5F6g7H8i9J0kLmN';
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
  const cases: Array<[string, string]> = [
    [JSON.stringify({ command: `echo hi\n${key}` }), key],
    [JSON.stringify(`a\npassword=hunter2x`), 'hunter2x'],
    [JSON.stringify(`\t${jwt}`), jwt],
    [JSON.stringify(`x\nBearer abcdefghijkl`), 'abcdefghijkl'],
    [JSON.stringify(`\n/home/alice/project`), '/home/alice'],
    [`printf "\\n${key}"`, key],
    [`\\u000a${key}`, key],
  ];
  for (const [text, secret] of cases) assert.ok(!redact(text).includes(secret), `${text} -> ${redact(text)}`);
  // Prose and ordinary words stay as they were.
  for (const text of ['bearer of good news', 'disk-usage-report-2024-long-name-xx', 'ran 42 tests, 0 failures, in 3.1s', '\\ntokenizer ready']) {
    assert.equal(redact(text), text);
  }
});
