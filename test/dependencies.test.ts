// Enforces the one-way package dependencies (docs/architecture.md) by reading the imports
// of every source, test and bench file with the TypeScript parser (so an import written inside a
// string, a fixture, is not mistaken for one), so a lint rule cannot be quietly disabled around
// them. Four rules, each its own test:
//   1. a package's sources import only the workspace packages below it (ALLOWED);
//   2. its tests and benches may also use packages above it, declared as devDependencies, as long
//      as the graph of runtime and test edges together stays acyclic (no package's tests need a
//      package whose tests need it back);
//   3. every bare import is declared: sources in the package's own dependencies (devDependencies
//      for type-only imports, and for the bundled web inbox), tests and benches in the package's
//      package.json or the root's devDependencies (the shared tooling: tsx, fast-check, ...);
//   4. no import cycle among a package's source modules (type-only imports are erased at build
//      and may close a loop; see docs/decisions.md "Import cycles").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
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

/** Packages whose sources are bundled into static assets at build (their devDependencies ship). */
const BUNDLED = new Set(['web']);

interface Import {
  spec: string;
  typeOnly: boolean;
}

function files(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (n === 'node_modules' || n === 'dist') continue;
    const p = join(dir, n);
    if (statSync(p).isDirectory()) files(p, out);
    else if (/\.(ts|tsx|mts|js|mjs|cjs|jsx)$/.test(n) && !n.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The module specifiers a file imports, exports from, `import()`s or `require`s. */
export function importsOfText(name: string, text: string): Import[] {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, false, name.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: Import[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      out.push({ spec: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)) });
    } else if (
      ts.isCallExpression(node) &&
      node.arguments.length >= 1 &&
      ts.isStringLiteralLike(node.arguments[0]!) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      out.push({ spec: (node.arguments[0] as ts.StringLiteralLike).text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const importsOf = (file: string): Import[] => importsOfText(file, readFileSync(file, 'utf8'));

const BUILTINS = new Set(builtinModules);
const isBuiltin = (spec: string): boolean => spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0]!);
/** The package name of a bare specifier (`@scope/name/sub` -> `@scope/name`). */
const packageOf = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const rootManifest = manifest(repoRoot);
const PACKAGES = readdirSync(join(repoRoot, 'packages'))
  .filter((p) => existsSync(join(repoRoot, 'packages', p, 'package.json')))
  .sort();
const pkgDir = (pkg: string): string => join(repoRoot, 'packages', pkg);
const sourcesOf = (pkg: string): string[] => files(join(pkgDir(pkg), 'src'));
const testsOf = (pkg: string): string[] => [...files(join(pkgDir(pkg), 'test')), ...files(join(pkgDir(pkg), 'bench'))];

test('every workspace package has a row in the dependency table', () => {
  assert.deepEqual(PACKAGES, Object.keys(ALLOWED).sort());
});

for (const [pkg, allowed] of Object.entries(ALLOWED)) {
  test(`packages/${pkg} imports only ${allowed.length ? allowed.join(', ') : 'no other workspace package'}`, () => {
    const bad: string[] = [];
    for (const file of sourcesOf(pkg)) {
      for (const { spec } of importsOf(file)) {
        const ws = /^@aep\/([^/]+)/.exec(spec);
        if (ws && ws[1] && ws[1] !== pkg && !allowed.includes(ws[1])) bad.push(`${file}: ${spec}`);
        // relative imports must stay inside the package
        if (spec.startsWith('.') && !resolve(file, '..', spec).startsWith(pkgDir(pkg) + '/')) bad.push(`${file}: ${spec}`);
        // The bridges root entry is browser-safe: Node modules and the client only under src/node/.
        if (pkg === 'bridges' && !file.startsWith(join(pkgDir('bridges'), 'src', 'node')) && (isBuiltin(spec) || spec.startsWith('@aep/client')))
          bad.push(`${file}: ${spec} (bridges root is browser-safe: Node code lives in src/node)`);
        if (pkg === 'protocol' && isBuiltin(spec)) bad.push(`${file}: ${spec} (protocol is pure: no I/O)`);
      }
    }
    assert.deepEqual(bad, []);
  });
}

/** The workspace package a relative specifier of `file` lands in, if any. */
function reachedPackage(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const rel = relative(join(repoRoot, 'packages'), resolve(dirname(file), spec));
  return rel.startsWith('..') ? undefined : rel.split('/')[0];
}

/** Workspace edges: runtime (sources) and test (tests and benches), as package -> packages. */
function workspaceEdges(kind: 'src' | 'test'): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const pkg of PACKAGES) {
    const to = new Set<string>();
    for (const file of kind === 'src' ? sourcesOf(pkg) : testsOf(pkg)) {
      for (const { spec } of importsOf(file)) {
        const ws = /^@aep\/([^/]+)/.exec(spec);
        if (ws && ws[1] && ws[1] !== pkg) to.add(ws[1]);
        // A test that reuses another package's test support depends on that package too.
        const other = kind === 'test' ? reachedPackage(file, spec) : undefined;
        if (other && other !== pkg) to.add(other);
      }
    }
    g.set(pkg, to);
  }
  return g;
}

/** A path from `from` to `to` through the graph, or null. */
function pathIn(g: Map<string, Set<string>>, from: string, to: string): string[] | null {
  const seen = new Set<string>();
  const walk = (n: string, path: string[]): string[] | null => {
    if (n === to) return path;
    if (seen.has(n)) return null;
    seen.add(n);
    for (const m of g.get(n) ?? []) {
      const p = walk(m, [...path, m]);
      if (p) return p;
    }
    return null;
  };
  return walk(from, [from]);
}

test('tests and benches use other packages only as declared devDependencies, and no test edge closes a cycle', () => {
  const runtime = workspaceEdges('src');
  const tests = workspaceEdges('test');
  const both = new Map(PACKAGES.map((p) => [p, new Set([...(runtime.get(p) ?? []), ...(tests.get(p) ?? [])])]));
  const bad: string[] = [];
  for (const pkg of PACKAGES) {
    const m = manifest(pkgDir(pkg));
    const declared = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.devDependencies ?? {})]);
    for (const to of tests.get(pkg) ?? []) {
      if (!declared.has(`@aep/${to}`)) bad.push(`packages/${pkg} tests import @aep/${to}, not in its package.json`);
      const back = pathIn(both, to, pkg);
      if (back) bad.push(`packages/${pkg} tests import @aep/${to}, which leads back: ${back.join(' -> ')}`);
    }
  }
  assert.deepEqual(bad, []);
});

test("every bare import is a declared dependency (sources: the package's own; tests and benches: also the root tooling)", () => {
  const bad: string[] = [];
  const rootDev = new Set(Object.keys(rootManifest.devDependencies ?? {}));
  for (const pkg of PACKAGES) {
    const m = manifest(pkgDir(pkg));
    const runtime = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {})]);
    const dev = new Set(Object.keys(m.devDependencies ?? {}));
    const check = (file: string, inTests: boolean): void => {
      for (const { spec, typeOnly } of importsOf(file)) {
        if (spec.startsWith('.') || spec.startsWith('/') || isBuiltin(spec)) continue;
        const name = packageOf(spec);
        if (name === m.name) continue;
        const ok = runtime.has(name) || ((inTests || typeOnly || BUNDLED.has(pkg)) && dev.has(name)) || (inTests && rootDev.has(name));
        if (!ok) bad.push(`${relative(repoRoot, file)}: ${spec} (declare ${name} in packages/${pkg}/package.json)`);
      }
    };
    for (const f of sourcesOf(pkg)) check(f, false);
    for (const f of testsOf(pkg)) check(f, true);
    // Relative imports from tests stay in the package, use the shared harness in test/support, or
    // reuse the test support of a package this one declares (then it is a test edge, checked above).
    for (const f of testsOf(pkg)) {
      for (const { spec } of importsOf(f)) {
        if (!spec.startsWith('.')) continue;
        const target = resolve(dirname(f), spec);
        const other = reachedPackage(f, spec);
        const inSupport = target.startsWith(join(repoRoot, 'test', 'support') + '/');
        if (!other && !inSupport) bad.push(`${relative(repoRoot, f)}: ${spec} (outside the packages and test/support)`);
        else if (other && other !== pkg && !runtime.has(`@aep/${other}`) && !dev.has(`@aep/${other}`))
          bad.push(`${relative(repoRoot, f)}: ${spec} (uses @aep/${other}'s tests; declare @aep/${other} in packages/${pkg}/package.json)`);
        else if (other && other !== pkg && !/\/test\/(support\/|support\.|[^/]+-port\.)/.test(target))
          bad.push(`${relative(repoRoot, f)}: ${spec} (only another package's test support may be reused)`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

/** Resolve a relative specifier of `file` to a source file of the package, if it is one. */
function resolveSource(file: string, spec: string): string | undefined {
  const base = resolve(dirname(file), spec).replace(/\.(js|mjs|jsx)$/, '');
  for (const c of [base + '.ts', base + '.tsx', base + '.mts', join(base, 'index.ts'), resolve(dirname(file), spec)])
    if (existsSync(c) && statSync(c).isFile()) return c;
  return undefined;
}

/** Cycles among value imports of the given files (each as a list of files, first repeated last). */
export function importCycles(sources: readonly string[], importsFor: (f: string) => Import[] = importsOf): string[][] {
  const g = new Map<string, string[]>();
  for (const f of sources)
    g.set(
      f,
      importsFor(f)
        .filter((i) => !i.typeOnly && i.spec.startsWith('.'))
        .map((i) => resolveSource(f, i.spec))
        .filter((t): t is string => !!t),
    );
  const state = new Map<string, 1 | 2>();
  const cycles: string[][] = [];
  const dfs = (n: string, stack: string[]): void => {
    state.set(n, 1);
    stack.push(n);
    for (const m of g.get(n) ?? []) {
      if (state.get(m) === 1) cycles.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) dfs(m, stack);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of g.keys()) if (!state.has(n)) dfs(n, []);
  return cycles;
}

test("no import cycle among any package's source modules", () => {
  const bad: string[] = [];
  for (const pkg of PACKAGES) for (const c of importCycles(sourcesOf(pkg))) bad.push(c.map((f) => relative(repoRoot, f)).join(' -> '));
  assert.deepEqual(bad, []);
});

test('the checkers themselves catch what they forbid', () => {
  const specs = importsOfText(
    'x.ts',
    "import { startRelay } from '@aep/relay';\nimport x from './y.js';\nimport type { T } from './t.js';\nconst s = \"import os from 'os'\";\nconst m = await import('left-pad');\nexport { z } from './z.js';",
  );
  assert.deepEqual(
    specs,
    [
      { spec: '@aep/relay', typeOnly: false },
      { spec: './y.js', typeOnly: false },
      { spec: './t.js', typeOnly: true },
      { spec: 'left-pad', typeOnly: false },
      { spec: './z.js', typeOnly: false },
    ],
    'an import inside a string is not an import; type-only ones are marked',
  );
  // A two-module loop through value imports is a cycle; the same loop through a type import is not.
  const a = join(repoRoot, 'test', 'support', 'cli.ts');
  const b = join(repoRoot, 'test', 'support', 'browser.ts');
  const loop =
    (typeOnly: boolean) =>
    (f: string): Import[] => [{ spec: f === a ? './browser.js' : './cli.js', typeOnly: f === b && typeOnly }];
  assert.equal(importCycles([a, b], loop(false)).length, 1);
  assert.deepEqual(importCycles([a, b], loop(true)), []);
  // A test edge that leads back through runtime edges is found.
  const g = new Map([
    ['web', new Set(['relay'])],
    ['relay', new Set(['web'])],
  ]);
  assert.deepEqual(pathIn(g, 'relay', 'web'), ['relay', 'web']);
  assert.equal(pathIn(new Map([['relay', new Set(['protocol'])]]), 'relay', 'web'), null);
});
