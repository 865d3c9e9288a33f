#!/usr/bin/env node
// `npm run bench`: runs every packages/*/bench/*.bench.ts (and conformance/bench) one after the
// other, so they do not compete for the two cores. Each prints its own lines: a result measured
// beside a baseline taken in the same run, and their ratio. Tests never assert timings.
//   npm run bench                 everything
//   npm run bench -- relay        only bench files whose path contains "relay"
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const only = process.argv[2];
const files = [];
for (const pkg of readdirSync(join(root, 'packages'))) {
  const dir = join(root, 'packages', pkg, 'bench');
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.bench.ts')) files.push(join(dir, f));
}
// The filter matches the path inside the repository, never the checkout's own location.
const selected = only ? files.filter((f) => f.slice(root.length).includes(only)) : files;
console.log(`# aep bench  node ${process.version}  ${new Date().toISOString()}`);
let failed = 0;
for (const f of selected) {
  // The machine is shared: every figure is read beside the load average it was taken at.
  console.log(
    `\n## ${f.slice(root.length)}  (load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')})`,
  );
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', f], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`(bench exited ${r.status})`);
  }
}
console.log(
  `\n# end  load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
process.exit(failed ? 1 : 0);
