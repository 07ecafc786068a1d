// Bundle size of the built package, and the cold import of its bundlers' build and of single modules. Run alone with `node bench/size.mjs` after a build.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { median } from './measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/**
 * min+gzip bytes of the ESM entry bundled whole, without splitting, as an app bundler that
 * inlines everything would ship it: the SDK with ky and zod (`ownOnly`: the SDK's own code alone).
 */
export async function bundleSizes({ ownOnly = false } = {}) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    splitting: false,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    external: ownOnly ? ['ky', 'zod', 'zod/*'] : [],
    write: false,
    logLevel: 'silent',
  });
  let bytes = 0;
  for (const file of result.outputFiles) bytes += gzipSync(file.contents, { level: 9 }).length;
  return bytes;
}

/**
 * Median wall time of `await import()` of the bundlers' build in a fresh process, minus that of
 * `node -e 0`: loaded unbundled by Node (ky and zod as separate module files). The cold import a
 * user pays is measured from an installed tarball (bench/installed.mjs).
 */
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
  console.log(`whole: ${kib(await bundleSizes())} (own ${kib(await bundleSizes({ ownOnly: true }))})`);
  console.log(`cold import of the bundlers' build: ${coldImportOfBundlerBuild().toFixed(1)} ms above node -e 0`);
}
