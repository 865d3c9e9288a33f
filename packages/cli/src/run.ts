// What every `aep` invocation runs around its commands: the program, EPIPE handling, and the
// mapping of commander's and our errors to exit codes. `register` adds the commands this
// process knows (all of them, or only `validate` on its fast path: bin.ts).
import { Command, CommanderError } from 'commander';
import { EXIT } from './util/exit.js';
import { reportFatal } from './util/errors.js';

export async function runCli(register: (program: Command) => void | Promise<void>): Promise<void> {
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
  await register(program);

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
}
