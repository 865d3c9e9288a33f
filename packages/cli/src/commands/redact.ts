import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep redact`: run the AEP-0003 §9.4 redaction pipeline (not yet implemented). */
export function register(program: Command): void {
  program
    .command('redact')
    .description('run the AEP-0003 §9.4 redaction pipeline')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep redact is not implemented yet');
    }));
}
