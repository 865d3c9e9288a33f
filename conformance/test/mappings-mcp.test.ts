// Runs conformance/mappings/mcp-elicitation.json through the library: MCP elicitation/create
// (form mode) -> attention.requested(kind:"form") data (AEP-0002 Annex A, brief 03 §7), and AEP
// answer values -> MCP ElicitResult.content. Every case names its rule id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { elicitationToForm, formValuesToElicitationContent } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';

interface MapCase {
  id: string; rule: string; agent: string; capture: CaptureLevel; params: unknown;
  expect: { data?: unknown; fieldMap?: unknown; unsupported?: string };
}
interface ContentCase { id: string; rule: string; schema: unknown; values: unknown; content: unknown }

const fixture = JSON.parse(readFileSync(new URL('../mappings/mcp-elicitation.json', import.meta.url), 'utf8')) as {
  cases: MapCase[]; content: ContentCase[];
};

test('the MCP elicitation fixture is not empty and every case names a rule', () => {
  assert.ok(fixture.cases.length >= 10);
  assert.ok(fixture.content.length >= 3);
  for (const c of [...fixture.cases, ...fixture.content]) assert.match(c.rule, /^mapping\.mcp-elicitation/, c.id);
  assert.equal(new Set(fixture.cases.map((c) => c.id)).size, fixture.cases.length, 'case ids are unique');
});

for (const c of fixture.cases) {
  test(`${c.id} (${c.rule})`, () => {
    // At `redacted` the runner would need the pipeline; the fixture pins `full`, `metadata`, `none`.
    const r = elicitationToForm(c.params, { agent: c.agent, capture: c.capture });
    if (c.expect.unsupported !== undefined) {
      assert.equal(r.ok, false, 'an unsupported shape is refused, never guessed');
      if (!r.ok) assert.ok(r.reason.includes(c.expect.unsupported), `reason "${r.reason}" names "${c.expect.unsupported}"`);
      return;
    }
    assert.ok(r.ok, r.ok ? '' : r.reason);
    if (!r.ok) return;
    assert.deepEqual(r.data, c.expect.data);
    if (c.expect.fieldMap !== undefined) assert.deepEqual(r.fieldMap, c.expect.fieldMap);
  });
}

for (const c of fixture.content) {
  test(`${c.id} (${c.rule})`, () => {
    assert.deepEqual(formValuesToElicitationContent(c.schema, c.values), c.content);
  });
}
