// The two pieces of the mutation setup whose failure would be silent (docs/testing.md
// "How it is set up"): the sandbox resolve hook (if it resolved @aep/* to the original sources,
// every mutant would survive) and the batch runner's file order and killer attribution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { initialize, resolve } from './sandbox-resolve-hooks.mjs';
import { orderForKill, killingFiles } from './batch-order.mjs';

test('sandbox hook: @aep/<pkg> resolves to the sandbox copy; other bare imports as from the original file', async () => {
  const base = mkdtempSync(join(tmpdir(), 'aep-mut-'));
  try {
    const original = join(base, 'repo');
    const sandbox = join(original, '.stryker-tmp', 'sandbox-1');
    for (const r of [original, sandbox]) {
      mkdirSync(join(r, 'packages', 'protocol', 'src'), { recursive: true });
      writeFileSync(join(r, 'packages', 'protocol', 'package.json'), JSON.stringify({ exports: { '.': { source: './src/index.ts' } } }));
    }
    mkdirSync(join(original, 'node_modules'));
    symlinkSync(join(original, 'node_modules'), join(sandbox, 'node_modules'));
    initialize({ root: sandbox });
    const calls = [];
    const next = async (specifier, context) => {
      calls.push([specifier, context.parentURL]);
      return { url: `next:${specifier}` };
    };
    const parentURL = pathToFileURL(join(sandbox, 'packages', 'protocol', 'test', 'x.test.ts')).href;

    await resolve('@aep/protocol', { parentURL }, next);
    assert.deepEqual(calls.pop(), [pathToFileURL(join(sandbox, 'packages', 'protocol', 'src', 'index.ts')).href, parentURL]);

    await resolve('ajv/dist/2020.js', { parentURL }, next);
    assert.deepEqual(calls.pop(), ['ajv/dist/2020.js', pathToFileURL(join(original, 'packages', 'protocol', 'test', 'x.test.ts')).href]);

    await resolve('./y.js', { parentURL }, next);
    assert.deepEqual(calls.pop(), ['./y.js', parentURL], 'relative imports stay in the sandbox');
    await resolve('node:fs', { parentURL }, next);
    assert.deepEqual(calls.pop(), ['node:fs', parentURL]);
    await resolve('@aep/unknown', { parentURL }, next);
    assert.deepEqual(
      calls.pop(),
      ['@aep/unknown', pathToFileURL(join(original, 'packages', 'protocol', 'test', 'x.test.ts')).href],
      'a package the sandbox lacks resolves as usual',
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('batch runner: files named after the mutated source run first, then the fastest', () => {
  const times = new Map([
    ['t/a.test.ts', 5],
    ['t/b.test.ts', 1],
    ['t/redact.test.ts', 9],
    ['t/redact-digest.test.ts', 7],
  ]);
  assert.deepEqual(orderForKill(['t/a.test.ts', 't/redact.test.ts', 't/b.test.ts', 't/redact-digest.test.ts'], '/x/src/redact.ts', times), [
    't/redact-digest.test.ts',
    't/redact.test.ts',
    't/b.test.ts',
    't/a.test.ts',
  ]);
  assert.deepEqual(orderForKill(['t/a.test.ts', 't/b.test.ts'], undefined, new Map()), ['t/a.test.ts', 't/b.test.ts']);
  assert.deepEqual(orderForKill(['t/a.test.ts', 't/mutation-frames.test.ts', 't/x-frames.test.ts'], 'src/frames.ts', times), [
    't/mutation-frames.test.ts',
    't/a.test.ts',
    't/x-frames.test.ts',
  ]);
  assert.deepEqual(
    orderForKill(['t/mutation-frames.test.ts', 't/a.test.ts', 't/frames.test.ts'], 'src/frames.ts', times, 'mutation-'),
    ['t/frames.test.ts', 't/a.test.ts', 't/mutation-frames.test.ts'],
    'files with the `last` prefix run after every other',
  );
});

test("batch runner: the killing file is read from node:test's failure location; unknown -> every file of the batch", () => {
  const files = ['p/test/a.test.ts', 'p/test/ab.test.ts'];
  const at = (f) => ({ diag: { location: `${join(process.cwd(), f)}:3:7` } });
  assert.deepEqual(killingFiles(files, [at('p/test/ab.test.ts')]), ['p/test/ab.test.ts'], 'a.test.ts is not a prefix match of ab.test.ts');
  assert.deepEqual(killingFiles(files, [{ diag: {} }]), files);
});
