// Bundle size and cold import of the built package. Run alone with `node bench/size.mjs` after a build.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { median } from './measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/**
 * min+gzip bytes of the ESM entry as an app bundler would split it: `initial` is what loads with
 * `import 'crm-integration-sdk'` (the entry and the chunks it imports statically), `lazy` what the
 * SDK imports on demand, all started once a client exists: ky (used when a first attempt fails),
 * the reporter (when a call fails or is logged), the response validators, and the limiter with
 * the key look-up (with maxConcurrency or an apiKey function).
 * Each chunk is gzipped alone, as it would be served.
 */
export async function bundleSizes({ ownOnly = false } = {}) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    splitting: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    external: ownOnly ? ['ky', 'zod', 'zod/*'] : [],
    outdir: '/virtual',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const gzipped = new Map(
    result.outputFiles.map((file) => [
      file.path.slice('/virtual/'.length),
      gzipSync(file.contents, { level: 9 }).length,
    ]),
  );
  const outputs = Object.entries(result.metafile.outputs).map(([path, meta]) => [
    path.replace(/^.*virtual\//, ''),
    meta,
  ]);
  const byPath = new Map(outputs);
  const initial = new Set();
  const visit = (path) => {
    if (initial.has(path)) return;
    initial.add(path);
    for (const dep of byPath.get(path)?.imports ?? []) {
      if (dep.kind === 'import-statement' && !dep.external) visit(dep.path.replace(/^.*virtual\//, ''));
    }
  };
  visit(outputs.find(([, meta]) => meta.entryPoint)[0]);
  let initialBytes = 0;
  let lazyBytes = 0;
  for (const [path, bytes] of gzipped) {
    if (!path.endsWith('.js')) continue;
    if (initial.has(path)) initialBytes += bytes;
    else lazyBytes += bytes;
  }
  return { initial: initialBytes, lazy: lazyBytes };
}

/**
 * Median wall time of `await import('crm-integration-sdk')` in a fresh process, minus that of
 * `node -e 0`. The package resolves itself through its exports map, so Node loads the build it
 * would load in an app (the `node` condition: dist/node/index.js).
 */
export const coldImport = (runs = 15) => coldImportOf('crm-integration-sdk', runs);

/** The same for the bundlers' build, loaded unbundled by Node (ky and zod as separate module files). */
export const coldImportOfBundlerBuild = (runs = 15) => coldImportOf(pathToFileURL(entry).href, runs);

/** The same for any specifier, resolved from this package (for what the dependencies cost on their own). */
export function coldImportOf(url, runs = 15) {
  const once = (args) => {
    const start = performance.now();
    spawnSync(process.execPath, args, { cwd: root });
    return performance.now() - start;
  };
  const base = [];
  const sdk = [];
  for (let i = 0; i < runs; i++) {
    base.push(once(['-e', '0']));
    sdk.push(once(['--input-type=module', '-e', `await import(${JSON.stringify(url)})`]));
  }
  return median(sdk) - median(base);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kib = (bytes) => `${(bytes / 1024).toFixed(2)} KiB`;
  const whole = await bundleSizes();
  const own = await bundleSizes({ ownOnly: true });
  console.log(
    `initial: ${kib(whole.initial)} (own ${kib(own.initial)}); lazy: ${kib(whole.lazy)} (own ${kib(own.lazy)})`,
  );
  console.log(`cold import: ${coldImport().toFixed(1)} ms above node -e 0`);
  console.log(`cold import of the bundlers' build: ${coldImportOfBundlerBuild().toFixed(1)} ms above node -e 0`);
}
