#!/usr/bin/env node
// Runs every test file with node:test. Node 20's test runner neither expands quoted globs nor
// finds .ts files by itself, so we list them here. Tests import workspace packages through the
// `source` export condition (TypeScript sources via tsx); subprocess tests start the compiled CLI.
//
//   node scripts/test.mjs                 all tests
//   node scripts/test.mjs packages/relay  only files under that path
//   node scripts/test.mjs --grep-files property   only files whose path contains "property"
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
let grep = null;
const roots = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--grep-files') grep = args[++i];
  else roots.push(args[i]);
}

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, out);
    else if (/\.test\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

const searchRoots = roots.length
  ? roots.map((r) => join(root, r))
  : [join(root, 'packages'), join(root, 'conformance'), join(root, 'scripts'), join(root, 'test')];
let files = [];
for (const r of searchRoots) {
  const st = (() => {
    try {
      return statSync(r);
    } catch {
      return null;
    }
  })();
  if (!st) continue;
  if (st.isFile()) files.push(r);
  else walk(r, files);
}
files = files.filter((f) => !f.includes(`${join('packages', 'web', 'node_modules')}`));
if (grep) files = files.filter((f) => f.includes(grep));
files.sort();
if (files.length === 0) {
  console.error('scripts/test.mjs: no test files found');
  process.exit(1);
}
console.error(`running ${files.length} test files`);
const child = spawn(
  process.execPath,
  [
    '--conditions=source',
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-timeout=180000',
    `--test-concurrency=${process.env.AEP_TEST_CONCURRENCY ?? 2}`,
    ...files.map((f) => relative(root, f)),
  ],
  { cwd: root, stdio: 'inherit', env: process.env },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
