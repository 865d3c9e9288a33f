// Pure helpers of the tap-batch runner (tap-batch-runner.mjs), apart so a test can import them
// without loading Stryker (tap-parser's `source` export condition breaks under --conditions=source).
import path from 'node:path';

// Bail stops at the first failing file, so the order decides how much runs for a killed mutant:
// first the files named after the mutated source file (src/redact.ts -> redact.test.ts,
// redact-digest.test.ts, mutation-redact.test.ts), then the rest, fastest first. A survivor runs
// them all anyway.
//
// `last` (AEP_MUTATION_LAST, a file name prefix): files whose name starts with it run after all
// the others. With bail, a mutant is then credited to one of them only when every other
// covering file passed, so one run gives the score without them too (survivors.mjs --without):
// how docs/testing.md measured "before" and "after" the mutation-*.test.ts files in one run.
export function orderForKill(files, mutatedFile, times, last = '') {
  const stem = path.basename(mutatedFile ?? '').replace(/\.[cm]?[jt]sx?$/, '');
  const late = (f) => (last && path.basename(f).startsWith(last) ? 1 : 0);
  const named = (f) =>
    stem &&
    path
      .basename(f)
      .replace(/^mutation-/, '')
      .startsWith(stem)
      ? 0
      : 1;
  const time = (f) => times.get(f) ?? Number.MAX_SAFE_INTEGER;
  return [...files].sort((a, b) => late(a) - late(b) || named(a) - named(b) || time(a) - time(b) || (a < b ? -1 : a > b ? 1 : 0));
}

// node:test reports `location: '<abs path>:line:col'` for each failing test.
export function killingFiles(files, failedTests) {
  const found = new Set();
  for (const f of failedTests) {
    const loc = f.diag && typeof f.diag.location === 'string' ? f.diag.location : '';
    for (const file of files) {
      if (loc.startsWith(path.resolve(file) + ':')) found.add(file);
    }
  }
  // A failure outside any test file (a helper, a hook): credit every file of the batch, so
  // incremental mode re-runs the mutant when any of them changes.
  return found.size ? [...found] : [...files];
}
