// StrykerJS mutation testing (issue 20). `npm run mutation` runs it; see docs/testing.md for the
// scores, the survivors, run times and how to run one file. Not part of CI: on the project's
// 2-core machines a full run takes tens of minutes.
//
//   npm run mutation                                   packages/protocol (the default target)
//   AEP_MUTATION_TARGET=relay npm run mutation         the relay's ingest/auth/hub/store
//   npm run mutation -- --mutate packages/protocol/src/filter.ts     one file
//   npm run mutation -- --incremental                  reuse the last run's results
//
// Test runner: @stryker-mutator/tap-runner. node:test prints TAP (`--test-reporter=tap`) when a
// test file is run directly with `node FILE` (no `--test`: that would fork a child per file and
// the coverage hook would see nothing). The tap runner starts one process per test file, so
// "perTest" coverage is per test FILE: a mutant runs only the files that executed it, and the
// first failing file kills it (bail).

// Mutate globs per target. Keep them here, one place, so a renamed or split relay file is a
// one-line change.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * `file:start-end` for the block that starts on the first line containing `marker` and ends at
 * the closing brace at the same indentation (a method or a class), found in the source as it is
 * now: line numbers written by hand go stale as soon as the file is edited or reformatted.
 */
function span(file, marker) {
  const lines = readFileSync(new URL(file, import.meta.url), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.includes(marker));
  if (start < 0) throw new Error(`stryker.config.mjs: "${marker}" not found in ${file}`);
  const indent = /^\s*/.exec(lines[start])[0];
  const end = lines.findIndex((l, i) => i > start && l.startsWith(indent + '}') && !l.startsWith(indent + ' '));
  return `${file}:${start + 1}-${end + 1}`;
}

const TARGETS = {
  protocol: {
    mutate: ['packages/protocol/src/**/*.ts', '!packages/protocol/src/generated/**'],
    testFiles: ['packages/protocol/test/**/*.test.ts'],
    tsconfigFile: 'packages/protocol/tsconfig.json',
  },
  // The relay's ingest/auth/hub/store concerns after its split into modules (issue 12):
  //   ingest  ingest.ts (body parsing, envelope checks), http.ts commit() + tooLarge() + post()
  //           (the 202 after the commit), core.ts ingest() (admission and fan-out of one Event),
  //           backend.ts LocalLog (where post() awaits the store's commit since the scale-out seam)
  //   auth    auth.ts (owner token, principals), tokens.ts (scoped tokens), scopes.ts
  //   hub     hub.ts (fan-out, backpressure, replay)
  //   store   buffer.ts (the replay buffer the store mirrors), store.ts (SQLite writer),
  //           segments.ts (the store's on-disk format and write queue)
  // The ranges are found from the source (span() above), so edits and reformatting keep them.
  relay: {
    mutate: [
      ...['ingest', 'auth', 'tokens', 'scopes', 'hub', 'buffer', 'store', 'segments'].map((f) => `packages/relay/src/${f}.ts`),
      // http.ts commit() + tooLarge() + post(), to the end of the routes class.
      `${span('packages/relay/src/http.ts', '/** Wait for the store to commit what was queued').replace(/-\d+$/, '')}-${span('packages/relay/src/http.ts', 'export class').split('-').pop()}`,
      span('packages/relay/src/core.ts', '  describe(ev: Record<string, unknown>)'),
      span('packages/relay/src/core.ts', '  ingest(received: Incoming'),
      span('packages/relay/src/backend.ts', 'export class LocalLog'),
    ],
    // cli.test.ts and durability.test.ts drive the compiled `aep relay` in a subprocess, which
    // never runs a mutant (the sandbox's sources are not what dist/ was built from): they would
    // only slow every mutant that their in-process parts cover.
    testFiles: ['packages/relay/test/**/*.test.ts'],
    skipTests: ['cli.test.ts', 'durability.test.ts'],
    tsconfigFile: 'packages/relay/tsconfig.json',
  },
};

const targetName = process.env.AEP_MUTATION_TARGET ?? 'protocol';
const target = TARGETS[targetName];
if (!target) {
  throw new Error(`AEP_MUTATION_TARGET=${targetName}: unknown target (one of ${Object.keys(TARGETS).join(', ')})`);
}

// Property tests read AEP_FUZZ_RUNS (defaults 500-2000 per property). One mutant is usually
// killed within the first few generated cases, and every mutant run re-runs the property, so
// the mutation run uses 100. Override by setting AEP_FUZZ_RUNS yourself.
process.env.AEP_FUZZ_RUNS ??= '100';

// The tap runner expands `testFiles` with `glob`, which ignores `!` patterns: files to leave out
// are test file names in `skipTests`, plus AEP_MUTATION_SKIP_TESTS (comma-separated names) for a
// quicker run without the slowest files (say so next to any score measured that way).
const skip = new Set([...(target.skipTests ?? []), ...(process.env.AEP_MUTATION_SKIP_TESTS ?? '').split(',').filter(Boolean)]);
const testFiles =
  skip.size === 0
    ? target.testFiles
    : target.testFiles.flatMap((pattern) => {
        const dir = pattern.slice(0, pattern.indexOf('/**/'));
        return readdirSync(dir, { recursive: true })
          .filter((f) => f.endsWith('.test.ts') && !skip.has(basename(f)))
          .map((f) => `${dir}/${f}`)
          .sort();
      });

// AEP_MUTATION_REPORTS: another report directory (two runs side by side, each with its own
// `--tempDirName`).
const reportDir = process.env.AEP_MUTATION_REPORTS ?? `reports/mutation/${targetName}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  // tap-batch (scripts/mutation/tap-batch-runner.mjs) = the tap runner with one process per
  // mutant instead of one per test file and mutant; `testRunner: 'tap'` also works, slower.
  testRunner: 'tap-batch',
  plugins: ['@stryker-mutator/*', './scripts/mutation/tap-batch-runner.mjs', './scripts/mutation/progress-reporter.mjs'],
  checkers: ['typescript'],
  tsconfigFile: target.tsconfigFile,
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: target.mutate,
  tap: {
    testFiles,
    nodeArgs: [
      '--conditions=source',
      '--import',
      'tsx',
      // Maps @aep/* and nested node_modules to the sandbox (see the file's header).
      '--import',
      './scripts/mutation/sandbox-resolve.mjs',
      '--test-reporter=tap',
      '-r',
      '{{hookFile}}',
      '{{testFile}}',
    ],
  },
  coverageAnalysis: 'perTest',
  // Two cores, shared: one test runner per core (the checker gets its own process).
  // AEP_MUTATION_CONCURRENCY=1 (or `--concurrency 1`) when other work shares the machine.
  concurrency: Number(process.env.AEP_MUTATION_CONCURRENCY ?? 2),
  // The machine is often loaded far beyond its cores; a generous absolute slack keeps a slow
  // run from being counted as an (infinite-loop) timeout, which would inflate the score.
  timeoutMS: 15000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 15,
  incrementalFile: `${reportDir}/incremental.json`,
  // progress-jsonl (scripts/mutation/progress-reporter.mjs): one line per mutant as it is tested,
  // so a run stopped early still leaves its results.
  reporters: ['clear-text', 'progress-append-only', 'html', 'json', 'progress-jsonl'],
  progressJsonl: { fileName: `${reportDir}/progress.jsonl` },
  htmlReporter: { fileName: `${reportDir}/index.html` },
  jsonReporter: { fileName: `${reportDir}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
