// Pins the error catalogue (docs/errors.md, docs/conventions.md §5): every stable error code the sources
// use has a row, and every row names a code something uses. Codes are found as string literals
// `'AEP_…'` (environment variable reads excluded) and as the relay's HTTP `error:` / frame `code:`
// values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

function sources(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    if (n === 'node_modules' || n === 'dist' || n === 'generated') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|tsx)$/.test(n) && !n.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const ENV_VARS = new Set([
  'AEP_TOKEN',
  'AEP_RELAY',
  'AEP_DEBUG',
  'AEP_STATE_DIR',
  'AEP_CLAUDE_HOOK_URL',
  'AEP_CLAUDE_HOOK_TIMEOUT_MS',
  'AEP_CC_HOOK_SECRET',
  'AEP_SELF_COMMAND',
  'AEP_HINT_ARGS',
  'AEP_RELAY_SCAVENGE',
]);

function usedCodes(): Set<string> {
  const codes = new Set<string>();
  for (const pkg of readdirSync(join(repoRoot, 'packages'))) {
    let files: string[] = [];
    try {
      files = sources(join(repoRoot, 'packages', pkg, 'src'));
    } catch {
      continue;
    }
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/'(AEP_[A-Z0-9_]+)'/g)) {
        const code = m[1]!;
        if (!ENV_VARS.has(code) && !code.endsWith('_')) codes.add(code);
      }
      if (pkg === 'relay') {
        for (const m of text.matchAll(/\b(?:error|code):\s*'([a-z]+(?:-[a-z]+)*)'/g)) codes.add(m[1]!);
        for (const m of text.matchAll(/refuse\('\d{3}[^']*',\s*'([a-z]+(?:-[a-z]+)*)'/g)) codes.add(m[1]!);
      }
    }
  }
  return codes;
}

function documentedCodes(): Set<string> {
  const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');
  const out = new Set<string>();
  for (const line of doc.split('\n')) {
    const m = /^\| `([A-Za-z0-9_-]+)` \|/.exec(line);
    if (m) out.add(m[1]!);
  }
  return out;
}

test('every error code used in the sources has a row in docs/errors.md', () => {
  const documented = documentedCodes();
  const missing = [...usedCodes()].filter((c) => !documented.has(c)).sort();
  assert.deepEqual(missing, []);
});

test('every row of docs/errors.md names a code the sources use (no stale rows)', () => {
  const all = readdirSync(join(repoRoot, 'packages'))
    .flatMap((pkg) => {
      try {
        return sources(join(repoRoot, 'packages', pkg, 'src'));
      } catch {
        return [];
      }
    })
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const stale = [...documentedCodes()].filter((c) => !all.includes(c.startsWith('AEP_') ? c : `'${c}'`)).sort();
  assert.deepEqual(stale, []);
});
