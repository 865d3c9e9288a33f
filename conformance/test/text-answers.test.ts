// Runs conformance/text-answers/cases.json (written from AEP-0008) through the library
// (`mapTextAnswer`) and through `aep form map-text` as a black box.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mapTextAnswer, gateAnswer } from '@aep/protocol';
import type { CaptureLevel, MapTextAnswerOptions } from '@aep/protocol';
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

interface Case {
  id: string;
  rule: string;
  request: Record<string, unknown>;
  text: string;
  options?: MapTextAnswerOptions;
  expect: Record<string, unknown>;
  record?: { capture: CaptureLevel; expect: Record<string, unknown> }[];
}
const fixture = JSON.parse(readFileSync(new URL('../text-answers/cases.json', import.meta.url), 'utf8')) as { cases: Case[] };

test('text-answer fixtures: AEP-0008 examples are present', () => {
  const ids = fixture.cases.map((c) => c.id);
  for (const id of ['id-ignoring-case-and-whitespace', 'label-match', 'unmatched-permission-refuses-with-reason', 'unmatched-permission-nack-configured'])
    assert.ok(ids.includes(id), id);
  assert.equal(new Set(ids).size, ids.length);
});

const granting = (c: Case): string[] =>
  ((c.request['options'] as { id: string }[] | undefined) ?? []).map((o) => o.id).filter((id) => id.startsWith('allow') || id === 'approve' || id === 'y');

for (const c of fixture.cases) {
  test(`${c.id} (${c.rule}) — library`, () => {
    const r = mapTextAnswer(c.request, c.text, c.options ?? {});
    assert.deepEqual(r, c.expect);
    if (c.rule === 'text-answer.never-permissive') assert.ok(!granting(c).includes(String(r.option ?? '')), 'unmatched text never grants');
    for (const rec of c.record ?? []) assert.deepEqual(gateAnswer(r, rec.capture), rec.expect, `recorded at ${rec.capture}`);
  });
}

test('CLI `aep form map-text` on every case', async () => {
  await pool(fixture.cases, 3, async (c) => {
    const args = ['form', 'map-text'];
    if (c.options?.refusingOption) args.push('--refusing-option', c.options.refusingOption);
    if (c.options?.permissionUnmatched) args.push('--permission-unmatched', c.options.permissionUnmatched);
    if (c.options?.otherUnmatched) args.push('--other-unmatched', c.options.otherUnmatched);
    const r = await runAep(args, JSON.stringify({ request: c.request, text: c.text }));
    assert.equal(r.code, c.expect['invalid'] === true ? 1 : 0, `${c.id}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), c.expect, c.id);
    for (const rec of c.record ?? []) {
      const g = await runAep([...args, '--capture', rec.capture], JSON.stringify({ request: c.request, text: c.text }));
      assert.equal(g.code, 0, `${c.id}@${rec.capture}: ${g.stderr}`);
      assert.deepEqual(JSON.parse(g.stdout), rec.expect, `${c.id} recorded at ${rec.capture}`);
    }
  });
});

test('text-answers/rules.json lists every rule id the cases use, and every listed rule has a case', () => {
  const manifest = JSON.parse(readFileSync(new URL('../text-answers/rules.json', import.meta.url), 'utf8')) as {
    rules: Record<string, { section: string; meaning: string }>;
  };
  const used = new Set((fixture.cases as { rule: string }[]).map((c) => c.rule));
  for (const r of used) assert.ok(r in manifest.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(manifest.rules)) {
    assert.ok(used.has(r), `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
