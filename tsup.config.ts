import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';

const entry = { index: 'src/index.ts', testing: 'src/testing/index.ts' };
// The OpenTelemetry entry imports nothing of the SDK's code (types only): one ESM build serves
// bundlers and Node alike, and one CJS build require().
const withOtel = { ...entry, otel: 'src/otel/index.ts' };
// msw is an optional peer of the testing entry, @opentelemetry/api of the otel entry: needed only there.
const external = ['msw', '@opentelemetry/api'];
// Inlined for Node and CJS: PERFORMANCE.md, "The inlined Node build".
const selfContained = [/^zod(\/|$)/, 'ky'];

// Node, Bun and Deno load msw only when createFakeCrm() is called, so that the server, the bin and
// the rest of the kit work without it; a bundler resolves it when it bundles (src/testing/msw.ts).
const mswOnDemand: Plugin = {
  name: 'msw-on-demand',
  setup(build) {
    build.onResolve({ filter: /^\.\/msw$/ }, ({ resolveDir }) =>
      resolveDir.endsWith(join('src', 'testing')) ? { path: join(resolveDir, 'msw.node.ts') } : undefined,
    );
  },
};

// crm-integration-sdk/postgres takes SyncJournalError (and the journal's types) from the sync
// entry rather than a copy of its own, so that `instanceof SyncJournalError` holds for its errors.
const syncFromItsEntry: Plugin = {
  name: 'sync-from-its-entry',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/sync\// }, ({ resolveDir }) =>
      resolveDir.endsWith(join('src', 'postgres')) ? { path: 'crm-integration-sdk/sync', external: true } : undefined,
    );
  },
};

// The version the User-Agent names, written in at build time: nothing reads package.json at run time.
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const withVersion = { __SDK_VERSION__: JSON.stringify(version) };

const configs: Options[] = [
  {
    // ESM for bundlers: dependencies stay external so that the app's bundler can share zod with
    // the app's own schemas and tree-shake both.
    // (dist/ is emptied by the build script: a `clean` here would race the parallel builds.)
    entry: withOtel,
    format: ['esm'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    sourcemap: false,
  },
  {
    // ESM for Node (the `node` export condition): one file for the SDK and zod, plus lazy chunks
    // for ky and the response parsers, so that `import` loads a handful of files instead of a hundred.
    // The declarations are those of the build above.
    entry,
    outDir: 'dist/node',
    format: ['esm'],
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: selfContained,
    esbuildPlugins: [mswOnDemand],
    sourcemap: false,
  },
  {
    // CJS: ky is ESM-only, and loading zod module by module costs as much as above.
    entry: withOtel,
    format: ['cjs'],
    dts: true,
    target: 'es2023',
    platform: 'neutral',
    external,
    noExternal: selfContained,
    esbuildPlugins: [mswOnDemand],
    // msw.node.ts resolves msw from import.meta.url, which CJS lacks (tsup's `shims` would touch every module).
    define: { 'import.meta.url': '__filename' },
    sourcemap: false,
  },
  {
    // The `crm` command: the SDK and zod inlined, so that it starts by reading one file. The MCP
    // SDK is an optional peer, loaded only by `crm mcp`. csv-parse (a devDependency) is inlined
    // too, evaluated only when `crm sync` reads a CSV file: the package's runtime dependencies
    // stay ky and zod.
    entry: { crm: 'src/cli/bin.ts' },
    outDir: 'dist/cli',
    format: ['esm'],
    target: 'es2023',
    platform: 'node',
    external: ['@modelcontextprotocol/sdk', 'pg'],
    // date-fns and @date-fns/tz (devDependencies too) likewise, evaluated only for a --map with a date.
    noExternal: [...selfContained, /^csv-parse(\/|$)/, /^date-fns(\/|$)/, /^@date-fns\/tz(\/|$)/],
    // `crm sync` opens its journal with node:sqlite, which exists only by that name.
    removeNodeProtocol: false,
    splitting: false,
    sourcemap: false,
  },
  {
    // crm-integration-sdk/redis: Node only (node:crypto), a bundle of its own, so that nothing of it
    // reaches the main entry. ioredis is not imported: the caller's client is passed in.
    entry: { redis: 'src/redis/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    target: 'es2023',
    platform: 'node',
    noExternal: selfContained,
    sourcemap: false,
  },
  {
    // crm-integration-sdk/sync: a bundle of its own, so that nothing of it reaches the main entry.
    // node:sqlite stays a dynamic import, loaded by sqliteJournal() when a run opens it, so that
    // the entry imports where it is missing (Bun, browsers).
    entry: { sync: 'src/sync/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    // The client's type comes from the main entry (src/sync imports it by the package's name), not a
    // copy: a class with private fields is nominal, and a copy would refuse the user's CrmClient.
    external: ['crm-integration-sdk'],
    target: 'es2023',
    platform: 'node',
    // 'sqlite' without its prefix is not a built-in: node:sqlite exists only by that name.
    removeNodeProtocol: false,
    noExternal: selfContained,
    sourcemap: false,
  },
  {
    // crm-integration-sdk/postgres: the fleet's sync journal, a bundle of its own that nothing else
    // loads. pg is not imported: the caller's pool is passed in.
    entry: { postgres: 'src/postgres/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    target: 'es2023',
    platform: 'node',
    external: ['crm-integration-sdk/sync'],
    esbuildPlugins: [syncFromItsEntry],
    sourcemap: false,
  },
  {
    entry: { 'crm-fake': 'src/testing/bin.ts' },
    format: ['esm'],
    target: 'es2023',
    platform: 'node',
    sourcemap: false,
  },
];

export default defineConfig(configs.map((config) => ({ ...config, define: { ...config.define, ...withVersion } })));
