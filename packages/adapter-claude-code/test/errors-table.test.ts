// The adapter's error table (src/errors.ts) and docs/errors.md agree row for row: every code has
// a row in the adapter section naming where it surfaces (HTTP status, exit code, log), and the
// section names no code the table lacks (issue 13 item 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ADAPTER_ERROR_TABLE, ADAPTER_ERRORS } from '@aep/adapter-claude-code';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Claude Code adapter'), doc.indexOf('\n## ', doc.indexOf('## Claude Code adapter') + 1));
const rows = new Map<string, { where: string; when: string }>();
for (const line of section.split('\n')) {
  const m = /^\| `(AEP_CC_[A-Z_]+)` \| ([^|]*) \| (.*) \|$/.exec(line);
  if (m) rows.set(m[1]!, { where: m[2]!.trim(), when: m[3]!.trim() });
}

test('every adapter error code has its docs/errors.md row, with the same surfaces and meaning', () => {
  for (const [name, info] of Object.entries(ADAPTER_ERROR_TABLE) as [string, { code: string; http?: number; exit?: number; log?: true; meaning: string }][]) {
    assert.equal((ADAPTER_ERRORS as Record<string, string>)[name], info.code);
    const row = rows.get(info.code);
    assert.ok(row, `${info.code} has a row`);
    const where: string[] = [];
    if (info.http !== undefined) where.push(`HTTP ${info.http}`);
    if (info.exit !== undefined) where.push(`exit ${info.exit}`);
    if (info.log) where.push('log');
    assert.equal(row.where, where.join('; '), `${info.code}: where`);
    assert.equal(row.when, info.meaning, `${info.code}: meaning`);
  }
});

test('the adapter section of docs/errors.md names no code outside the table', () => {
  const codes = new Set(Object.values(ADAPTER_ERROR_TABLE).map((v) => v.code));
  assert.ok(rows.size > 0);
  assert.deepEqual(
    [...rows.keys()].filter((c) => !codes.has(c)),
    [],
  );
});
