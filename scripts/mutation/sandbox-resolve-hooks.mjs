// Resolve hooks registered by sandbox-resolve.mjs (read its header first).
//   `@aep/<pkg>`  -> <sandbox>/packages/<pkg>/<exports["."].source>  (the mutated copy)
//   other bare specifiers imported from <sandbox>/packages/<pkg>/... -> resolved as if imported
//   from the same file in the original repository, so nested node_modules are found as usual.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

let root = process.cwd();
let original = null;
const cache = new Map();

export function initialize(data) {
  if (data && typeof data.root === 'string') root = data.root;
  try {
    const real = dirname(realpathSync(join(root, 'node_modules')));
    if (real !== root) original = real;
  } catch {
    original = null;
  }
}

function sourceEntry(pkg) {
  if (cache.has(pkg)) return cache.get(pkg);
  let url = null;
  const manifest = join(root, 'packages', pkg, 'package.json');
  if (existsSync(manifest)) {
    const exp = JSON.parse(readFileSync(manifest, 'utf8')).exports;
    const source = exp && exp['.'] && exp['.'].source;
    if (typeof source === 'string') url = pathToFileURL(join(root, 'packages', pkg, source)).href;
  }
  cache.set(pkg, url);
  return url;
}

function isBare(specifier) {
  return !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier) && !specifier.startsWith('#');
}

export async function resolve(specifier, context, nextResolve) {
  const m = /^@aep\/([a-z0-9-]+)$/.exec(specifier);
  const url = m ? sourceEntry(m[1]) : null;
  // Handed on (not short-circuited) so tsx resolves the .ts file and later transforms it.
  if (url) return nextResolve(url, context);
  const parent = context.parentURL;
  if (original && isBare(specifier) && parent && parent.startsWith('file:')) {
    const file = fileURLToPath(parent);
    const inPackages = join(root, 'packages') + sep;
    if (file.startsWith(inPackages)) {
      const asOriginal = pathToFileURL(join(original, 'packages', file.slice(inPackages.length))).href;
      try {
        return await nextResolve(specifier, { ...context, parentURL: asOriginal });
      } catch {
        // not found from the original location either: fall through to the normal error
      }
    }
  }
  return nextResolve(specifier, context);
}
