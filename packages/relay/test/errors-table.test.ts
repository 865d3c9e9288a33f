// The relay's error tables (src/errors.ts) and docs/errors.md say the same thing, both ways:
// the same codes, the same HTTP statuses, the same connection state after a frame error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_ERRORS, FRAME_ERRORS } from '../src/errors.js';
import { repoRoot } from '../../../test/support/cli.js';

function section(doc: string, heading: string): string[] {
  const start = doc.indexOf(`## ${heading}`);
  assert.ok(start >= 0, `docs/errors.md has a section "${heading}"`);
  const end = doc.indexOf('\n## ', start + 3);
  return doc
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((l) => /^\| `[a-z-]+` \|/.test(l));
}

const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');

test('HTTP error codes and statuses: src/errors.ts = docs/errors.md "Relay, HTTP"', () => {
  const rows = new Map<string, number[]>();
  for (const line of section(doc, 'Relay, HTTP')) {
    const cells = line.split('|').map((c) => c.trim());
    const code = cells[1]!.replace(/`/g, '');
    rows.set(code, [...cells[2]!.matchAll(/\d{3}/g)].map((m) => Number(m[0])).sort());
  }
  const table = new Map(Object.entries(HTTP_ERRORS).map(([k, v]) => [k, [...v.status].sort()]));
  assert.deepEqual([...rows.keys()].sort(), [...table.keys()].sort());
  for (const [code, statuses] of table) assert.deepEqual(rows.get(code), statuses, code);
});

test('WebSocket error frame codes and connection state: src/errors.ts = docs/errors.md "Relay, WebSocket frames"', () => {
  const rows = new Map<string, string>();
  for (const line of section(doc, 'Relay, WebSocket frames')) {
    const cells = line.split('|').map((c) => c.trim());
    rows.set(cells[1]!.replace(/`/g, ''), cells[3]!.startsWith('closed') ? 'closed' : 'open');
  }
  const table = new Map(Object.entries(FRAME_ERRORS).map(([k, v]) => [k, v.connection as string]));
  assert.deepEqual([...rows.keys()].sort(), [...table.keys()].sort());
  for (const [code, conn] of table) assert.equal(rows.get(code), conn, code);
});

test('no relay source writes an error code outside the tables', () => {
  const dir = join(repoRoot, 'packages', 'relay', 'src');
  const codes = new Set([...Object.keys(HTTP_ERRORS), ...Object.keys(FRAME_ERRORS)]);
  const bad: string[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.ts')) continue;
    const text = readFileSync(join(dir, f), 'utf8');
    for (const m of text.matchAll(/\b(?:error|code):\s*'([a-z]+(?:-[a-z]+)*)'/g)) if (!codes.has(m[1]!)) bad.push(`${f}: ${m[1]}`);
    for (const m of text.matchAll(/(?:sendError\([a-z]+|\.error\(|errorFrame\(|refuse\(|fail\(\d{3}),\s*'([a-z]+(?:-[a-z]+)*)'/g))
      if (!codes.has(m[1]!)) bad.push(`${f}: ${m[1]}`);
  }
  assert.deepEqual(bad, []);
});
