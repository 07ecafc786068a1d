// W5, W5b and W6: bulk creates against a rate-limited fake CRM over real HTTP (issues 19 and 27).
//
// W5: 3,000 contacts.create started at once with Promise.all, the fake limiting the key to 200
// requests a second with a burst of 20 and answering after 20 ms. The ideal is the bucket's pace,
// (3,000 - 20) / 200 = 14.9 s. Subjects: raw fetch without retries, the SDK with throttle 'off'
// (today's retries), a hand-written pool of 4 that honours Retry-After, and the SDK with throttle
// 'auto'. W5b: four tenants at once from one client (withTenant), each with its own limit and
// about 15 s of work, all with throttle 'auto'; each tenant's time against its own ideal. W6: W5's
// tenant and 3,000 creates split over 4 worker processes (bench/w6-worker.mjs), as a job queue
// runs them: each with throttle { mode: 'auto', store: redisStore() } over one redis-server, each
// with 'auto' alone, and raw fetch that knows its share of the limit.
//
// Every subject-run gets a fresh fake, so that the store shows what was created, and how many
// times: each create sends an email of its own. Rounds are interleaved like W1-W4's, without a
// warm-up round: a 15 s run makes the JIT's first seconds a small part of it.
//
// The fake runs in a child process (bench/w5-server.mjs). It spends about 0.2 ms of CPU on a
// request, so in the clients' process the bursts that raw fetch and 'off' send would hold their
// event loop: on the 2-core machine of bench/RESULTS.md, one round took raw fetch 2.0 s instead
// of 1.1 s and 'off' 5.5 s instead of 4.0 s, and W5b lost 2,355 creates to connection errors
// (none with the child). BENCH_W5_SERVER=inline runs it in this process, to measure that again.
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CrmClient, CrmRateLimitError } from '../dist/index.js';
import { median, medianInterval, sleep } from './measure.mjs';
import { startRedisServer } from './redis.mjs';
import { drawW5Chart } from './w5-chart.mjs';
import { summarize } from './w5-summary.mjs';

const LATENCY_MS = 20;
const W5 = { id: 'tenant_w5', key: 'w5-key', creates: 3000, rateLimit: { perSecond: 200, burst: 20 } };
// Each about 15 s of work at its own pace: (n - burst) / perSecond = 14.9 s.
const W5B = [20, 40, 80, 160].map((perSecond) => ({
  id: `tenant_${perSecond}`,
  key: `w5b-key-${perSecond}`,
  creates: perSecond * 15,
  rateLimit: { perSecond, burst: perSecond / 10 },
}));
const W6 = { ...W5, id: 'tenant_w6', key: 'w6-key', workers: 4 };
// W6 on a slow bucket (issue 34): the same 4 workers against 20/s with a burst of 2, where the
// shared pace once took 5.6-6.2x its ideal. Also with Redis down for the whole job: each worker
// then paces alone, and no create may fail because of it.
const W6_SLOW = {
  id: 'tenant_w6_slow',
  key: 'w6-slow-key',
  creates: 300,
  workers: 4,
  rateLimit: { perSecond: 20, burst: 2 },
};
const W6_SLOW_SUBJECTS = {
  '4 workers, store: redisStore()': 'store',
  '4 workers, store: redisStore(), Redis down': 'store-down',
};
/** W6's ways of sending, each in 4 worker processes (bench/w6-worker.mjs). */
const W6_SUBJECTS = {
  '4 workers, store: redisStore()': 'store',
  "4 workers, throttle: 'auto' alone": 'auto',
  '4 workers, fetch knowing its share': 'fetch',
};
const ideal = ({ creates, rateLimit }) => (creates - rateLimit.burst) / rateLimit.perSecond;
export const CHART = fileURLToPath(new URL('./w5-chart.svg', import.meta.url));

const contact = (i) => ({ firstName: 'Bulk', lastName: `Contact ${i}`, email: `bulk-${i}@w5.test` });
const nameOf = (reason) => (reason instanceof Error ? reason.constructor.name : typeof reason);

/** How many calls failed, and of what, from Promise.allSettled's results. */
function failures(settled) {
  const reasons = {};
  for (const result of settled) {
    if (result.status === 'rejected') reasons[nameOf(result.reason)] = (reasons[nameOf(result.reason)] ?? 0) + 1;
  }
  return { failed: settled.filter((r) => r.status === 'rejected').length, reasons };
}

/** The ways of sending `creates` contacts: each resolves to { failed, reasons }. */
const SUBJECTS = {
  'fetch, Promise.all, no retries': async ({ url, tenant }) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': tenant.key };
    const send = async (i) => {
      const body = JSON.stringify({ tenantId: tenant.id, ...contact(i) });
      const res = await fetch(`${url}/integrations/v1/contacts`, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`status ${res.status}`);
    };
    return failures(await Promise.allSettled(Array.from({ length: tenant.creates }, (_, i) => send(i))));
  },
  "sdk, throttle: 'off'": ({ url, tenant }) => sdkAll(url, tenant, 'off'),
  // The careful way by hand: a few calls at a time, each 429 waited out (Retry-After) and sent again.
  'pool of 4, retry loop': async ({ url, tenant }) => {
    const crm = new CrmClient({
      baseUrl: url,
      apiKey: tenant.key,
      tenantId: tenant.id,
      throttle: 'off',
      maxRetries: 0,
    });
    const settled = [];
    let next = 0;
    const worker = async () => {
      while (next < tenant.creates) {
        const i = next++;
        for (;;) {
          try {
            settled.push({ status: 'fulfilled', value: await crm.contacts.create(contact(i)) });
            break;
          } catch (error) {
            if (error instanceof CrmRateLimitError) {
              await sleep(error.retryAfterMs ?? 1000);
              continue;
            }
            settled.push({ status: 'rejected', reason: error });
            break;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    return failures(settled);
  },
  "sdk, throttle: 'auto'": ({ url, tenant }) => sdkAll(url, tenant, 'auto'),
};
// W5's 'auto' again while another process keeps a core busy (issue 34: on a loaded machine the
// pacer's timers fire late, and a stall once turned into a flood of 1,432 refusals in a second).
const LOADED = "sdk, throttle: 'auto', a core kept busy";

/** `run` while a process of its own spins on a core; the spinner is stopped after. */
async function withBusyCore(run) {
  const spinner = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  try {
    // Started and spinning before the calls are.
    await sleep(200);
    return await run();
  } finally {
    spinner.kill('SIGKILL');
  }
}

/** The most requests that reached the fake within any `ms` (its log: [receivedAt, status] pairs). */
function mostWithin(log, ms) {
  const times = log.map(([at]) => at).sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < times.length; end++) {
    while (times[end] - times[start] >= ms) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * The row groups a round runs: all of them, or those `BENCH_W5_ROWS` lists (comma-separated, of
 * w5, w5-loaded, w5b, w6, w6-slow): a focused run of a few rows on a shared machine.
 */
const GROUPS = ['w5', 'w5-loaded', 'w5b', 'w6', 'w6-slow'];
const ROWS = process.env.BENCH_W5_ROWS?.split(',').map((group) => group.trim()) ?? GROUPS;
for (const group of ROWS)
  if (!GROUPS.includes(group)) throw new Error(`BENCH_W5_ROWS: ${group} is none of ${GROUPS.join(', ')}`);
const running = (group) => ROWS.includes(group);

async function sdkAll(url, tenant, throttle) {
  // A client of its own per run: what 'auto' learned in one run must not help the next.
  const crm = new CrmClient({ baseUrl: url, apiKey: tenant.key, tenantId: tenant.id, throttle });
  return failures(
    await Promise.allSettled(Array.from({ length: tenant.creates }, (_, i) => crm.contacts.create(contact(i)))),
  );
}

/** W5b's four tenants at once, from one client: each tenant's time to its last answer, and its failures. */
async function fourTenants({ url }) {
  const [first] = W5B;
  const crm = new CrmClient({ baseUrl: url, apiKey: first.key, tenantId: first.id, throttle: 'auto' });
  const start = performance.now();
  return Promise.all(
    W5B.map(async (tenant) => {
      const client = crm.withTenant(tenant.id, { apiKey: tenant.key });
      const settled = await Promise.allSettled(
        Array.from({ length: tenant.creates }, (_, i) => client.contacts.create(contact(i))),
      );
      return { ms: performance.now() - start, ...failures(settled) };
    }),
  );
}

/**
 * W6 subject-run's sending: 4 worker processes, each given every 4th create, set up (clients made,
 * Redis connected) before a common start; the time runs from the start to the last worker's end.
 */
async function workerJob({ url }, subject, redisPort, prefix, tenant = W6) {
  const workers = Array.from({ length: tenant.workers }, () =>
    fork(fileURLToPath(new URL('./w6-worker.mjs', import.meta.url)), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const next = (child, type) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`bench/w6-worker.mjs exited (${code})`)));
    });
  try {
    await Promise.all(
      workers.map((child, index) => {
        const ready = next(child, 'ready');
        const indices = Array.from({ length: tenant.creates }, (_, i) => i).filter((i) => i % tenant.workers === index);
        child.send({ type: 'setup', url, tenant, indices, subject, redisPort, prefix, workers: tenant.workers, index });
        return ready;
      }),
    );
    const at = Date.now() + 300;
    const done = await Promise.all(
      workers.map((child) => {
        const finished = next(child, 'done');
        child.send({ type: 'go', at });
        return finished;
      }),
    );
    const reasons = {};
    for (const each of done)
      for (const [name, n] of Object.entries(each.reasons)) reasons[name] = (reasons[name] ?? 0) + n;
    return {
      failed: done.reduce((sum, each) => sum + each.failed, 0),
      reasons,
      at,
      ms: Math.max(...done.map((each) => each.endedAt)) - at,
    };
  } finally {
    for (const child of workers) if (child.connected) child.disconnect();
  }
}

/** The fake in a child process: start a fresh one per subject-run, stop it to read what it saw. */
function childServer() {
  const child = fork(fileURLToPath(new URL('./w5-server.mjs', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Settles when the child exits; an answer still awaited then is refused rather than left hanging.
  const gone = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const ask = (message) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      void gone.then((code) => reject(new Error(`bench/w5-server.mjs exited (${code})`)));
      child.send(message);
    });
  return {
    start: (options) => ask({ type: 'start', options }),
    stop: (tenants) => ask({ type: 'stop', tenants }),
    close: () => {
      child.disconnect();
      return gone;
    },
  };
}

/** The fake in this process, competing with the clients for the event loop (BENCH_W5_SERVER=inline). */
async function inlineServer() {
  const { startFakeCrmServer } = await import('../dist/testing.js');
  let server;
  return {
    start: async (options) => {
      server = await startFakeCrmServer(options);
      return { url: server.url };
    },
    stop: async (tenants) => {
      const summary = summarize(server.fake, tenants);
      await server.close();
      return summary;
    },
    close: async () => {},
  };
}

/** One subject-run on a fresh fake: the subject's result, its time, and what the fake saw. */
async function once(server, options, tenants, run) {
  // A quiet second first: what the subject before left (sockets closing, garbage) is not this one's time.
  await sleep(1000);
  const { url } = await server.start({ latencyMs: LATENCY_MS, ...options });
  const start = Date.now();
  const t0 = performance.now();
  const result = await run({ url });
  const ms = performance.now() - t0;
  const seen = await server.stop(tenants.map((t) => t.id));
  return { result, ms, start, ...seen };
}

const say = (line) => process.stderr.write(`${line}\n`);
const counts = (t, creates) => ({
  refused: t.refused,
  requests: t.requests,
  duplicates: t.stored - t.distinct,
  missing: creates - t.distinct,
});
const describe = (s) =>
  `${(s.ms / 1000).toFixed(2)} s, ${s.failed} failed${Object.keys(s.reasons).length ? ` ${JSON.stringify(s.reasons)}` : ''}, ` +
  `${s.refused} of ${s.requests} requests answered 429, ${s.duplicates} duplicates, ${s.missing} missing`;

/**
 * Runs W5 and W5b `runs` times, interleaved, and records their rows with `record(workload,
 * subject, value, unit, ratio, target, interval)` (bench/run.mjs). Draws the chart from the last round.
 */
export async function runW5(record, runs) {
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`BENCH_W5_RUNS must be a whole number, 1 or more`);
  const redis = await startRedisServer();
  const server = process.env.BENCH_W5_SERVER === 'inline' ? await inlineServer() : childServer();
  const w6Samples = Object.fromEntries(Object.keys(W6_SUBJECTS).map((name) => [name, []]));
  const w6Fake = { seed: { tenants: [{ id: W6.id, apiKey: W6.key }] }, rateLimit: W6.rateLimit };
  const w6SlowSamples = Object.fromEntries(Object.keys(W6_SLOW_SUBJECTS).map((name) => [name, []]));
  const w6SlowFake = { seed: { tenants: [{ id: W6_SLOW.id, apiKey: W6_SLOW.key }] }, rateLimit: W6_SLOW.rateLimit };
  const loaded = [];
  const samples = Object.fromEntries(Object.keys(SUBJECTS).map((name) => [name, []]));
  const tenantSamples = W5B.map(() => []);
  const chart = {};
  const w5Fake = { seed: { tenants: [{ id: W5.id, apiKey: W5.key }] }, rateLimit: W5.rateLimit };
  const w5bFake = { seed: { tenants: W5B.map(({ id, key, rateLimit }) => ({ id, apiKey: key, rateLimit })) } };
  try {
    for (let round = 1; round <= runs; round++) {
      for (const [name, subject] of Object.entries(running('w5') ? SUBJECTS : {})) {
        const run = await once(server, w5Fake, [W5], ({ url }) => subject({ url, tenant: W5 }));
        const sample = { ms: run.ms, ...run.result, ...counts(run.tenants[W5.id], W5.creates) };
        samples[name].push(sample);
        if (round === runs) chart[name] = { start: run.start, log: run.log };
        say(`W5 round ${round}/${runs}, ${name}: ${describe(sample)}`);
      }
      if (running('w5-loaded')) {
        const run = await once(server, w5Fake, [W5], ({ url }) => withBusyCore(() => sdkAll(url, W5, 'auto')));
        const sample = {
          ms: run.ms,
          ...run.result,
          ...counts(run.tenants[W5.id], W5.creates),
          mostInASecond: mostWithin(run.log, 1000),
        };
        loaded.push(sample);
        say(`W5 round ${round}/${runs}, ${LOADED}: ${describe(sample)}, at most ${sample.mostInASecond} in 1 s`);
      }
      if (running('w5b')) {
        const run = await once(server, w5bFake, W5B, fourTenants);
        W5B.forEach((tenant, i) => {
          const sample = { ...run.result[i], ...counts(run.tenants[tenant.id], tenant.creates) };
          tenantSamples[i].push(sample);
          say(`W5b round ${round}/${runs}, ${tenant.rateLimit.perSecond}/s: ${describe(sample)}`);
        });
      }
      for (const [name, subject] of Object.entries(running('w6-slow') ? W6_SLOW_SUBJECTS : {})) {
        const prefix = `w6-slow-${round}-${Date.now()}:`;
        const w6 = await once(server, w6SlowFake, [W6_SLOW], ({ url }) =>
          workerJob({ url }, subject, redis.port, prefix, W6_SLOW),
        );
        const sample = { ...w6.result, ms: w6.result.ms, ...counts(w6.tenants[W6_SLOW.id], W6_SLOW.creates) };
        w6SlowSamples[name].push(sample);
        say(`W6 20/s round ${round}/${runs}, ${name}: ${describe(sample)}`);
      }
      for (const [name, subject] of Object.entries(running('w6') ? W6_SUBJECTS : {})) {
        // A prefix of its own per run: what one run's workers learned must not help the next.
        const prefix = `w6-${round}-${Date.now()}:`;
        let at = 0;
        const w6 = await once(server, w6Fake, [W6], async ({ url }) => {
          const result = await workerJob({ url }, subject, redis.port, prefix);
          at = result.at;
          return result;
        });
        // From the common start, not from when the workers were being set up.
        const sample = { ...w6.result, ms: w6.result.ms, ...counts(w6.tenants[W6.id], W6.creates) };
        w6Samples[name].push(sample);
        if (round === runs && subject !== 'fetch') chart[`W6 ${name}`] = { start: at, log: w6.log };
        say(`W6 round ${round}/${runs}, ${name}: ${describe(sample)}`);
      }
    }
  } finally {
    await server.close();
    await redis.stop();
  }

  const of = (list, field) => median(list.map((s) => s[field]));
  const share = (list) => median(list.map((s) => (100 * s.refused) / s.requests));
  const time = (workload, subject, list, job, target) => {
    const ratios = list.map((s) => s.ms / 1000 / ideal(job));
    record(workload, subject, of(list, 'ms') / 1000, 's', median(ratios), target, medianInterval(ratios));
  };
  const w5 = `W5 3,000 creates at once, 200/s (ideal ${ideal(W5).toFixed(1)} s)`;
  if (running('w5')) {
    const fetchName = 'fetch, Promise.all, no retries';
    record(w5, fetchName, of(samples[fetchName], 'failed'), 'records failed');
    const off = samples["sdk, throttle: 'off'"];
    time(w5, "sdk, throttle: 'off'", off, W5);
    record(w5, "sdk, throttle: 'off'", of(off, 'failed'), 'records failed');
    record(w5, "sdk, throttle: 'off'", of(off, 'refused'), '429 answers');
    record(w5, "sdk, throttle: 'off'", share(off), '% of requests 429');
    time(w5, 'pool of 4, retry loop', samples['pool of 4, retry loop'], W5);
    const auto = samples["sdk, throttle: 'auto'"];
    time(w5, "sdk, throttle: 'auto'", auto, W5, '<= 1.10x');
    record(w5, "sdk, throttle: 'auto'", of(auto, 'failed'), 'records failed', undefined, '0');
    record(w5, "sdk, throttle: 'auto'", of(auto, 'duplicates'), 'duplicates', undefined, '0');
    record(w5, "sdk, throttle: 'auto'", of(auto, 'refused'), '429 answers');
    record(w5, "sdk, throttle: 'auto'", share(auto), '% of requests 429', undefined, '<= 5%');
  }
  if (running('w5-loaded')) {
    // Against the same bucket as W5: the share refused, and what reached the fake in its busiest
    // second (the bucket allows rate + burst, 220).
    time(w5, LOADED, loaded, W5);
    record(w5, LOADED, Math.max(...loaded.map((s) => s.failed)), 'records failed, worst run', undefined, '0');
    record(w5, LOADED, share(loaded), '% of requests 429', undefined, '<= 5%');
    record(
      w5,
      LOADED,
      Math.max(...loaded.map((s) => s.mostInASecond)),
      'requests in 1 s, most',
      undefined,
      `<= ${W5.rateLimit.perSecond + W5.rateLimit.burst}`,
    );
  }

  if (running('w5b')) {
    const w5b = "W5b 4 tenants at once, throttle: 'auto'";
    W5B.forEach((tenant, i) => {
      const subject = `${tenant.rateLimit.perSecond}/s, ${tenant.creates.toLocaleString('en')} creates`;
      time(w5b, subject, tenantSamples[i], tenant, '<= 1.15x');
    });
    const total = (field) => (round) => tenantSamples.reduce((sum, list) => sum + list[round][field], 0);
    const rounds = tenantSamples[0].map((_, round) => round);
    record(w5b, 'all four tenants', median(rounds.map(total('failed'))), 'records failed', undefined, '0');
    record(w5b, 'all four tenants', median(rounds.map(total('duplicates'))), 'duplicates', undefined, '0');
    record(
      w5b,
      'all four tenants',
      median(rounds.map((round) => (100 * total('refused')(round)) / total('requests')(round))),
      '% of requests 429',
    );
  }

  if (running('w6-slow')) {
    const w6Slow = `W6 300 creates, 20/s (burst 2), ${W6_SLOW.workers} worker processes (ideal ${ideal(W6_SLOW).toFixed(1)} s)`;
    for (const [name, list] of Object.entries(w6SlowSamples)) {
      const up = W6_SLOW_SUBJECTS[name] === 'store';
      time(w6Slow, name, list, W6_SLOW, up ? '<= 1.20x' : undefined);
      // Not one create may fail because of the pace or of Redis, in any run.
      record(w6Slow, name, Math.max(...list.map((s) => s.failed)), 'records failed, worst run', undefined, '0');
      record(w6Slow, name, of(list, 'duplicates'), 'duplicates', undefined, '0');
      record(w6Slow, name, share(list), '% of requests 429');
    }
  }

  if (running('w6')) {
    const w6 = `W6 3,000 creates, 200/s, ${W6.workers} worker processes (ideal ${ideal(W6).toFixed(1)} s)`;
    const [storeName, autoName, fetchShare] = Object.keys(W6_SUBJECTS);
    const shared = w6Samples[storeName];
    time(w6, storeName, shared, W6, '<= 1.10x');
    record(
      w6,
      storeName,
      Math.max(...shared.map((s) => s.ms / 1000 / ideal(W6))),
      'x ideal, worst run',
      undefined,
      '<= 1.20x',
    );
    record(w6, storeName, of(shared, 'failed'), 'records failed', undefined, '0');
    record(w6, storeName, of(shared, 'duplicates'), 'duplicates', undefined, '0');
    record(w6, storeName, share(shared), '% of requests 429', undefined, '<= 5%');
    time(w6, autoName, w6Samples[autoName], W6);
    record(w6, autoName, of(w6Samples[autoName], 'failed'), 'records failed');
    record(w6, autoName, share(w6Samples[autoName]), '% of requests 429');
    time(w6, fetchShare, w6Samples[fetchShare], W6);
    record(w6, fetchShare, of(w6Samples[fetchShare], 'failed'), 'records failed');
  }

  await drawW5Chart(CHART, chart, {
    title: `W5 and W6: ${W5.creates.toLocaleString('en')} contacts.create at once, limit ${W5.rateLimit.perSecond}/s (burst ${W5.rateLimit.burst}), ${LATENCY_MS} ms latency; W6 over ${W6.workers} worker processes`,
    limit: W5.rateLimit,
    creates: W5.creates,
  });
  return { chart: CHART };
}
