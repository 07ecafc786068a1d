// Small measuring helpers shared by the benchmark scripts.
import { spawn } from 'node:child_process';

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function time(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Starts bench/server.mjs in its own process; resolves to { url, stop }. */
export function startServer(latencyMs = 0) {
  const child = spawn(process.execPath, [new URL('./server.mjs', import.meta.url).pathname, String(latencyMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk) => {
      const match = /READY (\d+)/.exec(chunk.toString());
      if (match) {
        resolve({
          url: `http://127.0.0.1:${match[1]}`,
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.kill('SIGTERM');
            }),
        });
      }
    });
  });
}

/**
 * Runs every workload `runs` times, interleaved (A B C, A B C, ...), so that drift in the
 * machine's speed touches all of them alike. Resolves to each one's median; the raw samples
 * are kept (not enumerable) for `ratioTo()`.
 */
export async function interleaved(workloads, runs) {
  const samples = Object.fromEntries(Object.keys(workloads).map((name) => [name, []]));
  for (const fn of Object.values(workloads)) await fn(); // warm-up, not counted
  for (let run = 0; run < runs; run++) {
    for (const [name, fn] of Object.entries(workloads)) samples[name].push(await time(fn));
  }
  const medians = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  return Object.defineProperty(medians, 'samples', { value: samples });
}

/**
 * The median over runs of `name`'s time divided by `base`'s time in the same run. On a shared
 * machine this is steadier than a ratio of medians: a slow stretch slows both sides of a pair.
 */
export const ratioTo = (result, base, name) => median(ratiosOf(result, base, name));

/** `name`'s time divided by `base`'s, run by run. */
const ratiosOf = (result, base, name) => result.samples[name].map((value, run) => value / result.samples[base][run]);

/**
 * A 95% confidence interval for the median of `name`'s per-run ratios to `base`, from order
 * statistics (no assumption about their distribution): with n runs, the k-th smallest and the
 * k-th largest, k = floor((n - 1.96 sqrt(n)) / 2). A target inside it is neither met nor missed
 * with confidence. Undefined with fewer than 8 runs, too few for such an interval.
 */
export const ratioInterval = (result, base, name) => medianInterval(ratiosOf(result, base, name));

/** The same 95% interval for the median of any per-run values (W5's times over their ideal). */
export function medianInterval(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const k = Math.floor((sorted.length - 1.96 * Math.sqrt(sorted.length)) / 2);
  if (k < 1) return undefined;
  return [sorted[k - 1], sorted[sorted.length - k]];
}
