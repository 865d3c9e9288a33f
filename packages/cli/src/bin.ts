#!/usr/bin/env node
// The `aep` command. Composition root: the only package that may import relay, adapter, bridge
// and web, and only to start them. Each subcommand lives in its own file under ./commands and
// loads heavy modules lazily inside its action so that `aep --help` and hook paths start fast.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// `aep validate` is a throughput command (issue 19): whole-process time counts. It starts from
// one bundled file when the build made it (scripts/bundle-cli.mjs; ~60 ms less than resolving
// commander, @aep/protocol and the CLI's modules one by one), else from its compiled entry.
// Everything else (including `aep --help`, which lists every command) registers all commands.
if (process.argv[2] === 'validate') {
  const bundle = new URL('./validate.bundle.js', import.meta.url);
  await import(existsSync(fileURLToPath(bundle)) ? bundle.href : './validate-main.js');
} else {
  await import('./main.js');
}
