// Runs conformance/capture-gating/*.json (written from AEP-0002 §5.3, §7, AEP-0006) through the library and
// through the `aep form` CLI as a black box: answer gating (gateFormValues), answer validation
// (validateFormAnswer: the MUST-reject rules + hardening) and request-side capture
// (buildAttentionRequestData).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gateFormValues, validateFormAnswer, buildAttentionRequestData, FORM_RULES } from '@aep/protocol';
import type { CaptureLevel, FieldSpec, FormConstraints } from '@aep/protocol';
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

const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../capture-gating/${name}`, import.meta.url), 'utf8')) as T;

interface GateCase {
  id: string;
  rule: string;
  ceiling: CaptureLevel;
  fields: FieldSpec[];
  values: Record<string, unknown>;
  expect: Record<string, unknown>;
}
interface AnswerCase {
  id: string;
  fields: FieldSpec[];
  values: unknown;
  strict: boolean;
  constraints?: FormConstraints;
  expect: { rule: string; path: string }[];
}
interface RequestCase {
  id: string;
  capture: CaptureLevel;
  agent: string;
  subject?: string;
  placeholder?: 'id' | 'index';
  home?: string;
  input: never;
  expect: unknown;
}

const gating = load<{ cases: GateCase[] }>('cases.json');
const answers = load<{ cases: AnswerCase[] }>('answers.json');
const requests = load<{ cases: RequestCase[] }>('requests.json');

const sortIssues = (l: { rule: string; path: string }[]) => l.map((i) => `${i.rule} ${i.path}`).sort();

test('capture-gating fixtures: the 6 pinned cases and every ceiling of the worked example are present', () => {
  const ids = new Set(gating.cases.map((c) => c.id));
  for (const n of [1, 2, 3, 4, 5, 6])
    assert.ok(
      [...ids].some((id) => id.startsWith(`gate-${n}-`)),
      `pinned case ${n}`,
    );
  for (const level of ['none', 'metadata', 'redacted', 'full'])
    assert.ok(
      gating.cases.some((c) => c.ceiling === level),
      level,
    );
  assert.equal(ids.size, gating.cases.length, 'case ids are unique');
  assert.ok(answers.cases.some((c) => c.expect.some((i) => i.rule === 'form.required-missing')));
  assert.ok(answers.cases.some((c) => c.expect.some((i) => i.rule === 'form.choice-forged')));
});

for (const c of gating.cases) {
  test(`gate ${c.id} (${c.rule}) — library`, () => {
    const before = JSON.stringify(c.values);
    assert.deepEqual(gateFormValues(c.fields, c.values, c.ceiling), c.expect);
    assert.equal(JSON.stringify(c.values), before, 'input not mutated');
  });
}

test('gate — CLI `aep form gate` on every case', async () => {
  await pool(gating.cases, 3, async (c) => {
    const r = await runAep(['form', 'gate', '--ceiling', c.ceiling], JSON.stringify({ fields: c.fields, values: c.values }));
    assert.equal(r.code, 0, `${c.id}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), c.expect, c.id);
  });
});

for (const c of answers.cases) {
  test(`validate ${c.id} — library`, () => {
    const issues = validateFormAnswer(c.fields, c.values, { strict: c.strict, ...(c.constraints ? { constraints: c.constraints } : {}) });
    assert.deepEqual(sortIssues(issues), sortIssues(c.expect));
    for (const i of issues) assert.ok(i.section.length > 0 && i.message.includes(i.rule), `${i.rule} has a section and a message naming it`);
  });
}

test('answers.json covers every rule of FORM_RULES', () => {
  const seen = new Set(answers.cases.flatMap((c) => c.expect.map((i) => i.rule)));
  assert.deepEqual(
    Object.keys(FORM_RULES).filter((r) => !seen.has(r)),
    [],
  );
});

test('validate — CLI `aep form validate` on every case (exit 0 valid, 1 invalid)', async () => {
  // `aep form validate` reads {fields, values}: constraint cases run through the library only.
  await pool(
    answers.cases.filter((c) => c.constraints === undefined),
    3,
    async (c) => {
      const args = ['form', 'validate', ...(c.strict ? [] : ['--must-only'])];
      const r = await runAep(args, JSON.stringify({ fields: c.fields, values: c.values }));
      assert.equal(r.code, c.expect.length === 0 ? 0 : 1, `${c.id}: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as { valid: boolean; issues: { rule: string; path: string }[] };
      assert.equal(out.valid, c.expect.length === 0, c.id);
      assert.deepEqual(sortIssues(out.issues), sortIssues(c.expect), c.id);
    },
  );
});

for (const c of requests.cases) {
  test(`request ${c.id} — library`, () => {
    const data = buildAttentionRequestData(c.input, c.capture, {
      agent: c.agent,
      ...(c.subject !== undefined ? { subject: c.subject } : {}),
      ...(c.placeholder ? { placeholder: c.placeholder } : {}),
      redaction: c.home !== undefined ? { home: c.home } : {},
    });
    assert.deepEqual(data ?? null, c.expect);
  });
}

test('request — CLI `aep form request` on every case', async () => {
  await pool(requests.cases, 3, async (c) => {
    const args = ['form', 'request', '--capture', c.capture, '--agent', c.agent];
    if (c.subject !== undefined) args.push('--subject', c.subject);
    if (c.placeholder) args.push('--placeholder', c.placeholder);
    if (c.home !== undefined) args.push('--home', c.home);
    const r = await runAep(args, JSON.stringify(c.input));
    assert.equal(r.code, 0, `${c.id}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), c.expect, c.id);
  });
});

test('capture-gating/rules.json lists every rule id the cases use, and every listed rule has a case', () => {
  const manifest = JSON.parse(readFileSync(new URL('../capture-gating/rules.json', import.meta.url), 'utf8')) as {
    rules: Record<string, { section: string; meaning: string }>;
  };
  const used = new Set((gating.cases as { rule: string }[]).map((c) => c.rule));
  for (const r of used) assert.ok(r in manifest.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(manifest.rules)) {
    assert.ok(used.has(r), `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
