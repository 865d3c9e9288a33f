// Runs conformance/mappings/mcp-elicitation.json through the library: MCP elicitation/create
// (form mode) -> attention.requested(kind:"form") data (AEP-0002 Annex A), and AEP
// answer values -> MCP ElicitResult.content. Every case names its rule id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { elicitationToForm, formValuesToElicitationContent } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';

interface MapCase {
  id: string;
  rule: string;
  agent: string;
  capture: CaptureLevel;
  params: unknown;
  expect: { data?: unknown; fieldMap?: unknown; constraints?: unknown; unsupported?: string };
}
interface ContentCase {
  id: string;
  rule: string;
  schema: unknown;
  values: unknown;
  content: unknown;
}

const fixture = JSON.parse(readFileSync(new URL('../mappings/mcp-elicitation.json', import.meta.url), 'utf8')) as {
  cases: MapCase[];
  content: ContentCase[];
};

test('the MCP elicitation fixture is not empty and every case names a rule', () => {
  assert.ok(fixture.cases.length >= 10);
  assert.ok(fixture.content.length >= 3);
  for (const c of [...fixture.cases, ...fixture.content]) assert.match(c.rule, /^mapping\.mcp-elicitation/, c.id);
  assert.equal(new Set(fixture.cases.map((c) => c.id)).size, fixture.cases.length, 'case ids are unique');
});

test('both pinned schemas are pinned at full, redacted and metadata (Annex A: member for member at both levels)', () => {
  for (const base of ['mcp-2025-06-18-all-kinds', 'mcp-2025-11-25-enums']) {
    for (const level of ['full', 'redacted', 'metadata'])
      assert.ok(
        fixture.cases.some((c) => c.id === `${base}-${level}` && c.capture === level),
        `${base}-${level}`,
      );
  }
});

for (const c of fixture.cases) {
  test(`${c.id} (${c.rule})`, () => {
    // At `redacted` the mapping runs the protocol's default §9.4 pipeline (what the pins assume).
    const r = elicitationToForm(c.params, { agent: c.agent, capture: c.capture });
    if (c.expect.unsupported !== undefined) {
      assert.equal(r.ok, false, 'an unsupported shape is refused, never guessed');
      if (!r.ok) assert.ok(r.reason.includes(c.expect.unsupported), `reason "${r.reason}" names "${c.expect.unsupported}"`);
      return;
    }
    assert.ok(r.ok, r.ok ? '' : r.reason);
    if (!r.ok) return;
    // Member for member: deepStrictEqual fails on any extra member (even one set to undefined).
    assert.deepEqual(r.data, c.expect.data);
    assert.deepEqual(
      Object.keys(r.data).sort(),
      ['fields', 'kind', 'prompt', 'respond_via'],
      'data is exactly {kind, prompt, fields, respond_via}: no options, no expires_at',
    );
    for (const f of r.data.fields) {
      assert.equal(typeof f.required, 'boolean', `${f.id}: required is always present (false when not listed)`);
      assert.ok(!('multi' in f) || f.multi === true, `${f.id}: multi only when true`);
      assert.ok(!('other' in f), `${f.id}: MCP enums are closed (no other)`);
    }
    if (c.expect.fieldMap !== undefined) assert.deepEqual(r.fieldMap, c.expect.fieldMap);
    if (c.expect.constraints !== undefined) assert.deepEqual(r.constraints, c.expect.constraints);
  });
}

for (const c of fixture.content) {
  test(`${c.id} (${c.rule})`, () => {
    assert.deepEqual(formValuesToElicitationContent(c.schema, c.values), c.content);
  });
}
