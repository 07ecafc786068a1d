import { defineConfig } from 'tsup';

const entry = { index: 'src/index.ts', testing: 'src/testing/index.ts' };
// msw is an optional peer of the testing entry, needed only there.
const external = ['msw'];

export default defineConfig([
  {
    // ESM: dependencies stay external so bundlers can share and tree-shake them.
    // (dist/ is emptied by the build script: a `clean` here would race the parallel CJS build.)
    entry,
    format: ['esm'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    sourcemap: false,
  },
  {
    // CJS: ky is ESM-only, so it is bundled; zod ships CJS and stays external.
    entry,
    format: ['cjs'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: ['ky'],
    sourcemap: false,
  },
  {
    entry: { 'crm-fake': 'src/testing/bin.ts' },
    format: ['esm'],
    target: 'es2023',
    platform: 'node',
    sourcemap: false,
  },
]);
