// W8: a fleet syncing one tenant (issues 37 and 48). W7a's source (500 accounts, 1,000 contacts,
// 250 opportunities, 500 activities) into the fake at 200/s, burst 20, answering after 20 ms, split
// over 4 long-lived worker processes (bench/w8-worker.mjs: each has run a small job of its own
// first) paced as one through redisStore(). Each round runs, in this order:
// - cold: on one postgresJournal(), each worker given an overlapping half of the source (every
//   record offered to two workers, the claims deciding which creates it), the rate never seen (a
//   Redis prefix of its own);
// - second night: the same job again, "a day later": the schedule's Redis keys of the cold job
//   deleted (they expire after 15 minutes), its remembered rate kept (`rememberMs`), a fresh fake
//   on the same port (the same base URL, a full bucket) and a new journal schema, so that only the
//   remembered pace can help;
// - memoryJournal() per worker, each given a disjoint quarter, cold: the journal's own cost;
// - one process: the same 2,250 records through a single worker on sqliteJournal(), cold: what
//   the fleet is held to (the fleet's cold time over this one's, in the same round);
// - long: 9,000 records (W7a's sizes x4) over 4 workers on postgresJournal(), overlapping halves, cold.
// A record goes with its family (an account's contacts and opportunities, an opportunity's
// activities), so that a disjoint worker holds its records' parents. The ideal is the bucket's
// pace: (records - 20) / 200 (11.15 s; 44.90 s long). Duplicates: creates the fake accepted
// beyond the records.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import { median, sleep } from './measure.mjs';
import { startPostgresServer } from './postgres.mjs';
import { startRedisServer } from './redis.mjs';
import { records as w7Records } from './w7.mjs';

const LATENCY_MS = 20;
const TENANT = { id: 'tenant_w8', key: 'w8-key' };
const RATE = { perSecond: 200, burst: 20 };
const SIZES = { accounts: 500, contacts: 1000, opportunities: 250, activities: 500 };
const LONG = Object.fromEntries(Object.entries(SIZES).map(([type, n]) => [type, n * 4]));
const countOf = (sizes) => Object.values(sizes).reduce((a, b) => a + b, 0);
const idealOf = (sizes) => (countOf(sizes) - RATE.burst) / RATE.perSecond;
const WORKERS = 4;

/** The family (0-3) of a record: its account's index, modulo 4. */
const familyOf = (type, i, sizes) =>
  type === 'accounts' ? i % 4 : type === 'activities' ? (i % sizes.opportunities) % 4 : (i % sizes.accounts) % 4;

/** W7a's records of `type` (at `sizes`) whose family is one of `groups`. */
function* records(type, groups, sizes) {
  let i = 0;
  for (const record of w7Records(type, sizes)) if (groups.includes(familyOf(type, i++, sizes))) yield record;
}

/** The source of the families `groups`, as generators. */
export const sliceOf = (groups, sizes = SIZES) =>
  Object.fromEntries(Object.keys(sizes).map((type) => [type, records(type, groups, sizes)]));

const halves = (w) => [w, (w + 1) % WORKERS];
/** The subjects of a round, in the order they run (BENCH_W8_SUBJECT: some of their names, comma-separated). */
const SUBJECTS = {
  cold: { journal: 'postgres', groups: halves, sizes: SIZES },
  night: { journal: 'postgres', groups: halves, sizes: SIZES, night: true },
  memory: { journal: 'memory', groups: (w) => [w], sizes: SIZES },
  one: { journal: 'sqlite', workers: 1, groups: () => [0, 1, 2, 3], sizes: SIZES },
  long: { journal: 'postgres', groups: halves, sizes: LONG },
};
const CHOSEN = process.env.BENCH_W8_SUBJECT?.split(',');
if (CHOSEN?.some((name) => !(name in SUBJECTS)))
  throw new Error(`BENCH_W8_SUBJECT: some of ${Object.keys(SUBJECTS).join(', ')}`);

const say = (line) => process.stderr.write(`${line}\n`);

/**
 * BENCH_W8_TRACE=1: per 250 ms of each run (BENCH_W8_SLOT ms), the requests each worker sent and
 * how many were answered 429 (a plateau below the limit, a pause, a second refusal);
 * BENCH_W8_SUBJECT=cold,night,memory,one,long runs those subjects alone (night needs cold);
 * BENCH_W8_COLD=1 runs fresh worker processes, without the warm-up of bench/w8-worker.mjs.
 */
const TRACE = process.env.BENCH_W8_TRACE === '1';
const SLOT_MS = Number(process.env.BENCH_W8_SLOT ?? 250);

function traceOf(start, traces) {
  const slots = [];
  traces.forEach((trace, w) => {
    for (const [sentAt, , status] of trace) {
      const slot = Math.floor((sentAt - start) / SLOT_MS);
      slots[slot] ??= traces.map(() => ({ sent: 0, refused: 0 }));
      slots[slot][w].sent += 1;
      if (status === 429) slots[slot][w].refused += 1;
    }
  });
  say('  t (s)   fleet/s  429s   per worker (sent/429)');
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i] ?? traces.map(() => ({ sent: 0, refused: 0 }));
    const sent = slot.reduce((n, w) => n + w.sent, 0);
    const refused = slot.reduce((n, w) => n + w.refused, 0);
    const each = slot.map((w) => `${String(w.sent).padStart(3)}/${w.refused}`).join(' ');
    say(
      `  ${((i * SLOT_MS) / 1000).toFixed(2).padStart(5)}  ${String((sent * 1000) / SLOT_MS).padStart(7)}  ${String(refused).padStart(4)}   ${each}`,
    );
  }
}

function childServer() {
  const child = fork(fileURLToPath(new URL('./w5-server.mjs', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const gone = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const ask = (message) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      void gone.then((code) => reject(new Error(`bench/w5-server.mjs exited (${code})`)));
      child.send(message);
    });
  return {
    start: (options) => ask({ type: 'start', options }),
    stop: () => ask({ type: 'stop', tenants: [TENANT.id] }),
    close: () => {
      child.disconnect();
      return gone;
    },
  };
}

async function fleet(url, subject, redisPort, pg, round, prefix) {
  const schema = `w8_${round}_${subject.journal}_${Date.now()}`;
  const dir = subject.journal === 'sqlite' ? mkdtempSync(join(tmpdir(), 'w8-')) : undefined;
  const workers = Array.from({ length: subject.workers ?? WORKERS }, () =>
    fork(fileURLToPath(new URL('./w8-worker.mjs', import.meta.url)), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const ask = (child, message, type) =>
    new Promise((resolve, reject) => {
      const onMessage = (reply) => {
        if (reply.type !== type) return;
        child.off('message', onMessage);
        resolve(reply);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`bench/w8-worker.mjs exited (${code})`)));
      child.send(message);
    });
  try {
    await Promise.all(
      workers.map((child, w) =>
        ask(
          child,
          {
            type: 'setup',
            url,
            tenant: TENANT,
            groups: subject.groups(w),
            redisPort,
            prefix,
            journal: subject.journal,
            sqlitePath: dir && join(dir, 'journal.db'),
            sizes: subject.sizes,
            pg,
            schema,
            trace: TRACE,
            cold: process.env.BENCH_W8_COLD === '1',
          },
          'ready',
        ),
      ),
    );
    const at = Date.now() + 200;
    const done = await Promise.all(workers.map((child) => ask(child, { type: 'go', at }, 'done')));
    const ms = Math.max(...done.map((d) => d.endedAt)) - at;
    if (TRACE)
      traceOf(
        at,
        done.map((d) => d.trace),
      );
    const sum = (field) => done.reduce((n, d) => n + d.report[field], 0);
    return {
      at,
      ms,
      created: sum('created'),
      failed: sum('failed'),
      inDoubt: Math.max(...done.map((d) => d.report.inDoubt)),
    };
  } finally {
    for (const child of workers) child.disconnect();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** "A day later": the schedule's Redis keys under `prefix` gone (their TTL is 15 minutes), the remembered rates kept. */
async function aDayLater(redisPort, prefix) {
  const redis = new Redis({ port: redisPort, host: '127.0.0.1' });
  try {
    for (const key of await redis.keys(`${prefix}*`)) if (!key.endsWith(':learned')) await redis.del(key);
  } finally {
    redis.disconnect();
  }
}

/** Runs W8's subjects `runs` times, interleaved, and records their rows (bench/run.mjs's `record`). */
export async function runW8(record, runs) {
  const redis = await startRedisServer();
  const postgres = await startPostgresServer();
  const server = childServer();
  const names = Object.keys(SUBJECTS).filter((name) => !CHOSEN || CHOSEN.includes(name));
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const duplicates = Object.fromEntries(names.map((name) => [name, 0]));
  /** The 429s the fake answered within each second-night job's first second. */
  const refusedFirstSecond = [];
  /** The fleet's cold time over one process's, per round where both ran. */
  const fleetOverOne = [];
  try {
    for (let round = 1; round <= runs; round++) {
      /** The cold job's Redis prefix and port: the second night's job runs on them. */
      let cold;
      const times = {};
      for (const name of names) {
        const subject = SUBJECTS[name];
        if (subject.night && !cold) continue;
        await sleep(1000);
        const prefix = subject.night ? cold.prefix : `w8-${round}-${name}-${Date.now()}:`;
        if (subject.night) await aDayLater(redis.port, prefix);
        const { url } = await server.start({
          latencyMs: LATENCY_MS,
          rateLimit: RATE,
          maxLoggedRequests: 100_000,
          seed: { tenants: [{ id: TENANT.id, apiKey: TENANT.key }] },
          ...(subject.night ? { port: cold.port } : {}),
        });
        if (name === 'cold') cold = { prefix, port: Number(new URL(url).port) };
        const result = await fleet(url, subject, redis.port, postgres.connection, round, prefix);
        const seen = await server.stop();
        if (TRACE) {
          const first = seen.log.findIndex(([, status]) => status === 429);
          if (first >= 0)
            say(
              `  the fake's first 429: request ${first + 1}, ${seen.log[first][0] - seen.log[0][0]} ms after the first`,
            );
        }
        const early = seen.log.filter(([at, status]) => status === 429 && at - result.at < 1000).length;
        if (subject.night) refusedFirstSecond.push(early);
        const t = seen.tenants[TENANT.id];
        const accepted = t.requests - t.refused;
        const expected = countOf(subject.sizes);
        duplicates[name] = Math.max(duplicates[name], accepted - expected);
        samples[name].push(result.ms);
        times[name] = result.ms;
        const ideal = idealOf(subject.sizes);
        say(
          `W8 round ${round}/${runs}, ${name}: ${(result.ms / 1000).toFixed(2)} s (${(result.ms / 1000 / ideal).toFixed(3)}x ideal), ${result.created} created, ${result.failed} failed, ${result.inDoubt} in doubt, ${t.refused} of ${t.requests} requests answered 429 (${early} in the first second), ${accepted - expected} duplicates`,
        );
      }
      if (times.cold !== undefined && times.one !== undefined) fleetOverOne.push(times.cold / times.one);
    }
  } finally {
    await server.close();
    await postgres.stop();
    await redis.stop();
  }
  const ideal = idealOf(SIZES);
  const cold = `W8 cold, 2,250 records over 4 warm workers at 200/s, paced in Redis, the rate never seen (ideal ${ideal.toFixed(2)} s)`;
  const row = (workload, name, subject, target) => {
    if (!samples[name]?.length) return;
    const ms = median(samples[name]);
    const its = idealOf(SUBJECTS[name].sizes);
    record(workload, `CrmSync, ${subject}`, ms / 1000, 's', ms / 1000 / its, target);
    record(workload, `duplicates, ${subject}`, duplicates[name], 'records', undefined, '0');
    return its;
  };
  row(cold, 'cold', 'postgresJournal, overlapping halves', '<= 1.15x');
  if (samples.cold.length > 0) {
    const worst = Math.max(...samples.cold) / 1000;
    record(cold, 'worst round, postgresJournal', worst, 's', worst / ideal, '<= 1.25x');
  }
  row(cold, 'memory', 'memoryJournal per worker, disjoint quarters', '');
  row(cold, 'one', 'one process, sqliteJournal, all 2,250', '');
  if (fleetOverOne.length > 0)
    record(cold, 'the fleet over one process, same round', median(fleetOverOne), 'x', undefined, '<= 1.05x');
  const night = `W8 second night, the same job a simulated day later, the rate remembered in Redis (ideal ${ideal.toFixed(2)} s)`;
  row(night, 'night', 'postgresJournal, overlapping halves', '<= 1.05x');
  if (refusedFirstSecond.length > 0)
    record(
      night,
      'refused in its first second (worst round)',
      Math.max(...refusedFirstSecond),
      'requests',
      undefined,
      '0',
    );
  const long = `W8 long, 9,000 records over 4 warm workers at 200/s, cold (ideal ${idealOf(LONG).toFixed(2)} s)`;
  row(long, 'long', 'postgresJournal, overlapping halves', '<= 1.06x');
}
