// The conformance corpora (conformance/*/, data written from the briefs) run through the library
// from the protocol's own suite. The mutation run of packages/protocol runs only
// packages/protocol/test (docs/testing.md: the conformance runners also spawn the CLI, too slow
// to repeat for every mutant), so without this file the corpora would not count against protocol
// mutants. The checks are the library halves of conformance/test/*.test.ts, which stay the
// reference (they also cover the CLI and the corpora's own completeness).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import {
  gateFormValues,
  validateFormAnswer,
  buildAttentionRequestData,
  downlevel,
  captureRank,
  compileFilter,
  mapTextAnswer,
  gateAnswer,
  validateStream,
  validateEvent,
} from '@aep/protocol';
import type { CaptureLevel, FieldSpec, FormConstraints, MapTextAnswerOptions } from '@aep/protocol';

// The conformance data is read as data (test/dependencies.test.ts: a test imports no module
// outside its package and test/support); these mirror conformance/test/valid-invalid-cases.ts.
const corpus = new URL('../../../conformance/', import.meta.url);
const load = <T>(path: string): T => JSON.parse(readFileSync(new URL(path, corpus), 'utf8')) as T;
interface InvalidCase {
  name: string;
  rule: string;
  description: string;
  events?: unknown[];
  lines?: string[];
  emitter?: boolean;
  via?: 'cli';
}
const loadCases = (): InvalidCase[] => load<{ cases: InvalidCase[] }>('invalid/cases.json').cases;
const validFiles = (): string[] =>
  readdirSync(new URL('valid/', corpus))
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
const readValid = (name: string): unknown[] =>
  readFileSync(new URL(`valid/${name}`, corpus), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
const sortIssues = (l: { rule: string; path: string }[]) => l.map((i) => `${i.rule} ${i.path}`).sort();

test('capture-gating corpus: gated values, answer validation, request data at each capture', () => {
  const gating = load<{ cases: { id: string; ceiling: CaptureLevel; fields: FieldSpec[]; values: Record<string, unknown>; expect: unknown }[] }>(
    'capture-gating/cases.json',
  );
  for (const c of gating.cases) assert.deepEqual(gateFormValues(c.fields, c.values, c.ceiling), c.expect, c.id);
  const answers = load<{
    cases: { id: string; fields: FieldSpec[]; values: unknown; strict: boolean; constraints?: FormConstraints; expect: { rule: string; path: string }[] }[];
  }>('capture-gating/answers.json');
  for (const c of answers.cases) {
    const issues = validateFormAnswer(c.fields, c.values, { strict: c.strict, ...(c.constraints ? { constraints: c.constraints } : {}) });
    assert.deepEqual(sortIssues(issues), sortIssues(c.expect), c.id);
  }
  const requests = load<{
    cases: { id: string; capture: CaptureLevel; agent: string; subject?: string; placeholder?: 'id' | 'index'; home?: string; input: never; expect: unknown }[];
  }>('capture-gating/requests.json');
  for (const c of requests.cases) {
    const data = buildAttentionRequestData(c.input, c.capture, {
      agent: c.agent,
      ...(c.subject !== undefined ? { subject: c.subject } : {}),
      ...(c.placeholder ? { placeholder: c.placeholder } : {}),
      redaction: c.home !== undefined ? { home: c.home } : {},
    });
    assert.deepEqual(data ?? null, c.expect, c.id);
  }
});

test('downlevel corpus: each event at each ceiling (same object when unchanged, idempotent, never raises capture)', () => {
  const fixture = load<{ cases: { id: string; ceiling: CaptureLevel; event: Record<string, unknown>; expect: unknown }[] }>('downlevel/cases.json');
  for (const c of fixture.cases) {
    const out = downlevel(c.event, c.ceiling);
    if (c.expect === 'unchanged') {
      assert.equal(out, c.event, c.id);
      continue;
    }
    assert.deepEqual(out, c.expect, c.id);
    assert.deepEqual(downlevel(out, c.ceiling), out, `${c.id}: idempotent`);
    assert.ok(captureRank(out['capture']) <= Math.max(captureRank(c.event['capture'] ?? 'metadata'), captureRank('metadata')), c.id);
  }
});

test('attr-match corpus: every pinned verdict, every invalid filter rejected whole with its rule', () => {
  const fixture = load<{
    filters: { id: string; filter: unknown; events: { event: unknown; match: boolean }[] }[];
    invalid: { id: string; rule: string; filter: unknown }[];
  }>('attr-match/cases.json');
  for (const c of fixture.filters) {
    const f = compileFilter(c.filter);
    assert.ok(f.ok, c.id);
    if (!f.ok) continue;
    c.events.forEach((e, i) => assert.equal(f.match(e.event), e.match, `${c.id} event ${i}`));
  }
  for (const c of fixture.invalid) {
    const f = compileFilter(c.filter);
    assert.equal(f.ok, false, c.id);
    if (!f.ok)
      assert.ok(
        f.issues.some((i) => i.rule === c.rule),
        c.id,
      );
  }
});

test('text-answers corpus: every mapping and its record at each capture', () => {
  const fixture = load<{
    cases: {
      id: string;
      request: Record<string, unknown>;
      text: string;
      options?: MapTextAnswerOptions;
      expect: unknown;
      record?: { capture: CaptureLevel; expect: unknown }[];
    }[];
  }>('text-answers/cases.json');
  for (const c of fixture.cases) {
    const r = mapTextAnswer(c.request, c.text, c.options ?? {});
    assert.deepEqual(r, c.expect, c.id);
    for (const rec of c.record ?? []) assert.deepEqual(gateAnswer(r, rec.capture), rec.expect, `${c.id} at ${rec.capture}`);
  }
});

test('valid and invalid stream corpora: valid streams have no issue, each invalid case exactly its rule', () => {
  for (const f of validFiles()) {
    const events = readValid(f);
    assert.deepEqual(validateStream(events), [], f);
    if (f !== 'envelope-classes.jsonl') assert.deepEqual(validateStream(events, { emitter: true }), [], `${f} (emitter)`);
  }
  for (const c of loadCases()) {
    if (c.via === 'cli') continue;
    const issues = validateStream(c.events!, { emitter: c.emitter === true });
    assert.deepEqual([...new Set(issues.map((i) => i.rule))], [c.rule], c.name);
    if (!c.rule.startsWith('stream.') && !c.rule.startsWith('form.') && c.rule !== 'capture.values-free-text') {
      assert.ok(
        c.events!.some((e) => validateEvent(e, { emitter: c.emitter === true }).some((i) => i.rule === c.rule)),
        c.name,
      );
    }
  }
});
