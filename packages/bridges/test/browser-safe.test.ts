// The root entry of @aep/bridges loads in a browser (docs/conventions.md §10): its whole import graph has no
// `node:` module, no Node built-in, no `@aep/client` (which pulls `ws`) and nothing under
// ./node; the export map has exactly the root and `./node`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const SPEC = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
const BUILTINS = new Set([
  'fs',
  'path',
  'http',
  'https',
  'net',
  'os',
  'crypto',
  'child_process',
  'stream',
  'url',
  'util',
  'events',
  'zlib',
  'buffer',
  'worker_threads',
]);

function graph(entry: string): { files: string[]; bare: string[] } {
  const seen = new Set<string>();
  const bare: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(SPEC)) {
      const s = (m[1] ?? m[2] ?? m[3])!;
      if (s.startsWith('.')) visit(join(dirname(file), s.replace(/\.js$/, '.ts')));
      else bare.push(s);
    }
  };
  visit(entry);
  return { files: [...seen], bare };
}

test('root entry import graph: no node: module, no Node built-in, no @aep/client, nothing under src/node', () => {
  const { files, bare } = graph(join(src, 'index.ts'));
  assert.ok(files.length >= 6);
  assert.deepEqual(
    files.filter((f) => f.startsWith(join(src, 'node'))),
    [],
  );
  assert.deepEqual(
    bare.filter((s) => s.startsWith('node:') || BUILTINS.has(s)),
    [],
  );
  assert.deepEqual([...new Set(bare)].sort(), ['@aep/protocol']);
});

test('no Node globals in the root graph either (process, Buffer, require, __dirname)', () => {
  const { files } = graph(join(src, 'index.ts'));
  for (const f of files) {
    const code = readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l))
      .join('\n');
    const m = /\bprocess\.|\bBuffer\b|\brequire\(|__dirname|__filename/.exec(code);
    assert.equal(m, null, `${f}: ${m?.[0] ?? ''}`);
  }
});

test('export map: exactly "." and "./node", each with source/types/default', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
    dependencies: Record<string, string>;
  };
  assert.deepEqual(Object.keys(pkg.exports), ['.', './node']);
  for (const v of Object.values(pkg.exports)) assert.deepEqual(Object.keys(v), ['source', 'types', 'default']);
  for (const [name, version] of Object.entries(pkg.dependencies)) assert.match(version, /^\d+\.\d+\.\d+$/, `${name} pinned exactly`);
});
