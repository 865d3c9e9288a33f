// Runs conformance/attr-match/cases.json (written from AEP-0003 §6) through the
// library (`compileFilter`) and through `aep match` as a black box: valid filters give one
// {"match":…} line per event; invalid filters are refused as a whole (exit 2) naming the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileFilter } from '@aep/protocol';
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

interface FilterCase {
  id: string;
  rule: string;
  filter: unknown;
  events: { event: unknown; match: boolean }[];
}
interface InvalidCase {
  id: string;
  rule: string;
  filter: unknown;
}
const fixture = JSON.parse(readFileSync(new URL('../attr-match/cases.json', import.meta.url), 'utf8')) as { filters: FilterCase[]; invalid: InvalidCase[] };

test('attr-match fixtures: the pinned verdicts and invalid examples are present', () => {
  const ids = new Set([...fixture.filters, ...fixture.invalid].map((c) => c.id));
  for (const id of [
    'severity-gte-notice-absent-severity',
    'severity-range-absent-severity',
    'epoch-0-absent-epoch',
    'step-absent-does-not-match',
    'seq-forbidden',
    'data-forbidden',
    'time-forbidden',
    'aep-forbidden',
    'traceparent-forbidden',
    'not-an-attribute',
    'bare-star',
    'glob-on-agent',
    'severity-gt',
    'empty-array',
  ]) {
    assert.ok(ids.has(id), id);
  }
  assert.equal(ids.size, fixture.filters.length + fixture.invalid.length, 'ids unique');
});

for (const c of fixture.filters) {
  test(`${c.id} (${c.rule}) — library`, () => {
    const f = compileFilter(c.filter);
    assert.ok(f.ok, f.ok ? '' : JSON.stringify(f.issues));
    if (!f.ok) return;
    c.events.forEach((e, i) => assert.equal(f.match(e.event), e.match, `event ${i}: ${JSON.stringify(e.event)}`));
  });
}

for (const c of fixture.invalid) {
  test(`${c.id} (${c.rule}) — library rejects the whole filter`, () => {
    const f = compileFilter(c.filter);
    assert.equal(f.ok, false, 'fail closed');
    if (f.ok) return;
    assert.ok(
      f.issues.some((i) => i.rule === c.rule),
      `${c.rule} in ${JSON.stringify(f.issues.map((i) => i.rule))}`,
    );
  });
}

test('CLI `aep match`: every valid filter over its events', async () => {
  await pool(fixture.filters, 3, async (c) => {
    const r = await runAep(['match', '--filter', JSON.stringify(c.filter)], c.events.map((e) => JSON.stringify(e.event)).join('\n') + '\n');
    assert.equal(r.code, 0, `${c.id}: ${r.stderr}`);
    assert.deepEqual(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
      c.events.map((e) => ({ match: e.match })),
      c.id,
    );
  });
});

test('CLI `aep match`: every invalid filter exits 2 naming the rule', async () => {
  await pool(fixture.invalid, 3, async (c) => {
    const r = await runAep(['match', '--filter', JSON.stringify(c.filter)], '{}\n');
    assert.equal(r.code, 2, `${c.id}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '', `${c.id}: nothing matched`);
    assert.match(r.stderr, /AEP_CLI_BAD_FILTER/);
    assert.ok(r.stderr.includes(c.rule), `${c.id}: stderr names ${c.rule}: ${r.stderr}`);
  });
});

test('attr-match/rules.json lists every rule id the cases use, and every listed rule has a case', () => {
  const manifest = JSON.parse(readFileSync(new URL('../attr-match/rules.json', import.meta.url), 'utf8')) as {
    rules: Record<string, { section: string; meaning: string }>;
  };
  const used = new Set(([...fixture.filters, ...fixture.invalid] as { rule: string }[]).map((c) => c.rule));
  for (const r of used) assert.ok(r in manifest.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(manifest.rules)) {
    assert.ok(used.has(r), `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
