#!/usr/bin/env node
// Re-tests the undetected mutants of a progress.jsonl (progress-reporter.mjs) against test files
// added after the run started, inside a Stryker sandbox (instrumented sources; one exists during
// a run, or after one with `cleanTempDir: false`). Each mutant is activated the way Stryker does
// (__STRYKER_ACTIVE_MUTANT__) and the files run in one process; a failing test = killed.
// Prints one JSON line per mutant and a summary. docs/testing.md says when we used it.
//
//   node scripts/mutation/recheck.mjs SANDBOX PROGRESS.jsonl TEST_FILE...
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const [sandbox, progress, ...tests] = process.argv.slice(2);
if (!sandbox || !progress || tests.length === 0) {
  console.error('usage: recheck.mjs SANDBOX PROGRESS.jsonl TEST_FILE...');
  process.exit(2);
}
// The new test files are not in the sandbox copy: copy them next to their directory
// (`test` -> `test-recheck`, same depth, so their relative imports still resolve) and out of the
// running Stryker's test glob.
const copies = tests.map((t) => {
  const dir = `${dirname(t)}-recheck`;
  mkdirSync(join(sandbox, dir), { recursive: true });
  copyFileSync(t, join(sandbox, dir, basename(t)));
  return join(dir, basename(t));
});
const undetected = readFileSync(progress, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
let killed = 0;
for (const m of undetected) {
  const r = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      '--import',
      './scripts/mutation/sandbox-resolve.mjs',
      '--test-reporter=dot',
      'scripts/mutation/run-test-files.mjs',
      ...copies,
    ],
    {
      cwd: sandbox,
      env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: m.id, AEP_FUZZ_RUNS: process.env.AEP_FUZZ_RUNS ?? '100' },
      encoding: 'utf8',
      // A mutant that hangs the files counts as detected (Stryker's Timeout); AEP_RECHECK_TIMEOUT_MS
      // shortens the wait for files that normally take seconds.
      timeout: Number(process.env.AEP_RECHECK_TIMEOUT_MS ?? 120_000),
    },
  );
  const status = r.status === 0 ? m.status : 'Killed';
  if (status === 'Killed') killed++;
  console.log(
    JSON.stringify({
      id: m.id,
      fileName: m.fileName,
      line: m.location.start.line,
      mutatorName: m.mutatorName,
      replacement: m.replacement,
      before: m.status,
      after: status,
    }),
  );
}
console.error(`recheck: ${killed} of ${undetected.length} undetected mutants killed by ${tests.join(', ')}`);
