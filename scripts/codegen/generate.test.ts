// The generator: deterministic output, committed output up to date, provenance header, the
// supported subset (number, type lists, free-form records) and loud failures naming the schema
// path on anything else.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generate, GeneratorError, OUT_DIR } from './generate.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const schemas = join(repo, 'schemas');
const tmp = mkdtempSync(join(tmpdir(), 'aep-codegen-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** A scratch copy of schemas/ with one payload schema edited. */
function withEdit(file: string, edit: (s: Record<string, unknown>) => void): string {
  const dir = join(tmp, `s${++n}`);
  cpSync(schemas, dir, { recursive: true });
  const p = join(dir, 'types', file);
  const s = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  edit(s);
  writeFileSync(p, JSON.stringify(s, null, 2));
  return dir;
}

test('identical input gives byte-identical output (twice, and from a copy elsewhere)', () => {
  const a = generate();
  const b = generate();
  const copy = join(tmp, 'copy');
  cpSync(schemas, copy, { recursive: true });
  const c = generate(copy);
  assert.deepEqual([...a.keys()], ['types.ts', 'registry.ts', 'capture-trees.ts', 'validators.ts']);
  for (const [k, v] of a) {
    assert.equal(b.get(k), v, k);
    assert.equal(c.get(k), v, k);
  }
});

test('the committed generated files are up to date and carry the provenance header', () => {
  for (const [k, v] of generate()) {
    assert.equal(readFileSync(join(repo, OUT_DIR, k), 'utf8'), v, `${OUT_DIR}/${k} is stale: run npm run codegen`);
    assert.match(
      v,
      /^\/\/ GENERATED FILE: do not edit\. Regenerate with `npm run codegen`\.\n\/\/ Source: schemas\/ .*\n\/\/ Input digest: sha256:[0-9a-f]{32}\n/,
    );
  }
});

test('a schema change changes the output (digest and content)', () => {
  const dir = withEdit('progress.status.schema.json', (s) => {
    (s['properties'] as Record<string, unknown>)['eta_ms'] = { type: 'integer', minimum: 0, 'x-aep-capture': 'metadata' };
  });
  const out = generate(dir);
  assert.notEqual(out.get('types.ts'), generate().get('types.ts'));
  assert.match(out.get('types.ts')!, /eta_ms\?: number;/);
});

test('the supported subset: number, type lists, free-form records, quoted dotted keys, nested names', () => {
  const types = generate().get('types.ts')!;
  assert.match(types, /export interface AttentionRequestedDataFieldsItem \{[^}]*min\?: number;/s);
  assert.match(types, /result\?: Record<string, unknown> \| string;/);
  assert.match(types, /"gen_ai\.usage\.input_tokens"\?: number;/);
  assert.match(types, /export interface AttentionRequestedDataFieldsItemChoicesItem \{/);
  assert.match(types, /kind: "permission" \| "input" \| "auth" \| "review" \| "form" \| "other";/);
  assert.match(types, /\/\*\* capture >= redacted \*\/\n {2}prompt\?: string;/);
  assert.match(types, /export const AEP_MANDATORY_TYPES = \[/);
  const validators = generate().get('validators.ts')!;
  assert.doesNotMatch(validators, /require\(/);
  assert.match(validators, /import \{ ucs2length, formats \} from '\.\.\/schema-runtime\.js';/);
});

const UNSUPPORTED: [string, (p: Record<string, unknown>) => void, string][] = [
  [
    'a bare $ref',
    (p) => {
      p['tool'] = { $ref: '#/$defs/tool_ref' };
    },
    '/properties/tool/$ref',
  ],
  [
    'oneOf',
    (p) => {
      p['tool'] = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    },
    '/properties/tool/oneOf',
  ],
  [
    'const',
    (p) => {
      p['args_digest'] = { const: 'x' };
    },
    '/properties/args_digest/const',
  ],
  [
    'type null',
    (p) => {
      p['args_digest'] = { type: 'null' };
    },
    '/properties/args_digest/type',
  ],
  [
    'a null inside a type list',
    (p) => {
      p['args_digest'] = { type: ['string', 'null'] };
    },
    '/properties/args_digest/type/1',
  ],
  [
    'an array without items',
    (p) => {
      p['args_digest'] = { type: 'array' };
    },
    '/properties/args_digest',
  ],
  [
    'additionalProperties',
    (p) => {
      p['args'] = { type: 'object', additionalProperties: false };
    },
    '/properties/args/additionalProperties',
  ],
  [
    'an unknown x-aep-capture level',
    (p) => {
      p['args_digest'] = { type: 'string', 'x-aep-capture': 'secret' };
    },
    '/properties/args_digest/x-aep-capture',
  ],
  [
    'an exception field above metadata',
    (p) => {
      p['args_digest'] = { type: 'string', 'x-aep-capture': 'full', 'x-aep-exception': 'label' };
    },
    '/properties/args_digest/x-aep-exception',
  ],
  [
    'a nested unsupported construct',
    (p) => {
      (p['tool'] as { properties: Record<string, unknown> }).properties['name'] = { anyOf: [] };
    },
    '/properties/tool/properties/name/anyOf',
  ],
];

for (const [what, edit, pointer] of UNSUPPORTED) {
  test(`fails loudly naming the schema path on ${what}`, () => {
    const dir = withEdit('tool.requested.schema.json', (s) => edit(s['properties'] as Record<string, unknown>));
    assert.throws(
      () => generate(dir),
      (e: unknown) => e instanceof GeneratorError && e.schemaPath === `types/tool.requested.schema.json#${pointer}` && e.message.startsWith(e.schemaPath),
    );
  });
}

test('the CLI: --check fails naming the differing file; a bad schema exits 1 naming its path', () => {
  const out = join(tmp, 'out');
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'scripts/codegen/generate.ts'), ...args], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run(['--out', out]).status, 0);
  assert.equal(run(['--check', '--out', out]).status, 0);
  writeFileSync(join(out, 'registry.ts'), readFileSync(join(out, 'registry.ts'), 'utf8') + '// edited\n');
  const r = run(['--check', '--out', out]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /registry\.ts differs from the schemas/);
  const bad = withEdit('agent.health.schema.json', (s) => {
    (s['properties'] as Record<string, unknown>)['status'] = { oneOf: [] };
  });
  const r2 = run(['--schemas', bad, '--out', out]);
  assert.equal(r2.status, 1);
  assert.match(r2.stderr, /types\/agent\.health\.schema\.json#\/properties\/status\/oneOf: /);
});
