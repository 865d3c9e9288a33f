// Conformance as data, through the library: every valid fixture is accepted, every invalid case
// is rejected with exactly its named rule (conformance/README.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateStream, validateEvent, RULES, TYPE_REGISTRY, scopeClass, FORM_RULES, FILTER_RULES } from '@aep/protocol';
import { loadCases, validFiles, readValid as readJsonl } from './valid-invalid-cases.js';

for (const f of validFiles()) {
  test(`valid/${f} is accepted as one stream, in consumer and in emitter mode`, () => {
    const events = readJsonl(f);
    assert.deepEqual(validateStream(events), []);
    if (f !== 'envelope-classes.jsonl') assert.deepEqual(validateStream(events, { emitter: true }), []);
  });
}

test('the valid corpus covers every registered type and every envelope class', () => {
  const types = new Set<string>();
  const classes = new Set<string>();
  for (const f of validFiles()) {
    for (const e of readJsonl(f)) {
      const t = (e as { type: string }).type;
      types.add(t);
      classes.add(scopeClass(t));
    }
  }
  for (const r of TYPE_REGISTRY) assert.ok(types.has(r.type), `no valid fixture of ${r.type}`);
  assert.deepEqual([...classes].sort(), ['agent', 'foreign', 'session']);
  assert.ok(
    [...types].some((t) => t.startsWith('x.')),
    'a vendor type',
  );
});

test('the envelope-classes corpus needs consumer tolerance: an unregistered member fails in emitter mode only', () => {
  const issues = validateStream(readJsonl('envelope-classes.jsonl'), { emitter: true });
  assert.ok(issues.length > 0);
  assert.deepEqual([...new Set(issues.map((i) => i.rule))], ['type.unregistered']);
});

const cases = loadCases();
/** The two AEP-0006 MUST rules the stream validator applies across events (AEP-0002 §5.3). */
const STREAM_FORM_RULES = new Set(['form.required-missing', 'form.choice-forged']);

test('every invalid case names a known rule; every rule has at least one case', () => {
  const names = new Set<string>();
  for (const c of cases) {
    assert.ok(c.rule in RULES, `${c.name}: unknown rule ${c.rule}`);
    assert.ok(!names.has(c.name), `duplicate case ${c.name}`);
    names.add(c.name);
    assert.ok((c.events === undefined) !== (c.lines === undefined), `${c.name}: events xor lines`);
    if (c.via === 'cli') assert.ok(c.rule.startsWith('jsonl.'), `${c.name}: only framing cases are CLI-only`);
  }
  const covered = new Set(cases.map((c) => c.rule));
  // Rules no stream validator reports have their own corpora: the form answer check
  // (capture-gating/answers.json), attr-match filters (attr-match/cases.json) and the attention
  // engine (packages/client/test); the steering checks of the targets (`control.cancel.*`: the
  // adapter's, the bridge's and the demo agent's steering tests).
  const otherChecker = (r: string) =>
    (r in FORM_RULES && !STREAM_FORM_RULES.has(r)) ||
    r in FILTER_RULES ||
    r.startsWith('control.respond.') ||
    r.startsWith('control.cancel.') ||
    r.startsWith('mcp-elicitation.');
  const uncovered = Object.keys(RULES).filter((r) => !covered.has(r) && r !== 'payload.schema' && !otherChecker(r));
  assert.deepEqual(uncovered, []);
});

test('cases are independent: each uses its own sources and sessions', () => {
  const owner = new Map<string, string>();
  for (const c of cases) {
    for (const e of c.events ?? []) {
      if (typeof e !== 'object' || e === null) continue;
      for (const k of ['source', 'session'] as const) {
        const v = (e as Record<string, unknown>)[k];
        if (typeof v !== 'string') continue;
        const prev = owner.get(k + v);
        assert.ok(prev === undefined || prev === c.name, `${k} ${v} shared by ${prev} and ${c.name}`);
        owner.set(k + v, c.name);
      }
    }
  }
});

for (const c of cases) {
  if (c.via === 'cli') continue;
  test(`invalid/${c.name} is rejected with exactly ${c.rule}`, () => {
    const issues = validateStream(c.events!, { emitter: c.emitter === true });
    assert.deepEqual([...new Set(issues.map((i) => i.rule))], [c.rule], JSON.stringify(issues, null, 1));
    // the single-event rules alone already see single-event cases
    if (!c.rule.startsWith('stream.') && !c.rule.startsWith('form.') && c.rule !== 'capture.values-free-text') {
      assert.ok(c.events!.some((e) => validateEvent(e, { emitter: c.emitter === true }).some((i) => i.rule === c.rule)));
    }
  });
}
