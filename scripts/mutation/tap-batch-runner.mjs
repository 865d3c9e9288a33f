// StrykerJS test runner "tap-batch": @stryker-mutator/tap-runner, except that a mutant run starts
// ONE node process for all the test files that cover the mutant instead of one per file.
//
// Why: the stock tap runner pays node + tsx start-up and the import of @aep/protocol (about 1 s
// on this 2-core machine, more under load) for every file of every mutant, and with ~6000
// protocol mutants that overhead was two thirds of a run (measured: the dry run spent 25 s in
// tests and 34 s in overhead for 19 files). The dry run stays per file (inherited), so coverage
// is still per test file, a mutant still runs only the files that executed it, and the report
// and incremental mode still name the killing file: node:test's TAP puts the failing test's
// `location` (its file) in the failure's YAML block, and we map it back.
//
// The files share one process: fine for tests that keep no process-wide state between files
// (true of packages/protocol; check before adding a target whose tests change process.env or
// globals). A fresh process per mutant is kept, so static mutants need nothing special.
import childProcess from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commonTokens, declareFactoryPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';
import { INSTRUMENTER_CONSTANTS } from '@stryker-mutator/api/core';
import { determineHitLimitReached, DryRunStatus, MutantRunStatus } from '@stryker-mutator/api/test-runner';
import { TapTestRunner } from '@stryker-mutator/tap-runner';
import { killingFiles, orderForKill } from './batch-order.mjs';

// Internal helpers of the tap runner (not in its `exports`): TAP capture with bail, and the
// `{{hookFile}}`/`{{testFile}}` substitution. Pinned to the exact tap-runner version.
const tapRunnerDir = path.dirname(fileURLToPath(import.meta.resolve('@stryker-mutator/tap-runner/package.json')));
const { captureTapResult, buildArguments } = await import(path.join(tapRunnerDir, 'dist/src/tap-helper.js'));
const { strykerHitLimit, strykerNamespace, strykerDryRun, tempTapOutputFileName } = await import(path.join(tapRunnerDir, 'dist/src/setup/env.cjs'));

const TIMES_FILE = 'stryker-batch-times.json';
const ENTRY = fileURLToPath(new URL('./run-test-files.mjs', import.meta.url));

export class TapBatchTestRunner extends TapTestRunner {
  static inject = tokens(commonTokens.options, commonTokens.logger, 'globalNamespace');

  constructor(options, log, globalNamespace) {
    super(options, log, globalNamespace);
    this.batchLog = log;
    this.batchNamespace = globalNamespace;
  }

  /** Per test file: the dry run's time, to run the fastest files first. */
  fileTimes = null;

  // Only one runner process does the dry run; it leaves the times in the (shared) sandbox for
  // the others.
  async dryRun(options) {
    const result = await super.dryRun(options);
    if (result.status === DryRunStatus.Complete) {
      const times = Object.fromEntries(result.tests.map((t) => [t.id, t.timeSpentMs]));
      await fs.writeFile(TIMES_FILE, JSON.stringify(times));
    }
    return result;
  }

  async mutantRun(options) {
    if (!this.fileTimes) {
      this.fileTimes = new Map(Object.entries(JSON.parse(await fs.readFile(TIMES_FILE, 'utf8').catch(() => '{}'))));
    }
    const files = orderForKill(options.testFilter ?? this.testFiles, options.activeMutant.fileName, this.fileTimes, process.env.AEP_MUTATION_LAST ?? '');
    if (files.length === 0) return { status: MutantRunStatus.Survived, nrOfTests: 0 };
    const env = {
      ...process.env,
      [strykerNamespace]: this.batchNamespace,
      [INSTRUMENTER_CONSTANTS.ACTIVE_MUTANT_ENV_VARIABLE]: options.activeMutant.id,
      [strykerDryRun]: 'false',
    };
    if (options.hitLimit !== undefined) env[strykerHitLimit] = String(options.hitLimit);
    else delete env[strykerHitLimit];
    const args = [...buildArguments(this.options.tap.nodeArgs, TapTestRunner.hookFile, ENTRY), ...files];
    if (this.batchLog.isDebugEnabled()) this.batchLog.debug(`Running: node ${args.join(' ')}`);
    const proc = childProcess.spawn(process.execPath, args, { env });
    let tap;
    try {
      tap = await captureTapResult(proc, !options.disableBail && this.options.tap.forceBail);
    } catch (err) {
      // The process failed without a failing test: the mutant broke loading (a static mutant
      // that throws at import). Stryker counts that as a runtime error (detected).
      await fs.rm(tempTapOutputFileName(proc.pid), { force: true });
      return { status: MutantRunStatus.Error, errorMessage: err instanceof Error ? err.message : String(err) };
    }
    let hitCount;
    try {
      const out = JSON.parse(await fs.readFile(tempTapOutputFileName(proc.pid), 'utf8'));
      hitCount = out.hitCount;
    } finally {
      await fs.rm(tempTapOutputFileName(proc.pid), { force: true });
    }
    const hitLimit = determineHitLimitReached(hitCount, options.hitLimit);
    if (hitLimit) return { status: MutantRunStatus.Timeout, reason: hitLimit.reason };
    if (tap.result.ok) return { status: MutantRunStatus.Survived, nrOfTests: files.length };
    const killedBy = killingFiles(files, tap.failedTests);
    const failureMessage = tap.failedTests.map((f) => `${f.fullname}: ${f.name}`).join(', ') || 'Unknown issue';
    return { status: MutantRunStatus.Killed, killedBy, failureMessage, nrOfTests: files.length };
  }
}

function createTapBatchTestRunner(injector) {
  return injector.provideValue('globalNamespace', INSTRUMENTER_CONSTANTS.NAMESPACE).injectClass(TapBatchTestRunner);
}
createTapBatchTestRunner.inject = tokens(commonTokens.injector);

export const strykerPlugins = [declareFactoryPlugin(PluginKind.TestRunner, 'tap-batch', createTapBatchTestRunner)];
