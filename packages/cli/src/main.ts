// `aep` with every command registered (everything but the `validate` fast path: bin.ts).
import { runCli } from './run.js';

await runCli(async (program) => (await import('./commands/index.js')).registerAll(program));
