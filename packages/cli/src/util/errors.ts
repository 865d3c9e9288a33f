import { EXIT, type ExitCode } from './exit.js';
import { cliErrorInfo } from './codes.js';

/**
 * A user-facing CLI error: stable code, a message naming the rule or option broken, and the exit
 * status. For `AEP_CLI_*` codes the status always comes from the table in ./codes.ts (one code,
 * one status in every command); `exitCode` only matters for codes of other areas passed through
 * (`AEP_CC_*`, `AEP_RELAY_*`, bridge codes). Local family: never sent on the wire.
 */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  constructor(code: string, message: string, exitCode?: ExitCode) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.exitCode = cliErrorInfo(code)?.exit ?? exitCode ?? EXIT.INTERNAL;
  }
}

/** Print an error without a stack trace (unless AEP_DEBUG=1) and set the exit code. */
export function reportFatal(err: unknown): void {
  if (err instanceof CliError) {
    process.stderr.write(`aep: ${err.code}: ${err.message}\n`);
    process.exitCode = err.exitCode;
    return;
  }
  // Not a CliError: our fault, not the person's. Its own exit status (70), never the usage one.
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`aep: AEP_CLI_INTERNAL: ${msg}\n`);
  if (process.env['AEP_DEBUG'] === '1' && err instanceof Error && err.stack) {
    process.stderr.write(err.stack + '\n');
  }
  process.exitCode = EXIT.INTERNAL;
}

/** Wrap a commander action so thrown errors become coded messages, never stack traces. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      reportFatal(err);
    }
  };
}
