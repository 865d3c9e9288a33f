// Loaded with `--import` into every test process that StrykerJS starts (see stryker.config.mjs).
// Stryker copies the repository into a sandbox (.stryker-tmp/sandbox-*) WITHOUT any node_modules
// and symlinks only the root node_modules into it. Two things then go wrong, and the hooks in
// sandbox-resolve-hooks.mjs fix both:
// - `@aep/<pkg>` is a symlink in that node_modules pointing at the ORIGINAL packages/<pkg>, so the
//   tests would import the unmutated sources and every mutant would survive;
// - packages keep their own nested node_modules (packages/protocol/node_modules/ajv is ajv 8,
//   the root one is eslint's ajv 6), which the sandbox lacks.
import { register } from 'node:module';

register('./sandbox-resolve-hooks.mjs', import.meta.url, { data: { root: process.cwd() } });
