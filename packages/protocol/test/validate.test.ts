import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import {
  validateEvent,
  validateEnvelope,
  isCommandType,
  scopeClass,
  RULES,
  isDateTime,
  isUri,
  CAPTURE_TREES,
  TYPE_REGISTRY,
  FORM_RULES,
  FILTER_RULES,
} from '@aep/protocol';
import { MINIMAL_EVENT } from '../../../test/support/envelope.js';

const root = new URL('../../../', import.meta.url);
const ok = MINIMAL_EVENT;
const rules = (x: unknown, emitter = false) => [...new Set(validateEvent(x, { emitter }).map((i) => i.rule))].sort();

test('docs/rules.md lists every rule of RULES with its section, and nothing else', () => {
  const md = readFileSync(new URL('docs/rules.md', root), 'utf8');
  const rows: string[] = [];
  for (const m of md.matchAll(/^\| `([a-z.-]+)` \| ([^|]+) \|/gm)) rows.push(`${m[1]!} ${m[2]!.trim()}`);
  for (const [id, r] of Object.entries(RULES)) assert.ok(rows.includes(`${id} ${r.section}`), `docs/rules.md row for ${id}`);
  // ...and nothing else: every row of docs/rules.md names a rule of the table.
  for (const row of rows) assert.ok(row.split(' ')[0]! in RULES, `docs/rules.md row ${row} is in RULES`);
});

test('the per-checker rule lists (FORM_RULES, FILTER_RULES) are rows of RULES', () => {
  for (const [id, r] of Object.entries(FORM_RULES)) {
    assert.ok(id in RULES, id);
    if (!r.must) assert.equal(RULES[id as keyof typeof RULES].section, r.section, id);
  }
  for (const id of Object.keys(FILTER_RULES)) assert.ok(id in RULES, id);
});

test('every x-aep-rule in schemas/ names a rule of the table', () => {
  const files = ['aep-event.schema.json', ...readdirSync(new URL('schemas/types/', root)).map((f) => `types/${f}`)];
  let n = 0;
  for (const f of files) {
    for (const m of readFileSync(new URL(`schemas/${f}`, root), 'utf8').matchAll(/"x-aep-rule": "([^"]+)"/g)) {
      n++;
      assert.ok(m[1]! in RULES, `${f}: ${m[1]}`);
    }
  }
  assert.ok(n > 15);
});

test('CAPTURE_TREES: one tree per registered type with a schema; exception fields marked', () => {
  for (const r of TYPE_REGISTRY) assert.equal(r.type in CAPTURE_TREES, r.schema !== null, r.type);
  const req = CAPTURE_TREES['attention.requested']!;
  assert.equal(req.properties!['prompt']!.exception, 'prompt');
  assert.equal(req.properties!['options']!.items!.properties!['label']!.exception, 'label');
  assert.equal(req.properties!['fields']!.items!.properties!['choices']!.items!.properties!['label']!.exception, 'label');
  assert.equal(req.properties!['context']!.level, 'full');
  assert.equal(CAPTURE_TREES['attention.answered']!.properties!['answer']!.properties!['values']!.exception, 'values');
  assert.equal(CAPTURE_TREES['control.attention.respond']!.properties!['answer']!.properties!['text']!.level, 'redacted');
  assert.deepEqual(CAPTURE_TREES['control.pause'], { level: 'metadata', properties: {} });
  assert.equal(CAPTURE_TREES['resource.retrieval.returned']!.properties!['documents']!.items!.properties!['content']!.level, 'full');
});

test('validateEvent never throws, whatever the input', () => {
  const deep = JSON.parse('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)) as unknown;
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error('boom');
      },
      ownKeys() {
        throw new Error('boom');
      },
    },
  );
  const inputs: unknown[] = [
    undefined,
    null,
    0,
    NaN,
    'x',
    'x'.repeat(1_000_000),
    [],
    [ok],
    deep,
    { ...ok, data: deep },
    { ...ok, acmeext: deep },
    { ...ok, type: 'attention.requested', data: { kind: 'form', prompt: 'p', fields: deep } },
    hostile,
    Object.create(null),
    JSON.parse('{"__proto__":1}'),
    { ...ok, seq: Infinity },
    { ...ok, seq: 2 ** 60 },
  ];
  for (const x of inputs) {
    const r = validateEvent(x);
    assert.ok(Array.isArray(r));
    for (const i of r) assert.ok(i.rule in RULES && typeof i.section === 'string' && typeof i.path === 'string');
  }
  assert.deepEqual(rules({ ...ok, data: deep }), []);
});

test('validateEnvelope checks the envelope only (no payload, capture or subject rules)', () => {
  assert.deepEqual(validateEnvelope({ ...ok, type: 'tool.requested', data: {} }), []);
  assert.deepEqual(validateEnvelope({ ...ok, type: 'run.started', data: { prompt: 'secret' } }), []);
  assert.deepEqual(rules({ ...ok, type: 'tool.requested', data: {} }), ['payload.required']);
  assert.deepEqual(
    validateEnvelope({ ...ok, seq: -1 }).map((i) => i.rule),
    ['envelope.seq'],
  );
});

test('issue paths are JSON pointers and messages name the rule meaning', () => {
  const [i] = validateEvent({ ...ok, type: 'attention.requested', data: { kind: 'form', prompt: 'p', fields: [{ id: 'a/b', type: 'select', label: 'l' }] } });
  assert.equal(i!.rule, 'form.select-choices');
  assert.equal(i!.path, '/data/fields/0/choices');
  assert.equal(i!.section, RULES['form.select-choices'].section);
  assert.match(i!.message, /select has choices/);
});

test('consumer tolerance vs emitter strictness', () => {
  const future = { ...ok, type: 'progress.some_future_member', acmeregion: 'eu' };
  assert.deepEqual(rules(future), []);
  assert.deepEqual(rules(future, true), ['type.unregistered']);
  assert.deepEqual(rules({ ...ok, type: 'x.acme.thing.done' }, true), []);
  assert.deepEqual(rules({ ...ok, type: 'message.user.submitted', data: { free: 'form' } }, true), []);
});

test('payload schemas apply only when data is present on a registered type with a schema', () => {
  assert.deepEqual(rules({ ...ok, type: 'tool.requested' }), []);
  assert.deepEqual(rules({ ...ok, type: 'x.acme.tool.requested', data: {} }), []);
  assert.deepEqual(rules({ ...ok, type: 'tool.some_future', data: { tool: 1 } }), []);
});

test('time is RFC 3339 with offset (format asserted, docs/decisions.md)', () => {
  for (const t of ['2026-08-01T09:00:00Z', '2026-08-01t09:00:00.5z', '2026-08-01T09:00:00+05:30', '2024-02-29T23:59:60Z', '2026-08-01 09:00:00-00:00'])
    assert.equal(isDateTime(t), true, t);
  for (const t of [
    '2026-08-01T09:00:00',
    '2026-08-01',
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-08-01T24:00:00Z',
    '2026-08-01T09:00:00+2:00',
    'yesterday',
    '',
  ])
    assert.equal(isDateTime(t), false, t);
  assert.equal(isUri('aep://h/agent/a'), true);
  assert.equal(isUri('urn:x'), true);
  for (const u of ['', 'no scheme', '/relative', 'aep://h/a b']) assert.equal(isUri(u), false, u);
});

test('scopeClass and isCommandType follow the envelope schema', () => {
  assert.equal(scopeClass('agent.health'), 'agent');
  assert.equal(scopeClass('x.acme.agent.ping'), 'session');
  for (const t of ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume', 'attention.routed', 'x.acme.control.restart'])
    assert.equal(scopeClass(t), 'foreign', t);
  for (const t of ['control.accepted', 'control.rejected', 'tool.requested', 'control.attention.respond_v2']) assert.equal(scopeClass(t), 'session', t);
  assert.equal(isCommandType('control.cancel'), true);
  assert.equal(isCommandType('x.acme.control.restart'), true);
  assert.equal(isCommandType('attention.routed'), false);
  assert.equal(isCommandType('control.accepted'), false);
});

test('the protocol package imports no node: module and no require()', () => {
  const dir = new URL('../src/', import.meta.url);
  const walk = (u: URL): string[] =>
    readdirSync(u, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(new URL(`${d.name}/`, u)) : [new URL(d.name, u).pathname]));
  for (const f of walk(dir).filter((p) => p.endsWith('.ts'))) {
    const src = readFileSync(f, 'utf8');
    assert.doesNotMatch(src, /from ['"]node:|\brequire\(['"]/, f);
  }
});
