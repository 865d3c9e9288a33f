// Runs conformance/downlevel/cases.json (written from AEP-0001 §8.2, AEP-0002 §7, AEP-0003 §6.4)
// through the library (`downlevel`) and through `aep downlevel` as a black box (one JSONL run per
// ceiling: one output line per input line, unchanged events echoed byte for byte).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { downlevel, captureRank } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { runAep } from '../../test/support/cli.js';

interface Case {
  id: string;
  rule: string;
  ceiling: CaptureLevel;
  event: Record<string, unknown>;
  expect: Record<string, unknown> | 'unchanged';
}
const fixture = JSON.parse(readFileSync(new URL('../downlevel/cases.json', import.meta.url), 'utf8')) as { cases: Case[] };

test('downlevel fixtures: pinned probes are present, ids unique', () => {
  const ids = fixture.cases.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of [
    'live-check-capture-downlevel-probe',
    'form-request-redacted-to-metadata',
    'form-answer-command-hop-to-metadata',
    'form-answer-command-to-none',
    'permission-full-under-redacted-lands-on-metadata',
    'vendor-type-data-removed',
  ]) {
    assert.ok(ids.includes(id), id);
  }
});

for (const c of fixture.cases) {
  test(`${c.id} (${c.rule}) — library`, () => {
    const before = JSON.stringify(c.event);
    const out = downlevel(c.event, c.ceiling);
    assert.equal(JSON.stringify(c.event), before, 'input not mutated');
    if (c.expect === 'unchanged') {
      assert.equal(out, c.event, 'the same object is returned when nothing changes');
      return;
    }
    assert.notEqual(out, c.event);
    assert.deepEqual(out, c.expect);
    assert.deepEqual(downlevel(out, c.ceiling), out, 'idempotent');
    const have = captureRank(c.event['capture'] ?? 'metadata');
    assert.ok(captureRank(out['capture']) <= Math.max(have, captureRank('metadata')), 'never raises capture');
  });
}

test('CLI `aep downlevel` on every case (one run per ceiling)', async () => {
  const ceilings = [...new Set(fixture.cases.map((c) => c.ceiling))];
  for (const ceiling of ceilings) {
    const cases = fixture.cases.filter((c) => c.ceiling === ceiling);
    const lines = cases.map((c) => JSON.stringify(c.event));
    const r = await runAep(['downlevel', '--ceiling', ceiling], lines.join('\n') + '\n');
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('\n');
    assert.equal(out.pop(), '', 'output ends with a newline');
    assert.equal(out.length, cases.length, 'one line out per line in');
    cases.forEach((c, i) => {
      if (c.expect === 'unchanged') assert.equal(out[i], lines[i], `${c.id}: echoed byte for byte`);
      else assert.deepEqual(JSON.parse(out[i]!), c.expect, c.id);
    });
  }
});

test('downlevel/rules.json lists every rule id the cases use, and every listed rule has a case', () => {
  const manifest = JSON.parse(readFileSync(new URL('../downlevel/rules.json', import.meta.url), 'utf8')) as {
    rules: Record<string, { section: string; meaning: string }>;
  };
  const used = new Set((fixture.cases as { rule: string }[]).map((c) => c.rule));
  for (const r of used) assert.ok(r in manifest.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(manifest.rules)) {
    assert.ok(used.has(r), `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
