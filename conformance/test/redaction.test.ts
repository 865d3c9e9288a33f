// Runs conformance/redaction/cases.json (written from AEP-0003 §9.4, §9) through the
// library (`redact`, `redactValue`) and through `aep redact` as a black box. Text cases are
// batched per option set through `aep redact --json` (an array of strings is redacted string by
// string); a sample also goes through plain-text mode.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { redact, redactValue } from '@aep/protocol';
import type { RedactOptions } from '@aep/protocol';
import { runAep } from '../../test/support/cli.js';

/** Runs `fn` over `items` with at most `n` subprocesses at a time (keeps CI time down on 2 cores). */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface TextCase {
  id: string;
  rule: string;
  input: string;
  options?: RedactOptions;
  expect?: string;
  mustNotContain?: string[];
  mustContain?: string[];
}
interface ValueCase {
  id: string;
  rule: string;
  input: unknown;
  expect: unknown;
}
const fixture = JSON.parse(readFileSync(new URL('../redaction/cases.json', import.meta.url), 'utf8')) as { cases: TextCase[]; values: ValueCase[] };

function check(c: TextCase, out: string): void {
  if (c.expect !== undefined) assert.equal(out, c.expect, c.id);
  for (const s of c.mustNotContain ?? []) assert.ok(!out.includes(s), `${c.id}: output still contains ${JSON.stringify(s)}: ${JSON.stringify(out)}`);
  for (const s of c.mustContain ?? []) assert.ok(out.includes(s), `${c.id}: output lacks ${JSON.stringify(s)}: ${JSON.stringify(out)}`);
}

function cliArgs(o: RedactOptions | undefined): string[] {
  const args = ['redact'];
  if (o?.home !== undefined) args.push('--home', o.home);
  else args.push('--no-home');
  for (const v of o?.secretValues ?? []) args.push('--secret-value', v);
  for (const n of o?.secretNames ?? []) args.push('--secret-name', n);
  if (o?.pii === false) args.push('--no-pii');
  return args;
}

test('redaction fixtures: every step of the pipeline and the must-not-catch rows are covered', () => {
  const rules = new Set(fixture.cases.map((c) => c.rule));
  for (const r of [
    'redaction.secret.pem',
    'redaction.secret.aws',
    'redaction.secret.bearer',
    'redaction.secret.assignment',
    'redaction.secret.jwt',
    'redaction.secret.vendor',
    'redaction.secret.configured',
    'redaction.home',
    'redaction.pii.email',
    'redaction.pii.phone',
    'redaction.pii.opt-out',
    'redaction.ordering',
    'redaction.must-not-catch',
  ]) {
    assert.ok(rules.has(r), r);
  }
  assert.equal(new Set(fixture.cases.map((c) => c.id)).size, fixture.cases.length);
});

for (const c of fixture.cases) {
  test(`${c.id} (${c.rule}) — library`, () => {
    check(c, redact(c.input, c.options ?? {}));
  });
}

for (const c of fixture.values) {
  test(`${c.id} (${c.rule}) — library`, () => {
    const before = JSON.stringify(c.input);
    assert.deepEqual(redactValue(c.input), c.expect);
    assert.equal(JSON.stringify(c.input), before, 'input not mutated');
  });
}

test('CLI `aep redact --json`: every text case, batched per option set', async () => {
  const groups = new Map<string, TextCase[]>();
  for (const c of fixture.cases) {
    const k = JSON.stringify(c.options ?? {});
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  for (const cases of groups.values()) {
    const r = await runAep([...cliArgs(cases[0]!.options), '--json'], JSON.stringify(cases.map((c) => c.input)));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as string[];
    cases.forEach((c, i) => check(c, out[i]!));
  }
});

test('CLI `aep redact --json`: structured values', async () => {
  await pool(fixture.values, 3, async (c) => {
    const r = await runAep(['redact', '--no-home', '--json'], JSON.stringify(c.input));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), c.expect, c.id);
  });
});

test('CLI `aep redact` plain-text mode: a multi-line blob of cases', async () => {
  const cases = fixture.cases.filter((c) => c.options === undefined && c.expect !== undefined && !c.input.includes('\n') && c.input !== '');
  assert.ok(cases.length >= 8);
  const r = await runAep(['redact', '--no-home'], cases.map((c) => c.input).join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\n'), [...cases.map((c) => c.expect), '']);
});

test('redaction/rules.json lists every rule id the cases use, and every listed rule has a case', () => {
  const manifest = JSON.parse(readFileSync(new URL('../redaction/rules.json', import.meta.url), 'utf8')) as {
    rules: Record<string, { section: string; meaning: string }>;
  };
  const used = new Set(([...fixture.cases, ...fixture.values] as { rule: string }[]).map((c) => c.rule));
  for (const r of used) assert.ok(r in manifest.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(manifest.rules)) {
    assert.ok(used.has(r), `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
