// Enforces the one-way package dependencies (DEVELOPERS.md "Architecture") by reading the imports
// of every source file, so a lint rule cannot be quietly disabled around them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

const ALLOWED: Record<string, readonly string[]> = {
  protocol: [],
  client: ['protocol'],
  relay: ['protocol'],
  // Issue 16: the JetStream backend implements the relay's seams; only the CLI wires it.
  'relay-nats': ['protocol', 'relay'],
  'adapter-claude-code': ['protocol', 'client'],
  'mcp-bridge': ['protocol', 'client'],
  bridges: ['protocol', 'client'],
  delegate: ['protocol', 'client'],
  web: ['protocol', 'client'],
  notify: ['protocol', 'client'],
  cli: ['protocol', 'client', 'relay', 'relay-nats', 'adapter-claude-code', 'mcp-bridge', 'web', 'notify', 'bridges', 'delegate'],
};

function sources(dir: string, out: string[] = []): string[] {
  let names: string[];
  try { names = readdirSync(dir); } catch { return out; }
  for (const n of names) {
    if (n === 'node_modules' || n === 'dist') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|tsx|js|mjs|jsx)$/.test(n) && !n.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT_RE = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (spec) out.push(spec);
  }
  return out;
}

for (const [pkg, allowed] of Object.entries(ALLOWED)) {
  test(`packages/${pkg} imports only ${allowed.length ? allowed.join(', ') : 'no other workspace package'}`, () => {
    const bad: string[] = [];
    for (const file of sources(join(repoRoot, 'packages', pkg, 'src'))) {
      for (const spec of importsOf(file)) {
        const ws = /^@aep\/([^/]+)/.exec(spec);
        if (ws && ws[1] && ws[1] !== pkg && !allowed.includes(ws[1])) bad.push(`${file}: ${spec}`);
        // relative imports must stay inside the package
        if (spec.startsWith('.') && !join(file, '..', spec).startsWith(join(repoRoot, 'packages', pkg))) bad.push(`${file}: ${spec}`);
        // The bridges root entry is browser-safe: Node modules and the client only under src/node/.
        if (pkg === 'bridges' && !file.startsWith(join(repoRoot, 'packages', 'bridges', 'src', 'node')) && (spec.startsWith('node:') || spec.startsWith('@aep/client'))) bad.push(`${file}: ${spec} (bridges root is browser-safe: Node code lives in src/node)`);
        if (pkg === 'protocol' && (spec.startsWith('node:') || ['fs', 'path', 'http', 'net', 'crypto', 'os', 'child_process'].includes(spec))) bad.push(`${file}: ${spec} (protocol is pure: no I/O)`);
      }
    }
    assert.deepEqual(bad, []);
  });
}

test('the dependency checker itself catches a forbidden import', () => {
  const fake = "import { startRelay } from '@aep/relay';\nimport x from './y.js';";
  const specs = [...fake.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]);
  assert.deepEqual(specs, ['@aep/relay', './y.js']);
});
