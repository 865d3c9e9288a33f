// A merge left unresolved must never land: no tracked text file may hold a conflict marker line
// (one did, in three docs, during parallel work on this repository).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

test('no tracked text file contains a merge conflict marker line', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((f) => /\.(ts|tsx|mts|mjs|js|json|md|css|html|yml|yaml|sh)$|^\.ci\//.test(f));
  const bad: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(repoRoot, f), 'utf8');
    } catch {
      continue;
    }
    const lines = text.split('\n');
    lines.forEach((l, i) => {
      if (/^(<{7} |>{7} |={7}$)/.test(l)) bad.push(`${f}:${i + 1}`);
    });
  }
  assert.deepEqual(bad, []);
});
