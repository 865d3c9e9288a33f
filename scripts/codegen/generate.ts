// Code generator: schemas/ -> packages/protocol/src/generated/ (types, registry, capture trees,
// standalone ajv validators). Run `npm run codegen`; `npm run codegen:check` regenerates in memory
// and fails naming the first file that differs. Deterministic: identical inputs give byte-identical
// outputs (registry order, schema member order, no timestamps).
//
// Supported schema subset for types (AEP-0002 §4 "Code generation"): objects whose members are
// string / integer / number / boolean / enum / nested object / array (with `items`), and `type`
// given as a list of those. Validation-only keywords are passed over. Anything else fails loudly
// with a GeneratorError naming the schema file and JSON pointer.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';

/** A schema the generator cannot handle; `schemaPath` is `file#/json/pointer`. */
export class GeneratorError extends Error {
  readonly schemaPath: string;
  constructor(schemaPath: string, message: string) {
    super(`${schemaPath}: ${message}`);
    this.name = 'GeneratorError';
    this.schemaPath = schemaPath;
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Where generated files go, relative to the repository root. */
export const OUT_DIR = 'packages/protocol/src/generated';

// ajv 8 is a dependency of @aep/protocol (the root node_modules may hold an older ajv for eslint).
const requireFromProtocol = createRequire(join(repoRoot, 'packages/protocol/package.json'));

const CAPTURE = ['metadata', 'redacted', 'full'] as const;
const EXCEPTIONS = ['prompt', 'label', 'values'] as const;
// Keywords that only constrain values (or annotate) and never change the generated types.
const PASS_OVER = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'if',
  'then',
  'else',
  'x-aep-capture',
  'x-aep-exception',
  'x-aep-rule',
]);
const SCALARS = new Set(['string', 'integer', 'number', 'boolean', 'object', 'array']);

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function ptr(base: string, ...segs: (string | number)[]): string {
  return base + segs.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function pascal(s: string): string {
  return s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function key(k: string): string {
  return IDENT.test(k) ? k : JSON.stringify(k);
}

/** Inputs read from a schema directory. */
export interface SchemaSet {
  envelope: Obj;
  types: Obj;
  categories: Obj;
  capture: Obj;
  severity: Obj;
  nackReasons: Obj;
  /** file name under types/ -> schema */
  payloads: Map<string, Obj>;
}

function readJson(path: string): Obj {
  const v = JSON.parse(readFileSync(path, 'utf8')) as Json;
  if (!isObj(v)) throw new GeneratorError(path, 'not a JSON object');
  return v;
}

/** Reads the envelope, registry and every payload schema named by the registry. */
export function readSchemas(dir: string): SchemaSet {
  const types = readJson(join(dir, 'registry/types.json'));
  const payloads = new Map<string, Obj>();
  const rows = types['types'];
  if (!Array.isArray(rows)) throw new GeneratorError('registry/types.json#/types', 'must be an array');
  for (const row of rows) {
    if (isObj(row) && typeof row['schema'] === 'string') {
      payloads.set(row['schema'], readJson(join(dir, 'types', row['schema'])));
    }
  }
  return {
    envelope: readJson(join(dir, 'aep-event.schema.json')),
    types,
    categories: readJson(join(dir, 'registry/categories.json')),
    capture: readJson(join(dir, 'registry/capture.json')),
    severity: readJson(join(dir, 'registry/severity.json')),
    nackReasons: readJson(join(dir, 'registry/nack-reasons.json')),
    payloads,
  };
}

interface TypeRow {
  type: string;
  category: string;
  status: string;
  scope: string;
  schema: string | null;
  summary: string;
}

function typeRows(set: SchemaSet): TypeRow[] {
  const rows = set.types['types'] as Json[];
  return rows.map((r, i) => {
    const at = `registry/types.json#/types/${i}`;
    if (!isObj(r)) throw new GeneratorError(at, 'row must be an object');
    const { type, status, scope, schema, summary } = r;
    if (typeof type !== 'string' || typeof status !== 'string' || typeof scope !== 'string' || typeof summary !== 'string') {
      throw new GeneratorError(at, 'row needs string type, status, scope and summary');
    }
    if (!['mandatory', 'optional', 'reserved', 'deprecated'].includes(status)) throw new GeneratorError(at + '/status', `unknown status ${status}`);
    if (!['session', 'agent', 'command'].includes(scope)) throw new GeneratorError(at + '/scope', `unknown scope ${scope}`);
    if (schema !== null && typeof schema !== 'string') throw new GeneratorError(at + '/schema', 'must be a file name or null');
    return { type, category: type.split('.')[0]!, status, scope, schema, summary };
  });
}

// ---------------------------------------------------------------------------------------------
// Types

interface Emitter {
  decls: string[];
}

/** The TS type of one member schema; nested object types become named interfaces. */
function tsType(schema: Json, at: string, name: string, out: Emitter): string {
  if (schema === true) throw new GeneratorError(at, 'boolean schema `true` is not supported (no type)');
  if (!isObj(schema)) throw new GeneratorError(at, 'schema must be an object');
  for (const k of Object.keys(schema)) {
    if (PASS_OVER.has(k)) continue;
    if (['type', 'enum', 'properties', 'required', 'items', 'additionalProperties'].includes(k)) continue;
    throw new GeneratorError(ptr(at, k), `unsupported keyword "${k}" (supported: type, enum, properties, required, items, validation-only keywords)`);
  }
  checkAnnotations(schema, at);
  const en = schema['enum'];
  if (en !== undefined) {
    if (!Array.isArray(en) || en.length === 0 || !en.every((v) => typeof v === 'string')) {
      throw new GeneratorError(ptr(at, 'enum'), 'only non-empty enums of strings are supported');
    }
    if (schema['type'] !== undefined && schema['type'] !== 'string') throw new GeneratorError(ptr(at, 'type'), 'an enum must be of type string');
    return en.map((v) => JSON.stringify(v)).join(' | ');
  }
  const t = schema['type'];
  if (t === undefined) throw new GeneratorError(at, 'member has no "type" or "enum" (e.g. a bare $ref, oneOf/anyOf or const is not supported)');
  const list = Array.isArray(t) ? t : [t];
  if (list.length === 0) throw new GeneratorError(ptr(at, 'type'), 'empty type list');
  const parts: string[] = [];
  for (const [i, one] of list.entries()) {
    const tat = Array.isArray(t) ? ptr(at, 'type', i) : ptr(at, 'type');
    if (typeof one !== 'string' || !SCALARS.has(one)) throw new GeneratorError(tat, `unsupported type ${JSON.stringify(one)}`);
    parts.push(typeOf(one, schema, at, name, out));
  }
  return parts.join(' | ');
}

function typeOf(t: string, schema: Obj, at: string, name: string, out: Emitter): string {
  switch (t) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array': {
      const items = schema['items'];
      if (items === undefined) throw new GeneratorError(at, 'array without "items" is not supported');
      if (Array.isArray(items)) throw new GeneratorError(ptr(at, 'items'), 'tuple items are not supported');
      return `Array<${tsType(items, ptr(at, 'items'), name + 'Item', out)}>`;
    }
    case 'object': {
      const ap = schema['additionalProperties'];
      if (ap !== undefined)
        throw new GeneratorError(ptr(at, 'additionalProperties'), 'additionalProperties is not supported in payload schemas (payloads are open)');
      const props = schema['properties'];
      if (props === undefined) return 'Record<string, unknown>';
      emitInterface(schema, at, name, out, '');
      return name;
    }
  }
  throw new GeneratorError(at, `unsupported type ${t}`);
}

function checkAnnotations(schema: Obj, at: string): void {
  const cap = schema['x-aep-capture'];
  if (cap !== undefined && !(CAPTURE as readonly Json[]).includes(cap))
    throw new GeneratorError(ptr(at, 'x-aep-capture'), `must be one of ${CAPTURE.join(', ')}`);
  const ex = schema['x-aep-exception'];
  if (ex !== undefined && !(EXCEPTIONS as readonly Json[]).includes(ex))
    throw new GeneratorError(ptr(at, 'x-aep-exception'), `must be one of ${EXCEPTIONS.join(', ')}`);
  if (ex !== undefined && cap !== 'metadata')
    throw new GeneratorError(ptr(at, 'x-aep-exception'), 'exception fields are metadata-gated (x-aep-capture must be "metadata")');
}

function emitInterface(schema: Obj, at: string, name: string, out: Emitter, doc: string): void {
  const props = schema['properties'];
  if (!isObj(props)) throw new GeneratorError(ptr(at, 'properties'), 'must be an object');
  const req = schema['required'] ?? [];
  if (!Array.isArray(req) || !req.every((r) => typeof r === 'string')) throw new GeneratorError(ptr(at, 'required'), 'must be an array of strings');
  const lines: string[] = [];
  if (doc) lines.push(`/** ${doc} */`);
  lines.push(`export interface ${name} {`);
  const nested: Emitter = { decls: [] };
  for (const [k, sub] of Object.entries(props)) {
    const sat = ptr(at, 'properties', k);
    const ty = tsType(sub, sat, name + pascal(k), nested);
    const notes: string[] = [];
    if (isObj(sub)) {
      const cap = sub['x-aep-capture'];
      if (typeof cap === 'string' && cap !== 'metadata') notes.push(`capture >= ${cap}`);
      if (typeof sub['x-aep-exception'] === 'string') notes.push(`[metadata*] exception (${sub['x-aep-exception']})`);
    }
    if (notes.length) lines.push(`  /** ${notes.join('; ')} */`);
    lines.push(`  ${key(k)}${req.includes(k) ? '' : '?'}: ${ty};`);
  }
  lines.push('  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */');
  lines.push('  [member: string]: unknown;');
  lines.push('}');
  for (const r of req) {
    if (!(r in props)) throw new GeneratorError(ptr(at, 'required'), `required member "${r}" has no schema under properties`);
  }
  out.decls.push(...nested.decls, lines.join('\n'));
}

function genTypes(set: SchemaSet, rows: TypeRow[]): string {
  const env = set.envelope;
  const props = env['properties'];
  if (!isObj(props)) throw new GeneratorError('aep-event.schema.json#/properties', 'must be an object');
  const req = (env['required'] as string[] | undefined) ?? [];
  const L: string[] = [];
  L.push('/** The event envelope (AEP-0001 §5): 16 context attributes, optional `data`, extension attributes. */');
  L.push('export interface AepEvent {');
  for (const [k, sub] of Object.entries(props)) {
    const at = ptr('aep-event.schema.json#', 'properties', k);
    if (!isObj(sub)) throw new GeneratorError(at, 'must be an object');
    let ty: string;
    if (typeof sub['const'] === 'string') ty = JSON.stringify(sub['const']);
    else if (k === 'data') ty = 'Record<string, unknown>';
    else ty = tsType(Object.fromEntries(Object.entries(sub).filter(([kk]) => kk !== 'const')), at, 'Envelope' + pascal(k), { decls: [] });
    L.push(`  ${key(k)}${req.includes(k) ? '' : '?'}: ${ty};`);
  }
  L.push('  /** Extension attributes (AEP-0001 §5.4): `[a-z0-9]{1,20}`, string, integer or boolean. */');
  L.push('  [extension: string]: string | number | boolean | Record<string, unknown> | undefined;');
  L.push('}');
  L.push('');
  const decls: string[] = [];
  const unionMembers: string[] = [];
  for (const row of rows) {
    if (row.schema === null) continue;
    const schema = set.payloads.get(row.schema)!;
    const at = `types/${row.schema}#`;
    if (schema['type'] !== 'object') throw new GeneratorError(ptr(at, 'type'), 'a payload schema must be of type object');
    const name = pascal(row.type) + 'Data';
    const out: Emitter = { decls: [] };
    if (schema['properties'] === undefined || (isObj(schema['properties']) && Object.keys(schema['properties']).length === 0)) {
      out.decls.push(`/** \`${row.type}\` payload: no defined members (an empty open object). */\nexport interface ${name} {\n  [member: string]: unknown;\n}`);
    } else {
      tsType(Object.fromEntries(Object.entries(schema).filter(([k]) => !['$schema', '$id', 'title', 'description'].includes(k))), at, name, out);
      const last = out.decls.pop()!;
      out.decls.push(`/** \`${row.type}\` payload (${row.status}). */\n` + last);
    }
    decls.push(...out.decls);
    const ev = pascal(row.type) + 'Event';
    decls.push(`/** A \`${row.type}\` event. */\nexport interface ${ev} extends AepEvent {\n  type: ${JSON.stringify(row.type)};\n  data?: ${name};\n}`);
    unionMembers.push(ev);
  }
  L.push(decls.join('\n\n'));
  L.push('');
  L.push('/** Every registered type with a payload schema, discriminated by `type`. */');
  L.push(`export type KnownAepEvent =\n  | ${unionMembers.join('\n  | ')};`);
  L.push('');
  L.push('/** Map from registered type name to its payload interface. */');
  L.push('export interface AepPayloadMap {');
  for (const row of rows) if (row.schema !== null) L.push(`  ${JSON.stringify(row.type)}: ${pascal(row.type)}Data;`);
  L.push('}');
  L.push('');
  L.push(`/** All ${rows.length} registered core types (registry order, AEP-0002 §4). */`);
  L.push(`export const AEP_CORE_TYPES = [\n${rows.map((r) => `  ${JSON.stringify(r.type)},`).join('\n')}\n] as const;`);
  L.push('/** A registered core type name. */');
  L.push('export type AepCoreType = (typeof AEP_CORE_TYPES)[number];');
  const mand = rows.filter((r) => r.status === 'mandatory');
  L.push(`/** The ${mand.length} mandatory types a consumer MUST understand (AEP-0002 §4.1). */`);
  L.push(`export const AEP_MANDATORY_TYPES = [\n${mand.map((r) => `  ${JSON.stringify(r.type)},`).join('\n')}\n] as const;`);
  return L.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Registry

function genRegistry(set: SchemaSet, rows: TypeRow[]): string {
  const L: string[] = [];
  L.push('/** One row of `schemas/registry/types.json` (AEP-0002 §4). */');
  L.push(
    "export interface RegistryType {\n  type: string;\n  category: string;\n  status: 'mandatory' | 'optional' | 'reserved' | 'deprecated';\n  scope: 'session' | 'agent' | 'command';\n  /** payload schema file under schemas/types/, or null */\n  schema: string | null;\n  summary: string;\n}",
  );
  L.push('/** The type registry, in registry order. */');
  L.push(`export const TYPE_REGISTRY: readonly RegistryType[] = ${JSON.stringify(rows, null, 2)};`);
  L.push('/** One row of `schemas/registry/categories.json` (AEP-0002 §3). */');
  L.push('export interface RegistryCategory {\n  name: string;\n  scope: string;\n  summary: string;\n}');
  L.push('/** The 13 categories plus the `x` vendor namespace (AEP-0002 §3). */');
  L.push(`export const CATEGORY_REGISTRY: readonly RegistryCategory[] = ${JSON.stringify(set.categories['categories'], null, 2)};`);
  L.push('/** Capture order from `capture.json` (index = rank, AEP-0001 §8.2). */');
  L.push(`export const CAPTURE_ORDER = ${JSON.stringify(set.capture['order'])} as const;`);
  L.push('/** Severity order from `severity.json` (index = rank, AEP-0001 §8.1). */');
  L.push(`export const SEVERITY_ORDER = ${JSON.stringify(set.severity['order'])} as const;`);
  L.push('/** OTLP severity mapping from `severity.json`. */');
  L.push(
    `export const SEVERITY_OTLP: Readonly<Record<string, { severity_text: string; severity_number: number }>> = ${JSON.stringify(set.severity['otlp'], null, 2)};`,
  );
  L.push('/** OCSF `severity_id` mapping from `severity.json`. */');
  L.push(`export const SEVERITY_OCSF: Readonly<Record<string, { severity_id: number }>> = ${JSON.stringify(set.severity['ocsf'], null, 2)};`);
  L.push('/** Nack reasons on the wire (`nack-reasons.json`, AEP-0004 §3); `timeout` is sender-side only. */');
  L.push(`export const NACK_REASONS = ${JSON.stringify(set.nackReasons['reasons'])} as const;`);
  const props = set.envelope['properties'] as Obj;
  L.push('/** The 16 core context attributes plus `data` (AEP-0001 §5.1): never usable as extension names. */');
  L.push(`export const CORE_ATTRIBUTES = ${JSON.stringify(Object.keys(props))} as const;`);
  L.push('/** Attributes the envelope requires on every event (AEP-0001 §5.1). */');
  L.push(`export const REQUIRED_ATTRIBUTES = ${JSON.stringify(set.envelope['required'])} as const;`);
  const typeProp = props['type'] as Obj;
  L.push('/** The envelope `type` grammar (AEP-0001 §6), as in the schema. */');
  L.push(`export const TYPE_PATTERN = ${JSON.stringify(typeProp['pattern'])};`);
  const names = set.envelope['propertyNames'] as Obj;
  L.push('/** Every top-level key, core or extension (AEP-0001 §5.4). */');
  L.push(`export const ATTRIBUTE_NAME_PATTERN = ${JSON.stringify(names['pattern'])};`);
  return L.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Capture trees

interface Tree {
  level: string;
  exception?: string;
  properties?: Record<string, Tree>;
  items?: Tree;
}

function tree(schema: Json, at: string): Tree {
  if (!isObj(schema)) throw new GeneratorError(at, 'schema must be an object');
  checkAnnotations(schema, at);
  const t: Tree = { level: typeof schema['x-aep-capture'] === 'string' ? schema['x-aep-capture'] : 'metadata' };
  if (typeof schema['x-aep-exception'] === 'string') t.exception = schema['x-aep-exception'];
  const props = schema['properties'];
  if (isObj(props)) {
    t.properties = {};
    for (const [k, sub] of Object.entries(props)) t.properties[k] = tree(sub, ptr(at, 'properties', k));
  }
  const items = schema['items'];
  if (items !== undefined) t.items = tree(items, ptr(at, 'items'));
  return t;
}

function genCaptureTrees(set: SchemaSet, rows: TypeRow[]): string {
  const L: string[] = [];
  L.push('/** Per-field capture annotation tree of one payload schema (AEP-0002 §5.1). */');
  L.push('export interface CaptureTree {');
  L.push('  /** `x-aep-capture` (default metadata): the lowest capture level at which the member may appear. */');
  L.push("  level: 'metadata' | 'redacted' | 'full';");
  L.push('  /** The [metadata*] exception fields (`x-aep-exception`, AEP-0002 §5.3, AEP-0006). */');
  L.push("  exception?: 'prompt' | 'label' | 'values';");
  L.push('  /** Object members. */');
  L.push('  properties?: Readonly<Record<string, CaptureTree>>;');
  L.push('  /** Array items. */');
  L.push('  items?: CaptureTree;');
  L.push('}');
  L.push('');
  L.push('/** One tree per registered type with a payload schema (empty-payload types have `properties: {}`). */');
  L.push('export const CAPTURE_TREES: Readonly<Record<string, CaptureTree>> = {');
  for (const row of rows) {
    if (row.schema === null) continue;
    const schema = set.payloads.get(row.schema)!;
    const t = tree(schema, `types/${row.schema}#`);
    if (t.properties === undefined) t.properties = {};
    L.push(`  ${JSON.stringify(row.type)}: ${JSON.stringify(t)},`);
  }
  L.push('};');
  return L.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Validators (ajv standalone, rewritten to ESM imports of ../schema-runtime.js)

/** Collects `[schemaPathPrefix, rule]` for every subschema carrying `x-aep-rule`. */
function rulePaths(schema: Json, at: string, out: [string, string][]): void {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => rulePaths(s, `${at}/${i}`, out));
    return;
  }
  if (!isObj(schema)) return;
  if (typeof schema['x-aep-rule'] === 'string') out.push([at, schema['x-aep-rule']]);
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'enum' || k === 'const' || k === 'x-aep-rule') continue;
    rulePaths(v, `${at}/${k}`, out);
  }
}

function exportName(type: string): string {
  return 'payload_' + type.replace(/[^a-z0-9]/g, '_');
}

const REQUIRE_MAP: [RegExp, string][] = [
  [/require\("ajv\/dist\/runtime\/ucs2length"\)\.default/g, 'ucs2length'],
  [/require\("aep-schema-runtime"\)\.formats/g, 'formats'],
];

function genValidators(set: SchemaSet, rows: TypeRow[]): string {
  const Ajv2020 = (requireFromProtocol('ajv/dist/2020') as { default: new (o: object) => AjvLike }).default;
  const standaloneCode = (requireFromProtocol('ajv/dist/standalone') as { default: (ajv: AjvLike, refs: Record<string, string>) => string }).default;
  const { _ } = requireFromProtocol('ajv') as { _: (s: TemplateStringsArray) => unknown };
  const ajv = new Ajv2020({
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    allErrors: true,
    code: { source: true, esm: true, lines: false, formats: _`require("aep-schema-runtime").formats` },
  });
  for (const kw of ['x-aep-capture', 'x-aep-exception', 'x-aep-rule']) ajv.addKeyword({ keyword: kw });
  // Format names used by the schemas; the functions live in schema-runtime.ts (the generator only
  // needs to know the names at compile time).
  ajv.addFormat('date-time', () => true);
  ajv.addFormat('uri', () => true);
  const refs: Record<string, string> = {};
  const ruleTables: string[] = [];
  const add = (schema: Obj, file: string, name: string): void => {
    const id = schema['$id'];
    if (typeof id !== 'string') throw new GeneratorError(`${file}#/$id`, 'schema needs an $id');
    try {
      ajv.addSchema(schema);
      ajv.getSchema(id);
    } catch (e) {
      throw new GeneratorError(`${file}#`, `ajv rejected the schema: ${(e as Error).message}`);
    }
    refs[name] = id;
    const paths: [string, string][] = [];
    rulePaths(schema, '#', paths);
    paths.sort((a, b) => b[0].length - a[0].length || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    ruleTables.push(`  ${name}: ${JSON.stringify(paths)},`);
  };
  add(set.envelope, 'aep-event.schema.json', 'envelope');
  for (const row of rows) if (row.schema !== null) add(set.payloads.get(row.schema)!, `types/${row.schema}`, exportName(row.type));
  let code = standaloneCode(ajv, refs);
  for (const [re, rep] of REQUIRE_MAP) code = code.replace(re, rep);
  const left = /require\(("[^"]*")\)/.exec(code);
  if (left)
    throw new GeneratorError('schemas', `ajv standalone output needs module ${left[1]}, which the generator does not map to an ESM import (REQUIRE_MAP)`);
  code = code.replace(/^"use strict";/, '').replace(/\/\*# sourceURL="[^"]*" \*\/;?/g, '');
  const L: string[] = [];
  L.push('// @ts-nocheck -- ajv standalone output (generated JavaScript); typed through src/validate.ts.');
  L.push("import { ucs2length, formats } from '../schema-runtime.js';");
  L.push(code);
  L.push('');
  L.push('/** Payload validators keyed by registered type. */');
  L.push('export const PAYLOAD_VALIDATORS = {');
  for (const row of rows) if (row.schema !== null) L.push(`  ${JSON.stringify(row.type)}: ${exportName(row.type)},`);
  L.push('};');
  L.push('/** `[schemaPath prefix, rule id]` per validator, longest prefix first (from `x-aep-rule`). */');
  L.push('export const RULE_PATHS = {');
  L.push(...ruleTables);
  L.push('};');
  return L.join('\n') + '\n';
}

interface AjvLike {
  addKeyword(def: { keyword: string }): unknown;
  addFormat(name: string, fn: (s: string) => boolean): unknown;
  addSchema(schema: object): unknown;
  getSchema(id: string): unknown;
}

// ---------------------------------------------------------------------------------------------

function header(schemaDir: string, files: Map<string, string>, set: SchemaSet): string {
  // Provenance: a digest of the inputs (not a timestamp, so output stays byte-identical).
  const h = createHash('sha256');
  for (const [name, text] of files) {
    h.update(name);
    h.update('\0');
    h.update(text);
    h.update('\0');
  }
  void set;
  return [
    '// GENERATED FILE: do not edit. Regenerate with `npm run codegen`.',
    `// Source: ${schemaDir}/ (envelope, registry/, types/) via scripts/codegen/generate.ts.`,
    `// Input digest: sha256:${h.digest('hex').slice(0, 32)}`,
    '',
  ].join('\n');
}

/** Generates every output file (path relative to OUT_DIR -> content) from a schema directory. */
export function generate(schemaDir = join(repoRoot, 'schemas')): Map<string, string> {
  const set = readSchemas(schemaDir);
  const rows = typeRows(set);
  const inputs = new Map<string, string>();
  inputs.set('aep-event.schema.json', JSON.stringify(set.envelope));
  inputs.set('registry/types.json', JSON.stringify(set.types));
  inputs.set('registry/categories.json', JSON.stringify(set.categories));
  inputs.set('registry/capture.json', JSON.stringify(set.capture));
  inputs.set('registry/severity.json', JSON.stringify(set.severity));
  inputs.set('registry/nack-reasons.json', JSON.stringify(set.nackReasons));
  for (const [f, s] of set.payloads) inputs.set(`types/${f}`, JSON.stringify(s));
  const rel = relative(repoRoot, schemaDir) || schemaDir;
  const head = header(rel.startsWith('..') ? 'schemas' : rel, inputs, set);
  const out = new Map<string, string>();
  out.set('types.ts', head + genTypes(set, rows));
  out.set('registry.ts', head + genRegistry(set, rows));
  out.set('capture-trees.ts', head + genCaptureTrees(set, rows));
  out.set('validators.ts', head + genValidators(set, rows));
  return out;
}

function argValue(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * CLI: `generate.ts [--check] [--schemas DIR] [--out DIR]` (defaults: schemas/ and
 * packages/protocol/src/generated/). Exit 0 ok, 1 on a difference (--check) or a GeneratorError.
 */
export function main(argv: string[]): number {
  const check = argv.includes('--check');
  const schemas = argValue(argv, '--schemas');
  const outArg = argValue(argv, '--out');
  let files: Map<string, string>;
  try {
    files = generate(schemas ? resolve(schemas) : undefined);
  } catch (e) {
    process.stderr.write(`codegen: ${e instanceof GeneratorError ? e.message : String(e)}\n`);
    return 1;
  }
  const dir = outArg ? resolve(outArg) : join(repoRoot, OUT_DIR);
  const shown = outArg ?? OUT_DIR;
  if (check) {
    for (const [name, text] of files) {
      const p = join(dir, name);
      const cur = existsSync(p) ? readFileSync(p, 'utf8') : null;
      if (cur !== text) {
        process.stderr.write(
          `codegen:check: ${shown}/${name} ${cur === null ? 'is missing' : 'differs from the schemas'}; run \`npm run codegen\` and commit the result\n`,
        );
        return 1;
      }
    }
    process.stdout.write(`codegen:check: ${files.size} files up to date\n`);
    return 0;
  }
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
  process.stdout.write(`codegen: wrote ${files.size} files to ${shown}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
