// docs/architecture.md is drawn from the code: its "Rooms" section lists every source module of
// every package, and every module it lists exists (so the map cannot drift from the territory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './support/cli.js';

const doc = readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8');
const rooms = doc.slice(doc.indexOf('## Rooms'));

/** `packages/<pkg>/<module>` for every row of the Rooms tables. */
function listed(): string[] {
  const out: string[] = [];
  let pkg = '';
  for (const line of rooms.split('\n')) {
    const h = /^### `packages\/([^`]+)`/.exec(line);
    if (h) pkg = h[1]!;
    const row = /^\| `([^`]+)` \|/.exec(line);
    if (row && pkg) out.push(`packages/${pkg}/${row[1]}`);
  }
  return out;
}

test('docs/architecture.md lists every source module, and only existing ones', () => {
  assert.ok(rooms.startsWith('## Rooms'), 'docs/architecture.md has a "## Rooms" section');
  const modules = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'packages'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\n')
    .filter((f) => /^packages\/[^/]+\/src\/.+\.tsx?$/.test(f) && !f.includes('/generated/') && !f.endsWith('.d.ts') && existsSync(join(repoRoot, f)));
  const rows = listed();
  assert.deepEqual(
    modules.filter((m) => !rows.includes(m)),
    [],
    'modules missing from docs/architecture.md "Rooms"',
  );
  assert.deepEqual(
    rows.filter((r) => !existsSync(join(repoRoot, r))),
    [],
    'rows naming modules that do not exist',
  );
});
