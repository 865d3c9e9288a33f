#!/usr/bin/env node
// The `aep` command. Composition root: the only package that may import relay, adapter, bridge
// and web, and only to start them. Each subcommand lives in its own file under ./commands and
// loads heavy modules lazily inside its action so that `aep --help` and hook paths start fast.
import { Command, CommanderError } from 'commander';
import { EXIT } from './util/exit.js';
import { reportFatal } from './util/errors.js';

// A reader that goes away (`aep … | head`) must not crash the command with a stack trace: on
// EPIPE stop quietly with the exit code reached so far, unless the command handles it itself.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (stream.listenerCount('error') > 1) return;
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

const program = new Command();
program
  .name('aep')
  .description('Agent Event Protocol (AEP 0.1) toolkit: relay, inbox, validation, capture tools, adapters.')
  .version('0.1.0', '-V, --version')
  .showHelpAfterError('(add --help for usage)')
  .exitOverride();

// `aep validate` is a throughput command (issue 19): whole-process time counts, and loading every
// other command's module graph costs ~50 ms of ESM resolution before the first line is read. Its
// subcommand parsing and help are the same with only itself registered; everything else (including
// `aep --help`, which lists every command) registers all.
if (process.argv[2] === 'validate') (await import('./commands/validate.js')).register(program);
else (await import('./commands/index.js')).registerAll(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // --help and --version arrive here with exitCode 0; usage errors with 1 → our usage code 2.
    process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  } else {
    reportFatal(err);
  }
}
