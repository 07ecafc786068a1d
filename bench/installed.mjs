// The SDK as a user's process meets it: the built package packed (`npm pack`), its tarball
// installed into a temporary app (`npm install <tgz>`), and measured from that app, where
// `import('crm-integration-sdk')` resolves through the package's exports map from node_modules as
// any app's does (the `node` condition: dist/node/index.js and the chunk it imports). Two figures:
// the cold import of a fresh process, and W1 from the installed package (bench/w1-installed.mjs).
// Run alone with `node bench/installed.mjs` after a build (it prints both and writes nothing).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './measure.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * A temporary app with the packed package installed; `dispose()` removes it. `--prefer-offline`:
 * ky and zod come from npm's cache when it has them, from the registry when not.
 */
export function installedApp() {
  const dir = mkdtempSync(join(tmpdir(), 'crm-sdk-app-'));
  execFileSync(npm, ['pack', '--pack-destination', dir, '--silent'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'bench-app', private: true, type: 'module' }));
  execFileSync(npm, ['install', `./${tarball}`, '--prefer-offline', '--no-audit', '--no-fund', '--silent'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // W1's script must sit in the app, so that its bare import resolves from the app's node_modules.
  copyFileSync(fileURLToPath(new URL('./w1-installed.mjs', import.meta.url)), join(dir, 'w1.mjs'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Wall time of one fresh process of the given arguments, in the app. */
function once(app, args) {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: app.dir, encoding: 'utf8' });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(result.stderr);
  return ms;
}

/**
 * The cold import as an app pays it: `node -e "import('crm-integration-sdk')"` in the app over
 * `node -e 0`, the two interleaved round by round, `warmUp` rounds discarded; the median of the
 * per-round differences (a slow moment of the machine slows both of a round). Also the raw medians.
 */
export function coldImportInstalled(app, rounds = 10, warmUp = 2) {
  const base = [];
  const sdk = [];
  for (let round = 0; round < warmUp + rounds; round++) {
    const b = once(app, ['-e', '0']);
    const s = once(app, ['-e', "import('crm-integration-sdk')"]);
    if (round < warmUp) continue;
    base.push(b);
    sdk.push(s);
  }
  return { over: median(sdk.map((ms, i) => ms - base[i])), base: median(base), sdk: median(sdk) };
}

/**
 * W1 from the installed package, in one process of the app: `calls` sequential
 * `crm.opportunities.get(id)` against `fetch` + `res.json()`, interleaved round by round after a
 * warm-up round each. Resolves to `interleaved()`'s shape (medians, `samples` beside them).
 */
export function w1Installed(app, url, calls, rounds) {
  const result = spawnSync(process.execPath, ['w1.mjs', 'interleaved', url, String(calls), String(rounds)], {
    cwd: app.dir,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  const samples = JSON.parse(result.stdout);
  const medians = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  return Object.defineProperty(medians, 'samples', { value: samples });
}

/**
 * The same calls, each subject's round in a fresh process (the import not timed, the first call's
 * costs included: undici's load for both, the SDK's first-call work and JIT for it), fetch and the
 * SDK alternating which goes first.
 */
export function w1InstalledFresh(app, url, calls, rounds) {
  const samples = { fetch: [], sdk: [] };
  const run = (subject) => {
    const result = spawnSync(process.execPath, ['w1.mjs', subject, url, String(calls)], {
      cwd: app.dir,
      encoding: 'utf8',
    });
    if (result.status !== 0) throw new Error(result.stderr);
    samples[subject].push(Number(result.stdout));
  };
  for (let round = 0; round < rounds; round++)
    for (const subject of round % 2 ? ['sdk', 'fetch'] : ['fetch', 'sdk']) run(subject);
  const medians = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  return Object.defineProperty(medians, 'samples', { value: samples });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ratioTo, startServer } = await import('./measure.mjs');
  const { loadavg } = await import('node:os');
  const app = installedApp();
  const server = await startServer(0);
  try {
    const load = () =>
      loadavg()
        .map((n) => n.toFixed(2))
        .join(' ');
    const cold = coldImportInstalled(app);
    console.log(
      `cold import: ${cold.over.toFixed(1)} ms over node -e 0 (${cold.sdk.toFixed(1)} - ${cold.base.toFixed(1)}); load ${load()}`,
    );
    const w1 = w1Installed(app, server.url, 1500, Number(process.env.BENCH_W1_RUNS ?? 21));
    console.log(`W1 in one process: sdk ${ratioTo(w1, 'fetch', 'sdk').toFixed(3)}x fetch; load ${load()}`);
    const fresh = w1InstalledFresh(app, server.url, 1500, Number(process.env.BENCH_W1_FRESH_RUNS ?? 10));
    console.log(`W1 fresh processes: sdk ${ratioTo(fresh, 'fetch', 'sdk').toFixed(3)}x fetch; load ${load()}`);
  } finally {
    await server.stop();
    app.dispose();
  }
}
