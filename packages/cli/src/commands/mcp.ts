import type { Command } from 'commander';
import { action } from '../util/errors.js';
import { CliError } from '../util/errors.js';

/** `aep mcp`: MCP elicitation bridge (not yet implemented). */
export function register(program: Command): void {
  program
    .command('mcp')
    .description('MCP elicitation bridge')
    .action(action(() => {
      throw new CliError('AEP_CLI_NOT_IMPLEMENTED', 'aep mcp is not implemented yet');
    }));
}
