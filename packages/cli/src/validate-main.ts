// `aep validate` on its own: the entry point of dist/validate.bundle.js (scripts/bundle-cli.mjs),
// one file with commander and @aep/protocol inside, so the command starts without resolving and
// compiling ~40 ES modules (issue 19: whole-process time is what `aep validate` is measured by).
// Its subcommand parsing and help are the same with only itself registered.
import { runCli } from './run.js';
import { register } from './commands/validate.js';

await runCli(register);
