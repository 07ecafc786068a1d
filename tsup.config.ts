import { defineConfig } from 'tsup';

export default defineConfig([
  {
    // ESM: dependencies stay external so bundlers can share and tree-shake them.
    entry: { index: 'src/index.ts' },
    format: ['esm'],
    dts: true,
    clean: true,
    target: 'es2023',
    platform: 'neutral',
    sourcemap: false,
  },
  {
    // CJS: ky is ESM-only, so it is bundled; zod ships CJS and stays external.
    entry: { index: 'src/index.ts' },
    format: ['cjs'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    noExternal: ['ky'],
    sourcemap: false,
  },
]);
