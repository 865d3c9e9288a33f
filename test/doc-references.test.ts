// Every test a document names exists (docs/security.md pins each threat to the test that plants
// the attack; a renamed or deleted test must not leave a threat row pointing at nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);

/** Test file names a text mentions (full paths or the tail of one, e.g. `test/grants.e2e.test.ts`). */
export function namedTests(text: string): string[] {
  return [...new Set([...text.matchAll(/[A-Za-z0-9_./-]+\.test\.ts/g)].map((m) => m[0]))];
}

test('every test file named in docs/ and the READMEs exists', () => {
  const docs = tracked.filter((f) => f.endsWith('.md'));
  const tests = tracked.filter((f) => f.endsWith('.test.ts'));
  const bad: string[] = [];
  for (const d of docs) {
    for (const name of namedTests(readFileSync(join(repoRoot, d), 'utf8'))) {
      if (!tests.some((t) => t === name || t.endsWith('/' + name.replace(/^\.?\//, '')))) bad.push(`${d}: ${name}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('the reference check finds a planted name', () => {
  assert.deepEqual(namedTests('pinned by `packages/relay/test/nowhere.test.ts` and `a.test.ts`'), ['packages/relay/test/nowhere.test.ts', 'a.test.ts']);
});
