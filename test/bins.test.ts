// npm links a workspace package's `bin` into node_modules/.bin at install time, before `prepare`
// builds dist/: a bin pointing into dist/ is silently not linked on a fresh clone. Every bin must
// therefore be a committed file outside dist/ (a shim importing the compiled entry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

test('every package bin is a committed shim outside dist/, with a shebang', () => {
  const problems: string[] = [];
  let bins = 0;
  for (const pkg of readdirSync(join(repoRoot, 'packages'))) {
    const file = join(repoRoot, 'packages', pkg, 'package.json');
    if (!existsSync(file)) continue;
    const json = JSON.parse(readFileSync(file, 'utf8')) as { bin?: Record<string, string> };
    for (const [name, target] of Object.entries(json.bin ?? {})) {
      bins++;
      const path = join(repoRoot, 'packages', pkg, target);
      if (/(^|\/)dist\//.test(target.replace(/^\.\//, ''))) problems.push(`${pkg}: bin ${name} points into dist/ (${target})`);
      else if (!existsSync(path)) problems.push(`${pkg}: bin ${name} target ${target} is missing`);
      else if (!readFileSync(path, 'utf8').startsWith('#!/usr/bin/env node')) problems.push(`${pkg}: bin ${name} has no node shebang`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(bins >= 2, 'the aep and aep-claude-hook bins are declared');
});
