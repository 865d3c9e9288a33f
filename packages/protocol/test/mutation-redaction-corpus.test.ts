// The public redaction corpus (conformance/redaction/cases.json, AEP-0003 §9.4, §9) run
// through the library from the protocol's own tests, so the mutation run of packages/protocol
// (which runs only these tests, docs/testing.md) sees every pattern the corpus pins.
// conformance/test/redaction.test.ts runs the same corpus through the library and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { redact, redactValue, REDACTED_SECRET } from '@aep/protocol';
import type { RedactOptions } from '@aep/protocol';

interface TextCase {
  id: string;
  input: string;
  options?: RedactOptions;
  expect?: string;
  mustNotContain?: string[];
  mustContain?: string[];
}
interface ValueCase {
  id: string;
  input: unknown;
  expect: unknown;
}
const fixture = JSON.parse(readFileSync(new URL('../../../conformance/redaction/cases.json', import.meta.url), 'utf8')) as {
  cases: TextCase[];
  values: ValueCase[];
};

test('every text case of the redaction corpus', () => {
  assert.ok(fixture.cases.length > 20);
  for (const c of fixture.cases) {
    const out = redact(c.input, c.options ?? {});
    if (c.expect !== undefined) assert.equal(out, c.expect, c.id);
    for (const s of c.mustNotContain ?? []) assert.ok(!out.includes(s), `${c.id}: still contains ${JSON.stringify(s)}: ${JSON.stringify(out)}`);
    for (const s of c.mustContain ?? []) assert.ok(out.includes(s), `${c.id}: lacks ${JSON.stringify(s)}: ${JSON.stringify(out)}`);
  }
});

test('every structured case of the redaction corpus', () => {
  for (const c of fixture.values) assert.deepEqual(redactValue(c.input), c.expect, c.id);
});

test('configured secret names: a quoted value without its closing quote is redacted to the end of the line; empty names are ignored', () => {
  assert.equal(redact('DB_PASS="abc def\nnext', { secretNames: ['DB_PASS'] }), `DB_PASS="${REDACTED_SECRET}\nnext`);
  assert.equal(redact("DB_PASS: 'x y'", { secretNames: ['DB_PASS'] }), `DB_PASS: '${REDACTED_SECRET}'`);
  assert.equal(redact('DB_PASS=abc', { secretNames: ['', 'DB_PASS'] }), `DB_PASS=${REDACTED_SECRET}`);
  assert.equal(redact('X=abc1', { secretNames: [''] }), 'X=abc1');
  assert.equal(redact('A.B=abc1 AxB=abc1', { secretNames: ['A.B'] }), `A.B=${REDACTED_SECRET} AxB=abc1`, 'names are literal, not patterns');
  // Many distinct name sets (the compiled patterns are cached and the cache is bounded).
  for (let i = 0; i < 80; i++) assert.equal(redact(`N${i}=v4lue`, { secretNames: [`N${i}`] }), `N${i}=${REDACTED_SECRET}`);
});

test('redactValue: absurd nesting fails closed instead of overflowing', () => {
  let deep: unknown = 'leaf';
  for (let i = 0; i < 600; i++) deep = [deep];
  let v = redactValue(deep);
  let depth = 0;
  while (Array.isArray(v)) {
    v = v[0];
    depth++;
  }
  assert.equal(v, REDACTED_SECRET);
  assert.ok(depth > 500 && depth < 600, String(depth));
});
