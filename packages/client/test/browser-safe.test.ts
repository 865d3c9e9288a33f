// The browser-safe core (issue 13 item 3): the compiled `@aep/client` root entry, and everything
// it imports (our own compiled files and `@aep/protocol`'s), holds no `node:` import, no Node
// built-in, no `ws` and no other third-party module; its declaration files reference no Node
// types. Read from the compiled import graph (dist/), the way test/dependencies.test.ts reads
// source imports, so a re-export of a Node-only module cannot sneak in. The Node entry
// (`@aep/client/node`) is the only place `ws` may appear. Run after `npm run build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from '../../../test/support/cli.js';

const IMPORT_RE =
  /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[;\s])import\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|\/\/\/\s*<reference\s+types=['"]([^'"]+)['"]/g;
const BUILTINS = new Set(builtinModules);

/** Bare specifiers the browser graph may follow, mapped to compiled entry files. */
type Workspace = Readonly<Record<string, string>>;

interface Graph {
  files: string[];
  bad: string[];
}

/** Walks the compiled import graph from `entry` (a .js or .d.ts file). */
function importGraph(entry: string, workspace: Workspace): Graph {
  const seen = new Set<string>();
  const bad: string[] = [];
  const queue = [resolve(entry)];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!existsSync(file)) {
      bad.push(`${file}: missing (run npm run build)`);
      continue;
    }
    const text = readFileSync(file, 'utf8');
    // Comments are dropped (a JSDoc example is not an import), triple-slash references kept.
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`/])\/\/(?!\/\s*<reference).*$/gm, '$1');
    for (const m of code.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5];
      if (!spec) continue;
      const where = relative(repoRoot, file);
      if (m[5] !== undefined) {
        bad.push(`${where}: references types "${spec}"`);
        continue;
      }
      if (spec.startsWith('.')) {
        let target = resolve(dirname(file), spec);
        if (file.endsWith('.d.ts') && target.endsWith('.js')) target = target.slice(0, -3) + '.d.ts';
        queue.push(target);
        continue;
      }
      if (spec.startsWith('node:') || BUILTINS.has(spec)) {
        bad.push(`${where}: imports Node built-in "${spec}"`);
        continue;
      }
      const ws = workspace[spec];
      if (ws !== undefined) {
        queue.push(file.endsWith('.d.ts') ? ws.replace(/\.js$/, '.d.ts') : ws);
        continue;
      }
      bad.push(`${where}: imports third-party "${spec}"${spec === 'ws' ? ' (Node-only: belongs in @aep/client/node)' : ''}`);
    }
    // Node globals used at run time break a browser as surely as an import does.
    if (file.endsWith('.js')) {
      for (const g of ['process.', 'Buffer.', '__dirname', '__filename'])
        if (code.includes(g)) bad.push(`${relative(repoRoot, file)}: uses the Node global ${g.replace('.', '')}`);
    }
  }
  return { files: [...seen], bad };
}

const clientDist = join(repoRoot, 'packages', 'client', 'dist');
const WORKSPACE: Workspace = { '@aep/protocol': join(repoRoot, 'packages', 'protocol', 'dist', 'index.js') };

test('the compiled @aep/client root entry imports nothing Node-only (no node:, no built-in, no ws, no third-party)', () => {
  const js = importGraph(join(clientDist, 'index.js'), WORKSPACE);
  assert.deepEqual(js.bad, []);
  const names = js.files.map((f) => relative(repoRoot, f));
  assert.ok(
    names.includes(join('packages', 'client', 'dist', 'subscribe.js')) && names.includes(join('packages', 'protocol', 'dist', 'sse.js')),
    'the walk follows relative and workspace imports',
  );
  assert.ok(!names.some((n) => /emitter\.js|socket-node\.js|epoch\.js|host\.js/.test(n)), `Node-only modules in the browser graph: ${names.join(', ')}`);
  const dts = importGraph(join(clientDist, 'index.d.ts'), WORKSPACE);
  assert.deepEqual(dts.bad, [], 'the declarations a browser build type-checks against reference no Node types');
});

test('the package exports the core at "." and the Node entry at "./node", both with the source condition', () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'packages', 'client', 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
  assert.deepEqual(Object.keys(pkg.exports), ['.', './node']);
  assert.deepEqual(pkg.exports['.'], { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' });
  assert.deepEqual(pkg.exports['./node'], { source: './src/node.ts', types: './dist/node.d.ts', default: './dist/node.js' });
  // The Node entry is where ws lives (and it must: the emitter needs it).
  const node = importGraph(join(clientDist, 'node.js'), WORKSPACE);
  assert.ok(
    node.bad.some((b) => b.includes('"ws"')),
    'the Node entry injects ws',
  );
});

test('the graph checker itself catches node:, built-ins, ws, third-party modules, Node globals and type references', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-graph-'));
  try {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'index.js'), "import { a } from './sub/a.js';\nexport { b } from './b.js';\n");
    writeFileSync(join(dir, 'sub', 'a.js'), "import fs from 'node:fs';\nimport os from 'os';\nexport const a = process.env.X;\n");
    writeFileSync(
      join(dir, 'b.js'),
      "import WebSocket from 'ws';\nconst l = import('left-pad');\nexport const b = 1; // process.exit() in a comment is fine\n",
    );
    writeFileSync(join(dir, 'index.d.ts'), '/// <reference types="node" />\nexport declare const a: number;\n');
    const g = importGraph(join(dir, 'index.js'), {});
    const bad = g.bad.join('\n');
    for (const want of ['"node:fs"', '"os"', 'global process', '"ws"', '"left-pad"'])
      assert.match(bad, new RegExp(want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal(g.bad.length, 5, bad);
    assert.match(importGraph(join(dir, 'index.d.ts'), {}).bad.join('\n'), /references types "node"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('@aep/client/node exports every runtime name of the core (plus EmitterConnection and nodeSocketFactory)', async () => {
  const core = await import('@aep/client');
  const node = await import('@aep/client/node');
  assert.deepEqual(
    Object.keys(core).filter((k) => !(k in node)),
    [],
  );
  assert.deepEqual(
    Object.keys(node)
      .filter((k) => !(k in core))
      .sort(),
    ['EmitterConnection', 'nodeSocketFactory'],
  );
  assert.ok(new node.CommandSender({ url: 'http://127.0.0.1:9' }) instanceof core.CommandSender);
});
