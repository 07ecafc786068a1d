// `npm run bench`: the SDK against the alternatives an integrator would otherwise use, on the
// loopback, with the server in a separate process. Prints a table and writes bench/RESULTS.md.
// Every figure is a median of RUNS interleaved runs; ratios are to raw fetch in the same run.
// W5 and W5b (bulk creates at a rate limit, bench/w5.mjs) take about a minute a round:
// BENCH_W5_RUNS sets their rounds (default 8, the fewest with a 95% interval; 0 leaves them out),
// and BENCH_ONLY=w5 runs them alone, printing their rows and drawing the chart but leaving
// bench/RESULTS.md as it is (its other rows would be missing); BENCH_W5_ROWS (w5, w5-loaded,
// w5b, w6, w6-slow, comma-separated) narrows such a run to some of their rows. The abort rows (bench/abort.mjs:
// BENCH_ABORT_CALLS calls queued on one signal, 100,000 by default, one run each) run alone with
// BENCH_ONLY=abort, leaving bench/RESULTS.md as it is too. W7 (bench/w7.mjs, crm-integration-sdk/sync:
// the initial load beside plain creates, and an unchanged re-run of 100,000 records) runs
// BENCH_W7_RUNS rounds (default 3; 0 leaves it out), alone with BENCH_ONLY=w7. W8 (bench/w8.mjs,
// crm-integration-sdk/postgres: W7a's load over 4 workers on one Postgres journal) runs
// BENCH_W8_RUNS rounds (default 3; 0 leaves it out), alone with BENCH_ONLY=w8 (BENCH_W8_TRACE=1 and
// BENCH_W8_SUBJECT: see bench/w8.mjs). W9 (bench/intent-kills.mjs: a sync killed -9 in its
// accounts phase, what each kill leaves in doubt) runs BENCH_KILLS kills (default 20; 0 leaves it
// out), alone with BENCH_ONLY=kills.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release } from 'node:os';
import { fileURLToPath } from 'node:url';
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { TracerProvider as SdkTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import ky from 'ky';
import createOpenApiClient from 'openapi-fetch';
import { CrmClient } from '../dist/index.js';
import { instrumentCrm } from '../dist/otel.js';
import { ABORT_CALLS, runAbort } from './abort.mjs';
import { rowsNotRun, withBefore } from './before.mjs';
import { coldImportInstalled, installedApp, w1Installed, w1InstalledFresh } from './installed.mjs';
import { runKills } from './intent-kills.mjs';
import { interleaved, median, ratioInterval, ratioTo, sleep, startServer } from './measure.mjs';
import { bundleSizes, coldImportOf, coldImportOfBundlerBuild } from './size.mjs';
import { runW5 } from './w5.mjs';
import { runW7 } from './w7.mjs';
import { runW8 } from './w8.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ONLY = process.env.BENCH_ONLY;
if (ONLY !== undefined && !['w5', 'w7', 'w8', 'kills', 'abort'].includes(ONLY))
  throw new Error(`BENCH_ONLY=${ONLY}: the workloads run alone are w5, w7, w8, kills and abort`);
const W5_RUNS = Number(process.env.BENCH_W5_RUNS ?? 8);
if (!Number.isSafeInteger(W5_RUNS) || W5_RUNS < 0) throw new Error('BENCH_W5_RUNS must be a whole number');
const W7_RUNS = Number(process.env.BENCH_W7_RUNS ?? 3);
if (!Number.isSafeInteger(W7_RUNS) || W7_RUNS < 0) throw new Error('BENCH_W7_RUNS must be a whole number');
const W8_RUNS = Number(process.env.BENCH_W8_RUNS ?? 3);
if (!Number.isSafeInteger(W8_RUNS) || W8_RUNS < 0) throw new Error('BENCH_W8_RUNS must be a whole number');
const KILLS = Number(process.env.BENCH_KILLS ?? 20);
if (!Number.isSafeInteger(KILLS) || KILLS < 0) throw new Error('BENCH_KILLS must be a whole number');
// W1 takes about 3 s a round and W4 about 1 s, and on a shared machine noise dominates them:
// three times the rounds for W1, nine times for W4, whose ratio moved by 0.1x between runs of
// one build when it had 21 (its 95% interval, printed beside it, is the measure of that).
const SHORT_RUNS = RUNS * 3;
const W4_RUNS = RUNS * 9;
const TENANT = 'tenant_bench';
const KEY = 'bench-key';
const headers = { accept: 'application/json', 'x-api-key': KEY, 'x-tenant-id': TENANT };
const rows = [];
// What a traced service has: a context manager, the W3C propagator, and a provider whose spans go
// to an exporter (here, one that drops them). Set up for the traced subject's runs only.
const tracerProvider = new SdkTracerProvider({
  spanProcessors: [
    new SimpleSpanProcessor({ exporter: { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} } }),
  ],
});
async function traced(run) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const stop = instrumentCrm({ tracerProvider });
  try {
    await run();
  } finally {
    stop();
    propagation.disable();
    context.disable();
  }
}
const say = (line) => process.stdout.write(`${line}\n`);
/** The machine's load average over 1, 5 and 15 minutes, noted beside the figures measured under it. */
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const loads = [];
// W5's counts are medians over runs: whole, or halfway between two with an even number of runs.
const COUNTS = new Set([
  'records failed',
  'records failed, worst run',
  'duplicates',
  '429 answers',
  'requests sent before the pause',
  'requests',
  'requests in 1 s, most',
]);
const DIGITS = {
  ms: 1,
  s: 2,
  '% of requests 429': 1,
  'ms event-loop block': 1,
  'ms until all settled': 1,
  'x ideal, worst run': 2,
};
const format = (value, unit) =>
  COUNTS.has(unit) ? String(Math.round(value * 10) / 10) : value.toFixed(DIGITS[unit] ?? 3);
/** `ratio`: to raw fetch, as `ratioTo()` gives it (W5: to the ideal), and `interval` its 95% interval; undefined where there is no comparison. */
const record = (workload, subject, value, unit, ratio, target, interval) => {
  const shown = ratio === undefined ? '' : `${ratio.toFixed(2)}x`;
  const range = interval === undefined ? '' : `${interval[0].toFixed(2)}-${interval[1].toFixed(2)}`;
  rows.push({ workload, subject, value, unit, ratio: shown, interval: range, target: target ?? '' });
  say(
    `${workload.padEnd(48)} ${subject.padEnd(30)} ${format(value, unit).padStart(10)} ${unit}  ${shown.padStart(6)}  ${range}`,
  );
};

/** One row per subject of an `interleaved()` result, with its ratio to `base` and any target. */
const recordWorkload = (workload, result, base, targets, show = (ms) => [ms, 'ms']) => {
  for (const [name, ms] of Object.entries(result)) {
    const compared = name !== base;
    record(
      workload,
      name,
      ...show(ms),
      ratioTo(result, base, name),
      targets[name] ?? '',
      compared ? ratioInterval(result, base, name) : undefined,
    );
  }
};

/** Each way of reading one opportunity and of paging through the activities. */
function clients(url, latency = '') {
  const sdk = new CrmClient({ baseUrl: url, apiKey: KEY, tenantId: TENANT });
  const paced = new CrmClient({ baseUrl: url, apiKey: KEY, tenantId: TENANT, throttle: 'auto' });
  const sdkTrusting = new CrmClient({ baseUrl: url, apiKey: KEY, tenantId: TENANT, validateResponses: false });
  const kyClient = ky.create({ prefix: url, headers });
  const openapi = createOpenApiClient({ baseUrl: url, headers });
  return {
    get: {
      fetch: async () => {
        const res = await fetch(`${url}/integrations/v1/opportunities/opp_1?tenantId=${TENANT}`, { headers });
        if (!res.ok) throw new Error(`status ${res.status}`);
        return (await res.json()).data;
      },
      sdk: () => sdk.opportunities.get('opp_1'),
      'openapi-fetch': async () => {
        const { data, error } = await openapi.GET('/integrations/v1/opportunities/{id}', {
          params: { path: { id: 'opp_1' }, query: { tenantId: TENANT } },
        });
        if (error) throw new Error('failed');
        return data.data;
      },
      ky: async () =>
        (await kyClient.get('integrations/v1/opportunities/opp_1', { searchParams: { tenantId: TENANT } }).json()).data,
    },
    getPaced: () => paced.opportunities.get('opp_1'),
    iterate: {
      fetch: async (perPage) => {
        let count = 0;
        for (let page = 1; ; page++) {
          const query = `tenantId=${TENANT}&opportunityId=opp_1&limit=200&page=${page}`;
          const res = await fetch(`${url}/integrations/v1/activities?${query}`, { headers });
          if (!res.ok) throw new Error(`status ${res.status}`);
          const body = await res.json();
          for (const _ of body.data) count++;
          if (perPage) await perPage();
          if (body.data.length === 0 || page >= body.pagination.pages) return count;
        }
      },
      sdk: (perPage, options) => iterateSdk(sdk, perPage, options),
      'sdk, validateResponses: false': (perPage, options) => iterateSdk(sdkTrusting, perPage, options),
    },
    latency,
  };
}

async function iterateSdk(sdk, perPage, options) {
  let count = 0;
  for await (const _ of sdk.activities.list({ opportunityId: 'opp_1', limit: 200 }, options)) {
    count++;
    if (perPage && count % 200 === 0) await perPage();
  }
  return count;
}

async function main() {
  if (ONLY === 'w5') {
    say(`crm-integration-sdk benchmark, W5, W5b and W6 alone, ${W5_RUNS} interleaved runs (medians)\n`);
    const { chart } = await runW5(record, W5_RUNS);
    say(`\nwrote ${chart}; bench/RESULTS.md left as it is (BENCH_ONLY)`);
    return;
  }
  if (ONLY === 'w7') {
    say(`crm-integration-sdk benchmark, W7 alone, ${W7_RUNS || 1} runs (medians)\n`);
    await runW7(record, W7_RUNS || 1);
    say('\nbench/RESULTS.md left as it is (BENCH_ONLY)');
    return;
  }
  if (ONLY === 'w8') {
    say(`crm-integration-sdk benchmark, W8 alone, ${W8_RUNS || 1} runs (medians)\n`);
    await runW8(record, W8_RUNS || 1);
    say('\nbench/RESULTS.md left as it is (BENCH_ONLY)');
    return;
  }
  if (ONLY === 'kills') {
    say(`crm-integration-sdk benchmark, W9 alone, ${KILLS || 1} kills\n`);
    await runKills(record, KILLS || 1);
    say('\nbench/RESULTS.md left as it is (BENCH_ONLY)');
    return;
  }
  if (ONLY === 'abort') {
    say(
      `crm-integration-sdk benchmark, the abort of ${ABORT_CALLS.toLocaleString('en-US')} queued calls alone, one run each\n`,
    );
    await runAbort(record);
    say('\nbench/RESULTS.md left as it is (BENCH_ONLY)');
    // The pacer's timer for the end of its 60 s pause outlives the calls that waited for it: the
    // process would idle until then.
    process.exit(0);
  }
  const fast = await startServer(0);
  const slow = await startServer(5);
  try {
    const c = clients(fast.url);
    say(
      `crm-integration-sdk benchmark, ${RUNS} interleaved runs per workload, ${SHORT_RUNS} for W1 and the heap, ${W4_RUNS} for W4 (medians)\n`,
    );

    // 1,500 calls, as the outside bench of issue 49 makes them.
    const calls = 1500;
    const w1Subjects = Object.fromEntries(
      Object.entries(c.get).map(([name, get]) => [
        name,
        async () => {
          for (let i = 0; i < calls; i++) await get();
        },
      ]),
    );
    // The same calls traced: spans of every call and attempt, to an exporter that drops them, the
    // trace context injected. Subscribed for its own runs only: the other subjects run untraced.
    // What throttle: 'auto' costs a call that never meets a limit: the figure its default is chosen by.
    w1Subjects["sdk, throttle: 'auto'"] = async () => {
      for (let i = 0; i < calls; i++) await c.getPaced();
    };
    w1Subjects['sdk, instrumentCrm active'] = () =>
      traced(async () => {
        for (let i = 0; i < calls; i++) await c.get.sdk();
      });
    const w1 = await interleaved(w1Subjects, SHORT_RUNS);
    recordWorkload('W1 1,500 sequential get, from dist/', w1, 'fetch', {}, (ms) => [(ms * 1000) / calls, 'µs/call']);
    loads.push(`W1 from dist/: ${load()}`);

    const w2 = await interleaved(
      {
        fetch: () => c.iterate.fetch(),
        sdk: () => c.iterate.sdk(),
        'sdk, validateResponses: false': () => c.iterate['sdk, validateResponses: false'](),
      },
      RUNS,
    );
    recordWorkload('W2 iterate 100,000 activities', w2, 'fetch', { sdk: '<= 1.15x' });

    // One bad record in a page of 100,000, against a good page: the page is read from memory, so
    // that the figure is the SDK's checking alone (PERFORMANCE.md, "Generated response validators").
    const records = Array.from({ length: 100_000 }, (_, i) => ({ id: `act_${i}`, type: 'call', subject: `Call ${i}` }));
    const pageOf = (data) =>
      JSON.stringify({ success: true, data, pagination: { page: 1, limit: 100_000, total: 100_000, pages: 1 } });
    const goodPage = pageOf(records);
    const badPage = pageOf([...records.slice(0, -1), { id: 99_999, type: 'call' }]);
    const pageClient = (body) =>
      new CrmClient({
        baseUrl: 'http://bench.invalid',
        apiKey: KEY,
        tenantId: TENANT,
        maxRetries: 0,
        maxResponseBytes: 64 * 1024 * 1024,
        fetch: async () => new Response(body, { headers: { 'content-type': 'application/json' } }),
      });
    const good = pageClient(goodPage);
    const bad = pageClient(badPage);
    const w2bad = await interleaved(
      {
        'good page': () => good.activities.list({ opportunityId: 'opp_1' }),
        'one bad record': () =>
          bad.activities.list({ opportunityId: 'opp_1' }).then(
            () => {
              throw new Error('the bad page was accepted');
            },
            () => undefined,
          ),
      },
      RUNS,
    );
    recordWorkload('W2 a page of 100,000, one record bad', w2bad, 'good page', { 'one bad record': '<= 2x' });

    const s = clients(slow.url);
    const w3 = await interleaved(
      {
        'fetch, sequential': () => s.iterate.fetch(),
        'sdk, prefetch 0': () => s.iterate.sdk(undefined, { prefetch: 0 }),
        'sdk, prefetch 4': () => s.iterate.sdk(undefined, { prefetch: 4 }),
      },
      RUNS,
    );
    recordWorkload('W3 iterate, 5 ms server latency', w3, 'fetch, sequential', { 'sdk, prefetch 4': '<= 0.40x' });
    const work = () => sleep(5);
    const w3b = await interleaved(
      {
        'fetch, sequential': () => s.iterate.fetch(work),
        'sdk, prefetch 1': () => s.iterate.sdk(work, { prefetch: 1 }),
        'sdk, prefetch 4': () => s.iterate.sdk(work, { prefetch: 4 }),
      },
      RUNS,
    );
    // Not the target's workload: the caller's own 5 ms a page puts the floor near 0.5x.
    recordWorkload('W3 same, caller awaits 5 ms a page', w3b, 'fetch, sequential', {});

    const concurrent = (get) => async () => {
      for (let round = 0; round < 10; round++) await Promise.all(Array.from({ length: 200 }, () => get()));
    };
    const w4 = await interleaved(
      { fetch: concurrent(c.get.fetch), sdk: concurrent(c.get.sdk), ky: concurrent(c.get.ky) },
      W4_RUNS,
    );
    recordWorkload('W4 200 concurrent get x 10', w4, 'fetch', { sdk: '<= 1.15x' });

    const heap = { fetch: [], sdk: [] };
    // Three times the runs: a peak of heap depends on when V8 collects, which varies from run to run.
    for (let run = 0; run < SHORT_RUNS; run++)
      for (const subject of Object.keys(heap)) heap[subject].push(peakHeap(subject, fast.url));
    const heapMedians = Object.fromEntries(Object.entries(heap).map(([k, v]) => [k, median(v)]));
    for (const [name, bytes] of Object.entries(heapMedians))
      record(
        'W2 peak heap growth',
        name,
        bytes / 1024 / 1024,
        'MiB',
        bytes / heapMedians.fetch,
        name === 'sdk' ? '<= 1.5x' : '',
      );
    // W1 as a user's process pays it: the packed package installed into an app, measured there
    // (bench/installed.mjs): in one process, and with each subject's round in a fresh process.
    // A server of their own: the bench process's keep-alive sockets to `fast` would idle through
    // these minutes and meet the server's keep-alive timeout at W2's first request (EPIPE).
    const app = installedApp();
    const own = await startServer(0);
    try {
      const perCall = (ms) => [(ms * 1000) / calls, 'µs/call'];
      const installed = w1Installed(app, own.url, calls, SHORT_RUNS);
      recordWorkload('W1 1,500 sequential get, installed package', installed, 'fetch', { sdk: '<= 1.12x' }, perCall);
      loads.push(`W1 installed: ${load()}`);
      // A fresh process a round: RUNS rounds, each two processes of 1,500 calls.
      const fresh = w1InstalledFresh(app, own.url, calls, RUNS);
      recordWorkload('W1 1,500 sequential get, installed, a fresh process a round', fresh, 'fetch', {}, perCall);
      loads.push(`W1 installed, fresh processes: ${load()}`);
      const cold = coldImportInstalled(app);
      record(
        'cold import',
        "import('crm-integration-sdk') in an app that installed the tarball, over node -e 0",
        cold.over,
        'ms',
        undefined,
        '<= 25 ms',
      );
      loads.push(`cold import: ${load()}`);
    } finally {
      await own.stop();
      app.dispose();
    }
  } finally {
    await fast.stop();
    await slow.stop();
  }
  // One run each, not interleaved: a quadratic abort of 100,000 calls takes tens of seconds.
  await runAbort(record);
  if (W5_RUNS > 0) await runW5(record, W5_RUNS);
  if (W7_RUNS > 0) await runW7(record, W7_RUNS);
  if (W8_RUNS > 0) await runW8(record, W8_RUNS);
  if (KILLS > 0) await runKills(record, KILLS);

  record(
    'bundle, min+gzip',
    'ESM entry bundled whole, without splitting (ky and zod included)',
    (await bundleSizes()) / 1024,
    'KiB',
    undefined,
    '<= 38 KiB',
  );
  record(
    'bundle, min+gzip',
    "the SDK's own code (without ky and zod)",
    (await bundleSizes({ ownOnly: true })) / 1024,
    'KiB',
  );
  const zodAlone = coldImportOf('zod/mini');
  record('cold import', 'zod/mini alone', zodAlone, 'ms');
  record('cold import', "the bundlers' build (dist/index.js) loaded by Node", coldImportOfBundlerBuild(), 'ms');

  writeResults();
}

/** Peak heap growth while iterating W2, in a fresh process with --expose-gc. */
function peakHeap(subject, url) {
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', fileURLToPath(new URL('./heap.mjs', import.meta.url)), subject, url],
    {
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(result.stderr);
  return Number(result.stdout.trim());
}

function writeResults() {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const file = new URL('./RESULTS.md', import.meta.url);
  const previous = existsSync(file) ? readFileSync(file, 'utf8') : '';
  // Only the workloads a run may leave out (W5 to W9) are carried over: a row renamed or removed is not.
  const carried = rowsNotRun(previous, new Set(rows.map((r) => r.workload))).filter((line) => /^\| W[5-9]/.test(line));
  const lines = [
    '# Benchmark results',
    '',
    `Machine: ${cpu}, ${cpus().length} cores, ${platform()} ${release()}, Node ${process.version}.`,
    `Date: ${new Date().toISOString().slice(0, 10)}. Medians of ${RUNS} interleaved runs (${SHORT_RUNS} for W1 and the heap, ${W4_RUNS} for W4); a ratio is the median, over runs, of the time divided by raw \`fetch\`'s (or the first subject's) in the same run, and its interval a 95% confidence interval of that median, from order statistics. Written by \`npm run bench\`.`,
    '',
    W5_RUNS > 0
      ? `W5 and W5b: medians of ${W5_RUNS} interleaved runs (about a minute each: \`BENCH_W5_RUNS\` sets how many; 8 is the fewest with a 95% interval), each on a fresh fake over real HTTP in its own process; a ratio is the time over the ideal, (creates - burst) / perSecond, in the same run, and a count or share is the median over runs. The chart of the last run: [w5-chart.svg](w5-chart.svg).`
      : 'W5 and W5b were not run (`BENCH_W5_RUNS=0`).',
    '',
    `The abort rows: one run each, not interleaved rounds (the "median" is that run): ${ABORT_CALLS.toLocaleString('en-US')} calls of one client queued on one signal (\`BENCH_ABORT_CALLS\`), a fetch of their own and no network; the event-loop block is the synchronous time of \`controller.abort()\`, and the second row the time until every call has rejected with \`CrmAbortError\` (bench/abort.mjs).`,
    '',
    KILLS > 0
      ? `W9: ${KILLS} kills, each a trial of its own (one run each, the "median" is the mean over kills), on a fresh fake at 100 requests/s (burst 10) answering after 20 ms; the sync (150 accounts, throttle 'auto', concurrency 8, SQLite journal) killed once 1 to 100 of its creates reached the fake, 0 to 15 ms later; in flight: the creates the fake received whose answer the process never heard (bench/intent-kills.mjs).`
      : 'W9 was not run (`BENCH_KILLS=0`).',
    `Load average (1, 5 and 15 min) as each figure was taken, on ${cpus().length} cores: ${[...loads, `at the end: ${load()}`].join('; ')}.`,
    '',
    carried.length > 0
      ? `The last ${carried.length} rows were not run this time (their workloads left out by BENCH_*_RUNS=0 or BENCH_KILLS=0): carried over from the results this run replaced, as they were measured there.`
      : '',
    '',
    '| workload | subject | median | unit | ratio | 95% interval | target |',
    '|---|---|---:|---|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.workload} | ${r.subject} | ${format(r.value, r.unit)} | ${r.unit} | ${r.ratio} | ${r.interval} | ${r.target} |`,
    ),
    ...carried,
    '',
  ];
  // Each row beside its figure in the results this run replaces (bench/before.mjs).
  // The sections kept by hand after the table (benches not run here, such as failed-memory.mjs) stay.
  const kept = previous.indexOf('\n## ');
  writeFileSync(file, withBefore(lines.join('\n'), previous) + (kept === -1 ? '' : previous.slice(kept)));
  say('\nwrote bench/RESULTS.md');
}

await main();
