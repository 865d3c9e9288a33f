// Conformance as data, through the CLI as a black box (`aep validate --json`): the valid corpus
// is accepted as one stream across files; all invalid cases run as one stream (each case has its
// own sources and sessions) and every case is rejected with exactly its named rule.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAep } from '../../test/support/cli.js';
import { loadCases, validFiles, type InvalidCase } from './valid-invalid-cases.js';

interface Report {
  ok: boolean;
  issues: { file: string; line: number; rule: string }[];
  counts: { events: number };
}

const tmp = mkdtempSync(join(tmpdir(), 'aep-conf-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('aep validate accepts the whole valid corpus as one stream (exit 0)', async () => {
  const files = validFiles().map((f) => fileURLToPath(new URL(`../valid/${f}`, import.meta.url)));
  const r = await runAep(['validate', '--json', ...files]);
  const report = JSON.parse(r.stdout) as Report;
  assert.deepEqual(report.issues, []);
  assert.equal(report.ok, true);
  assert.ok(report.counts.events > 80);
  assert.equal(r.code, 0);
});

async function runCases(cases: InvalidCase[], emitter: boolean): Promise<void> {
  const lines: string[] = [];
  const owner: string[] = [];
  for (const c of cases) {
    const own = c.lines ?? c.events!.map((e) => JSON.stringify(e));
    for (const l of own) {
      lines.push(l);
      owner.push(c.name);
    }
  }
  const file = join(tmp, emitter ? 'emitter.jsonl' : 'consumer.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const r = await runAep(['validate', '--json', ...(emitter ? ['--emitter'] : []), file]);
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout) as Report;
  assert.equal(report.ok, false);
  const got = new Map<string, Set<string>>();
  for (const i of report.issues) {
    const name = owner[i.line - 1]!;
    if (!got.has(name)) got.set(name, new Set());
    got.get(name)!.add(i.rule);
  }
  for (const c of cases) assert.deepEqual([...(got.get(c.name) ?? [])], [c.rule], `case ${c.name}`);
}

test('aep validate rejects every invalid case with exactly its rule (consumer mode)', async () => {
  await runCases(
    loadCases().filter((c) => !c.emitter),
    false,
  );
});

test('aep validate --emitter rejects every emitter-mode case with exactly its rule', async () => {
  await runCases(
    loadCases().filter((c) => c.emitter),
    true,
  );
});
