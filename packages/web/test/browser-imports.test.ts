// What the web bundle imports stays browser-safe (issue 13 item 3). The inbox (src/) and its
// service worker (sw/) import only relative modules, preact, `@aep/protocol` and the root of
// `@aep/client` (the browser-safe core whose import graph packages/client/test/browser-safe.test.ts
// walks: no `node:`, no built-in, no `ws`); never `@aep/client/node`, a Node built-in or any other
// package. And the built bundle holds none of the Node-only code (run after `npm run build`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { webRoot } from '@aep/web';

const pkgDir = join(import.meta.dirname, '..');
const ALLOWED = new Set(['@aep/protocol', '@aep/client', 'preact', 'preact/hooks', 'preact/jsx-runtime']);
const IMPORT_RE = /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[;\s])import\s*['"]([^'"]+)['"]/g;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.tsx?$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Bare import specifiers a source file uses that a browser bundle must not follow. */
function forbiddenImports(code: string): string[] {
  const bad: string[] = [];
  const stripped = code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`/])\/\/.*$/gm, '$1');
  for (const m of stripped.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec || spec.startsWith('.')) continue;
    if (spec.startsWith('node:') || builtinModules.includes(spec) || !ALLOWED.has(spec)) bad.push(spec);
  }
  return bad;
}

test('the inbox and its service worker import only relative modules, preact, @aep/protocol and the @aep/client core', () => {
  const files = [...sources(join(pkgDir, 'src')), ...sources(join(pkgDir, 'sw'))];
  assert.ok(files.length > 10, 'the walk found the sources');
  const bad: string[] = [];
  let usesClient = false;
  for (const f of files) {
    const code = readFileSync(f, 'utf8');
    if (/from '@aep\/client'/.test(code)) usesClient = true;
    for (const spec of forbiddenImports(code)) bad.push(`${relative(pkgDir, f)}: ${spec}`);
  }
  assert.deepEqual(bad, []);
  assert.ok(usesClient, 'the inbox sends and subscribes through @aep/client (one wire layer)');
});

test('the checker itself refuses the Node entry, built-ins and other packages', () => {
  const code =
    "import { EmitterConnection } from '@aep/client/node';\nimport fs from 'node:fs';\nimport os from 'os';\nimport WebSocket from 'ws';\nimport { h } from 'preact';\n// import x from 'left-pad';\nconst m = import('left-pad');";
  assert.deepEqual(forbiddenImports(code), ['@aep/client/node', 'node:fs', 'os', 'ws', 'left-pad']);
});

test('the built bundle carries none of the Node-only code (no node: specifier, no ws, no emitter)', () => {
  const assets = join(webRoot, 'assets');
  assert.ok(existsSync(assets), 'run npm run build first');
  const js = readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(assets, f), 'utf8'))
    .join('\n');
  assert.ok(js.length > 0);
  assert.doesNotMatch(js, /["']node:[a-z_]+["']/, 'no node: import survives in the bundle');
  assert.doesNotMatch(js, /ws does not work in the browser/, 'ws is not bundled');
  assert.doesNotMatch(js, /AEP_CLIENT_EMITTER|EmitterConnection/, 'the Node-only emitter is not bundled');
  // The client core is in (the sender's and the subscriber's refusal code).
  assert.match(js, /AEP_CLIENT_REFUSED/);
});
