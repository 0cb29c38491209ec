// Builds the dashboard into dashboard/dist, served by the API listener under /app
// (server/web/assets.ts). `make dashboard` runs it; `make start` and CI run that first.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // A build report (gzip sizes) is printed by `make dashboard`; the budget is checked by a test.
    reportCompressedSize: true,
  },
});
