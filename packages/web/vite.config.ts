// Build of the web inbox. Plain Vite with Preact's automatic JSX runtime (no HMR plugin needed for
// a static bundle). `@aep/protocol` is bundled straight from its TypeScript sources through the
// `source` export condition, so the browser runs the same form-validation code as the emitter.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: './',
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
      // @aep/protocol is pure (no side effects at module load, architecture.md), so modules the
      // inbox does not use (generated validators, redaction, registry) are left out of the bundle.
      treeshake: { moduleSideEffects: (id: string) => !/[\\/]packages[\\/]protocol[\\/]/.test(id) },
    },
  },
});
