// Build of the web inbox. Plain Vite with Preact's automatic JSX runtime (no HMR plugin needed for
// a static bundle). `@aep/protocol` is bundled straight from its TypeScript sources through the
// `source` export condition, so the browser runs the same form-validation code as the emitter.
//
// Installable inbox (issue 17): the `aep-pwa` plugin draws the icons, writes the web app manifest
// and gives the service worker (`sw/sw.ts`, built to a fixed `sw.js` at the root so its scope is
// the whole inbox) the list of shell files to keep for offline use, versioned by their names.
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { ICON_SVG, iconPng } from './build/icons.js';

/** The web app manifest (W3C Web Application Manifest): everything relative to the inbox's URL. */
const MANIFEST = {
  name: 'AEP inbox',
  short_name: 'AEP inbox',
  description: 'Answer your agents: pending questions and approvals from every agent, live.',
  id: './',
  start_url: './',
  scope: './',
  display: 'standalone',
  background_color: '#ffffff',
  theme_color: '#1e5bd8',
  icons: [
    { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
    { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
    { src: 'icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    { src: 'icons/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
  ],
};

function pwa(): Plugin {
  return {
    name: 'aep-pwa',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const emitted: Record<string, string | Buffer> = {
        'icons/icon-192.png': iconPng(192),
        'icons/icon-512.png': iconPng(512),
        'icons/maskable-512.png': iconPng(512, true),
        'icons/icon.svg': ICON_SVG,
        'manifest.webmanifest': JSON.stringify(MANIFEST, null, 2) + '\n',
      };
      for (const [fileName, source] of Object.entries(emitted)) this.emitFile({ type: 'asset', fileName, source });
      const shell = ['./', 'index.html', ...Object.keys(bundle).filter((f) => f !== 'sw.js' && f !== 'index.html'), ...Object.keys(emitted)].sort();
      const sw = bundle['sw.js'];
      if (!sw || sw.type !== 'chunk') throw new Error('aep-pwa: sw.js was not built');
      const h = createHash('sha256');
      for (const f of shell) h.update(f).update('\n');
      for (const v of Object.values(emitted)) h.update(v);
      const version = h.digest('hex').slice(0, 16);
      if (!sw.code.includes('__AEP_SHELL__') || !sw.code.includes('__AEP_VERSION__')) throw new Error('aep-pwa: sw.js lacks its placeholders');
      sw.code = sw.code.replace(/["'`]__AEP_SHELL__["'`]/, JSON.stringify(JSON.stringify(shell))).replace('__AEP_VERSION__', version);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  plugins: [pwa()],
  resolve: {
    conditions: ['source', 'browser', 'module', 'import', 'default'],
  },
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // One small JS file and one CSS file: nothing fetched from any other origin (CSP 'self').
    modulePreload: false,
    assetsInlineLimit: 0,
    rolldownOptions: {
      input: { index: resolve(import.meta.dirname, 'index.html'), sw: resolve(import.meta.dirname, 'sw/sw.ts') },
      output: {
        // The service worker keeps a fixed name at the root: its URL is its identity and its scope.
        entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js'),
      },
      // @aep/protocol is pure (no side effects at module load, architecture.md), so modules the
      // inbox does not use (generated validators, redaction, registry) are left out of the bundle.
      treeshake: { moduleSideEffects: (id: string) => !/[\\/]packages[\\/]protocol[\\/]/.test(id) },
    },
  },
});
