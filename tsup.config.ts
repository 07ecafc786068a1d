import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

const entry = { index: 'src/index.ts', testing: 'src/testing/index.ts' };
// msw is an optional peer of the testing entry, needed only there.
const external = ['msw'];
// Inlined where a module costs more to load than its bytes: Node pays about 0.6 ms for each module
// file it resolves and compiles, and zod/mini alone is 92 files.
const selfContained = [/^zod(\/|$)/, 'ky'];

/**
 * zod's compiler is imported by src/core/compiler.ts alone, and only on demand. Left external,
 * an app's bundler would put the parts of zod's core that only the compiler uses (validators,
 * regexes, helpers) in a chunk shared with the entry, to be loaded up front. Inlined here, they
 * stay in the compiler's chunk. Every other import of zod's core stays external.
 */
const compilerInlined: Plugin = {
  name: 'inline-zod-compiler',
  setup(build) {
    build.onResolve({ filter: /^zod\/v4\/core$/ }, ({ path, importer }) =>
      importer.endsWith('src/core/compiler.ts') ? undefined : { path, external: true },
    );
  },
};

export default defineConfig([
  {
    // ESM for bundlers: dependencies stay external so that the app's bundler can share zod with
    // the app's own schemas and tree-shake both.
    // (dist/ is emptied by the build script: a `clean` here would race the parallel builds.)
    entry,
    format: ['esm'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: [/^zod\/v4\/core$/],
    esbuildPlugins: [compilerInlined],
    sourcemap: false,
  },
  {
    // ESM for Node (the `node` export condition): one file for the SDK and zod, plus lazy chunks
    // for ky and zod's compiler, so that `import` loads a handful of files instead of a hundred.
    // The declarations are those of the build above.
    entry,
    outDir: 'dist/node',
    format: ['esm'],
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: selfContained,
    sourcemap: false,
  },
  {
    // CJS: ky is ESM-only, and loading zod module by module costs as much as above.
    entry,
    format: ['cjs'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: selfContained,
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
