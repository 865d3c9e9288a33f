// Comments and docs cite the protocol (`AEP-0003 §6.2`) or files of this repository
// (`docs/integrations.md §1`, `docs/conventions.md §9`), never a document a reader of the
// repository cannot open (docs/conventions.md §14): no developer briefs, no machine-local paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

/** What a citation of an outside document looks like; each with the repository file to cite instead. */
const OUTSIDE: readonly { re: RegExp; instead: string }[] = [
  { re: /\bbriefs? \d{2}\b/, instead: 'the protocol section (AEP-000N §x)' },
  { re: /(?<!docs\/)\bintegrations\.md\b/, instead: 'docs/integrations.md' },
  { re: /(?<!docs\/)\b(?:style|deps)\.md\b/, instead: 'docs/conventions.md' },
  { re: /\b(?:COMMON|DEVELOPERS)\.md\b/, instead: 'docs/conventions.md or docs/architecture.md' },
  { re: /(?:\.\.\/|\/work\/)shared\/|\/work\/wt\//, instead: 'a file of this repository' },
];

/** Offending lines of a text, as `line: text (cite … instead)`. */
export function outsideCitations(text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const hit = OUTSIDE.find(({ re }) => re.test(line));
    if (hit) out.push(`${i + 1}: ${line.trim().slice(0, 120)} (cite ${hit.instead})`);
  });
  return out;
}

test('no tracked file cites a document outside the repository', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && !/^(package-lock\.json|test\/citations\.test\.ts)$/.test(f) && !/\.(png|ico|webp|woff2?)$/.test(f));
  const bad: string[] = [];
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(join(repoRoot, f), 'utf8');
    } catch {
      continue;
    }
    for (const o of outsideCitations(text)) bad.push(`${f}:${o}`);
  }
  assert.deepEqual(bad, []);
});

test("the citation check catches each kind of outside citation, and allows the repository's own", () => {
  for (const planted of [
    '// (brief 05 §13.1)',
    '// see integrations.md §1',
    '// style.md §9',
    '// DEVELOPERS.md',
    '// ../shared/protocol/05',
    '// /work/wt/COMMON.md',
  ]) {
    assert.equal(outsideCitations(planted).length, 1, planted);
  }
  assert.deepEqual(outsideCitations('// AEP-0003 §9.4; docs/integrations.md §1; docs/conventions.md §9'), []);
});
