// Static files for the web inbox (architecture.md "@aep/relay"): GET/HEAD under `/`, never
// shadowing the protocol paths, no traversal, strict CSP.
import { createReadStream, promises as fsp } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BASE_CSP, securityHeaders } from './headers.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/** Security headers sent on every static response: contract C9's, and what the inbox may load. */
export const STATIC_HEADERS: Readonly<Record<string, string>> = {
  ...securityHeaders(),
  'Content-Security-Policy': `${BASE_CSP}; default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'`,
};

/** Serve `pathname` from `root`; resolves false when nothing was found (caller answers 404). */
export async function serveStatic(root: string, pathname: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  let rel: string;
  try {
    rel = decodeURIComponent(pathname);
  } catch {
    return false;
  }
  if (rel.includes('\0') || rel.includes('\\')) return false;
  if (rel.endsWith('/')) rel += 'index.html';
  const base = resolve(root);
  const file = resolve(join(base, rel));
  if (file !== base && !file.startsWith(base + sep)) return false;
  let st;
  try {
    st = await fsp.stat(file);
  } catch {
    return false;
  }
  if (!st.isFile()) return false;
  res.writeHead(200, {
    ...STATIC_HEADERS,
    'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': st.size,
    'Cache-Control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return true;
  }
  const s = createReadStream(file);
  s.on('error', () => res.destroy());
  s.pipe(res);
  return true;
}
