// Entry of the "tap-batch" Stryker test runner (tap-batch-runner.mjs): imports each test file
// named on the command line into this one process, so node:test runs them all and prints one
// TAP stream. Files are imported in the order given.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) {
  await import(pathToFileURL(resolve(file)).href);
}
