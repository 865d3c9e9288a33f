// Survivors of the issue 20 mutation run on redact.ts (docs/testing.md), killed: the §9.4
// redaction of free text at capture `redacted` is the project's security boundary, so each
// credential key word and auth scheme is pinned by an input only it redacts, every pattern
// redacts every occurrence (not one per pass of the fixpoint loop), the PEM label check, the
// home-directory rewriting (configured home, its trailing separators, the boundaries), the
// phone digit bounds, the structured key splitting, malformed options and the depth limit.
// Precision rows (text that must stay as is) pin the boundaries: redacting more is legal, but a
// pattern that lost its boundary shreds ordinary text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redact, redactValue, isCredentialKey, REDACTED_SECRET, REDACTED_PII } from '@aep/protocol';
import type { RedactOptions } from '@aep/protocol';

const S = REDACTED_SECRET;
const P = REDACTED_PII;

test('private key and access key, spelled as one word or with _ or -, are credential key words in text', () => {
  for (const k of ['privatekey', 'PRIVATEKEY', 'private_key', 'Private-Key', 'accesskey', 'ACCESSKEY', 'access_key', 'Access-Key']) {
    assert.equal(redact(`${k}=s3cr3tval`), `${k}=${S}`, k);
    assert.equal(redact(`${k}: s3cr3tval`), `${k}: ${S}`, k);
  }
});

test('"key", "private" and "access" alone are not credential key words', () => {
  for (const t of ['key=abc', 'sort key: name', 'repo private: true', 'access: granted', 'visibility = private']) {
    assert.equal(redact(t), t, t);
  }
});

test('a lower-case key word glued to a preceding word is not a credential key (autotoken, nopassword)', () => {
  for (const t of ['autotoken=on', 'nopassword: yes', 'xapi_key=1']) assert.equal(redact(t), t, t);
  // ...while after a separator or in camelCase it is
  assert.equal(redact('auto_token=on'), `auto_token=${S}`);
  assert.equal(redact('autoToken=on'), `autoToken=${S}`);
});

test('every auth scheme word takes its (short) credential with it: Bearer, Basic, Token, Digest, Negotiate', () => {
  for (const scheme of ['Bearer', 'BEARER', 'Basic', 'basic', 'Token', 'Digest', 'DIGEST', 'Negotiate', 'negotiate']) {
    const out = redact(`Authorization: ${scheme} abc12`);
    assert.equal(out, `Authorization: ${S}`, scheme);
    assert.ok(!out.includes('abc12'), scheme);
  }
  assert.equal(redact('authorization: Digest username="bob", realm="x"'), `authorization: ${S} realm="x"`);
});

test('"Bearer" glued to a preceding word is no bearer token', () => {
  assert.equal(redact('The AntiBearer strategy works'), 'The AntiBearer strategy works');
  assert.equal(redact('use Bearer strategy1'), `use ${S}`);
});

test('every occurrence is redacted, more than the fixpoint loop has passes (each pattern is global)', () => {
  const five = (f: (i: number) => string) => [1, 2, 3, 4, 5].map(f).join(' ');
  const cases: [string, string][] = [
    [five((i) => `password=pw${i}`), five(() => `password=${S}`)],
    [five((i) => `eyJhbGci${i}.eyJzdWI${i}.sig${i}`), five(() => S)],
    [five((i) => `Bearer abcdefgh${i}`), five(() => S)],
    [[`ghp_${'a'.repeat(20)}`, `glpat-${'b'.repeat(20)}`, `xoxb-${'c'.repeat(10)}`, `sk-${'d'.repeat(20)}`, `AIza${'e'.repeat(35)}`].join(' '), five(() => S)],
    [five((i) => `/home/user${i}`), five(() => '~')],
    [five((i) => `555-123-456${i}`), five(() => P)],
  ];
  for (const [input, expected] of cases) assert.equal(redact(input), expected, input);
  assert.equal(
    redact(
      five((i) => `/opt/me/f${i}`),
      { home: '/opt/me' },
    ),
    five((i) => `~/f${i}`),
  );
  assert.equal(redact('DB_PASS=a1 DB_PASS=b2', { secretNames: ['DB_PASS'] }), `DB_PASS=${S} DB_PASS=${S}`);
});

test('a BEGIN line whose label is not 1-64 upper-case letters, digits or spaces is no PEM block', () => {
  const long = 'A'.repeat(65);
  const t = `-----BEGIN ${long}-----\nhello\n-----END ${long}-----`;
  assert.equal(redact(t), t, '65 characters');
  const mixed = `-----BEGIN Example CERT-----\nhello\n-----END Example CERT-----`;
  assert.equal(redact(mixed), mixed, 'lower-case letters');
  const max = 'B'.repeat(64);
  assert.equal(redact(`a -----BEGIN ${max}-----\nhello\n-----END ${max}----- b`), `a ${S} b`, '64 characters');
  assert.equal(redact('-----BEGIN without closing dashes'), '-----BEGIN without closing dashes');
});

test('the END marker is searched after the BEGIN line: one sharing its dashes does not end the block', () => {
  assert.equal(redact('-----BEGIN X-----END X----- tail'), S, 'unterminated: redacted to the end');
  assert.equal(redact('-----BEGIN X-----\nk\n-----END X----- tail'), `${S} tail`);
});

test('configured home: rewritten to ~ whatever its trailing separators, only at a path boundary', () => {
  assert.equal(redact('cd /srv/alice/src && ls /srv/alice', { home: '/srv/alice' }), 'cd ~/src && ls ~');
  for (const home of ['/srv/alice/', '/srv/alice//', 'C:\\srv\\alice\\']) {
    const p = home.startsWith('C:') ? 'C:\\srv\\alice\\x' : '/srv/alice/x';
    assert.equal(redact(p, { home }), home.startsWith('C:') ? '~\\x' : '~/x', home);
  }
  assert.equal(redact('/srv/alicea/x', { home: '/srv/alice' }), '/srv/alicea/x', 'another directory');
  assert.equal(redact('https://example.com/opt/me', { home: '/opt/me' }), 'https://example.com/opt/me', 'inside a URL path');
});

test('a home that names no directory (/, \\\\, ., empty) rewrites nothing', () => {
  for (const home of ['/', '\\', '//', '.', '']) {
    for (const t of ['cd / && ls', 'see . here', 'a / b \\ c']) assert.equal(redact(t, { home }), t, `${JSON.stringify(home)}: ${t}`);
  }
});

test('generic home prefixes are rewritten only at a path boundary, not inside a URL path', () => {
  assert.equal(redact('https://example.com/home/page'), 'https://example.com/home/page');
  assert.equal(redact('x /Users/bob/y and C:/Users/bob/y'), 'x ~/y and ~/y');
  assert.equal(redact('C:\\Users\\bob\\y'), '~\\y');
});

test('phone numbers: a +number needs 8 to 15 digits; digits glued to a word by - . + / are no phone number', () => {
  assert.equal(redact('call +1 234 5678'), `call ${P}`, '8 digits');
  assert.equal(redact('call +41 44 668 18'), `call ${P}`, '9 digits');
  assert.equal(redact('call +123 4567 8901 2345'), `call ${P}`, '15 digits');
  assert.equal(redact('diff +1 234 567'), 'diff +1 234 567', '7 digits');
  assert.equal(redact('id +12 3456 7890 1234 5678'), 'id +12 3456 7890 1234 5678', '18 digits');
  for (const t of ['SR-555-123-4567', 'build.555-123-4567', 'path/555-123-4567']) assert.equal(redact(t), t, t);
  assert.equal(redact('SR 555-123-4567'), `SR ${P}`);
});

test('configured names and values: non-string and empty entries are ignored, never thrown on', () => {
  const opts = { secretNames: [null, 42, '', 'DB_PASS'], secretValues: [1234, null, 'hunter22'] } as unknown as RedactOptions;
  assert.equal(redact('ratio = 3 DB_PASS=x1 pw hunter22 n 1234', opts), `ratio = 3 DB_PASS=${S} pw ${S} n 1234`);
  assert.equal(redact('ratio = 3', { secretNames: [] }), 'ratio = 3');
  assert.equal(redact('ratio = 3', { secretNames: [''] }), 'ratio = 3');
  // The structured walk the same way: the junk is skipped, the real name still redacts its key.
  assert.deepEqual(redactValue({ db_pass: 'x1', ratio: 3, '': 'kept' }, opts), { db_pass: S, ratio: 3, '': 'kept' });
});

test('configured names: each name of a list is matched on its own, and a list never reuses the pattern of another', () => {
  assert.equal(redact('DB_PASS=a1 API_TOKEN2=b2', { secretNames: ['DB_PASS', 'API_TOKEN2'] }), `DB_PASS=${S} API_TOKEN2=${S}`);
  assert.equal(redact('AB=1 C=2 BC=3', { secretNames: ['AB', 'C'] }), `AB=${S} C=${S} BC=3`);
  assert.equal(redact('AB=1 A=2 BC=3', { secretNames: ['A', 'BC'] }), `AB=1 A=${S} BC=${S}`);
});

test('structured keys: credential, accesskey, secretkey, and keys with a trailing separator', () => {
  for (const k of ['credential', 'accesskey', 'secretkey', 'password_', 'api-key-', 'token.', '_token_', 'AccessKey ']) {
    assert.ok(isCredentialKey(k), k);
    assert.deepEqual(redactValue({ [k]: 'hunter22', other: 'hunter22' }), { [k]: S, other: 'hunter22' }, k);
  }
  for (const k of ['key', '_', '', 'tokens_count']) assert.ok(!isCredentialKey(k), k);
});

test('a __proto__ key stays an ordinary own data property, as JSON.parse made it', () => {
  const out = redactValue(JSON.parse('{"__proto__": {"k": "v"}, "b": 1}')) as Record<string, unknown>;
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__'), { value: { k: 'v' }, writable: true, enumerable: true, configurable: true });
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
});

test('nesting deeper than 512 levels of objects or arrays is redacted; 512 is walked', () => {
  const arrays = (n: number, leaf: unknown): unknown => (n === 0 ? leaf : [arrays(n - 1, leaf)]);
  const objects = (n: number, leaf: unknown): unknown => (n === 0 ? leaf : { a: objects(n - 1, leaf) });
  for (const nest of [arrays, objects]) {
    // n containers: the innermost sits at depth n - 1
    assert.deepEqual(redactValue(nest(513, 'ok')), nest(513, 'ok'), `${nest.name}: depth 512`);
    assert.deepEqual(redactValue(nest(514, 'ok')), nest(513, S), `${nest.name}: depth 513`);
    assert.deepEqual(redactValue(nest(600, 'ok')), nest(513, S), `${nest.name}: depth 599`);
  }
});
