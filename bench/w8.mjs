// W8: a fleet syncing one tenant (issue 37). W7a's source (500 accounts, 1,000 contacts, 250
// opportunities, 500 activities) into the fake at 200/s, burst 20, answering after 20 ms, split
// over 4 long-lived worker processes (bench/w8-worker.mjs: each has run a small job of its own
// first) paced as one through redisStore():
// - on one postgresJournal(), each worker given an overlapping half of the source (every record
//   offered to two workers, the claims deciding which creates it);
// - on a memoryJournal() per worker, each given a disjoint quarter: the journal's own cost.
// A record goes with its family (an account's contacts and opportunities, an opportunity's
// activities), so that a disjoint worker holds its records' parents. The ideal is the bucket's
// pace: (2,250 - 20) / 200 = 11.15 s. Duplicates: creates the fake accepted beyond 2,250.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, sleep } from './measure.mjs';
import { startPostgresServer } from './postgres.mjs';
import { startRedisServer } from './redis.mjs';
import { records as w7Records } from './w7.mjs';

const LATENCY_MS = 20;
const TENANT = { id: 'tenant_w8', key: 'w8-key' };
const RATE = { perSecond: 200, burst: 20 };
const SIZES = { accounts: 500, contacts: 1000, opportunities: 250, activities: 500 };
const RECORDS = Object.values(SIZES).reduce((a, b) => a + b, 0);
const IDEAL_S = (RECORDS - RATE.burst) / RATE.perSecond;
const WORKERS = 4;

/** The family (0-3) of a record: its account's index, modulo 4. */
const FAMILY = {
  accounts: (i) => i % 4,
  contacts: (i) => (i % SIZES.accounts) % 4,
  opportunities: (i) => (i % SIZES.accounts) % 4,
  activities: (i) => (i % SIZES.opportunities) % 4,
};

/** W7a's records of `type` whose family is one of `groups`. */
function* records(type, groups) {
  let i = 0;
  for (const record of w7Records(type, SIZES)) if (groups.includes(FAMILY[type](i++))) yield record;
}

/** The source of the families `groups`, as generators. */
export const sliceOf = (groups) => Object.fromEntries(Object.keys(SIZES).map((type) => [type, records(type, groups)]));

const SUBJECTS = {
  'postgresJournal, overlapping halves': {
    journal: 'postgres',
    groups: (w) => [w, (w + 1) % WORKERS],
  },
  'memoryJournal per worker, disjoint quarters': { journal: 'memory', groups: (w) => [w] },
};

const say = (line) => process.stderr.write(`${line}\n`);

/**
 * BENCH_W8_TRACE=1: per 250 ms of each run (BENCH_W8_SLOT ms), the requests each worker sent and
 * how many were answered 429 (a plateau below the limit, a pause, a second refusal);
 * BENCH_W8_SUBJECT=memory or postgres runs that subject alone; BENCH_W8_COLD=1 runs fresh worker
 * processes, without the warm-up of bench/w8-worker.mjs.
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

async function fleet(url, subject, redisPort, pg, round) {
  const prefix = `w8-${round}-${Date.now()}:`;
  const schema = `w8_${round}_${subject.journal}_${Date.now()}`;
  const workers = Array.from({ length: WORKERS }, () =>
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
      ms,
      created: sum('created'),
      failed: sum('failed'),
      inDoubt: Math.max(...done.map((d) => d.report.inDoubt)),
    };
  } finally {
    for (const child of workers) child.disconnect();
  }
}

/** Runs W8's two subjects `runs` times, interleaved, and records their rows (bench/run.mjs's `record`). */
export async function runW8(record, runs) {
  const redis = await startRedisServer();
  const postgres = await startPostgresServer();
  const server = childServer();
  const samples = Object.fromEntries(Object.keys(SUBJECTS).map((name) => [name, []]));
  const duplicates = Object.fromEntries(Object.keys(SUBJECTS).map((name) => [name, 0]));
  try {
    for (let round = 1; round <= runs; round++) {
      for (const [name, subject] of Object.entries(SUBJECTS)) {
        if (process.env.BENCH_W8_SUBJECT && subject.journal !== process.env.BENCH_W8_SUBJECT) continue;
        await sleep(1000);
        const { url } = await server.start({
          latencyMs: LATENCY_MS,
          rateLimit: RATE,
          seed: { tenants: [{ id: TENANT.id, apiKey: TENANT.key }] },
        });
        const result = await fleet(url, subject, redis.port, postgres.connection, round);
        const seen = await server.stop();
        if (TRACE) {
          const first = seen.log.findIndex(([, status]) => status === 429);
          if (first >= 0)
            say(
              `  the fake's first 429: request ${first + 1}, ${seen.log[first][0] - seen.log[0][0]} ms after the first`,
            );
        }
        const t = seen.tenants[TENANT.id];
        const accepted = t.requests - t.refused;
        duplicates[name] = Math.max(duplicates[name], accepted - RECORDS);
        samples[name].push(result.ms);
        say(
          `W8 round ${round}/${runs}, ${name}: ${(result.ms / 1000).toFixed(2)} s (${(result.ms / 1000 / IDEAL_S).toFixed(3)}x ideal), ${result.created} created, ${result.failed} failed, ${result.inDoubt} in doubt, ${t.refused} of ${t.requests} requests answered 429, ${accepted - RECORDS} duplicates`,
        );
      }
    }
  } finally {
    await server.close();
    await postgres.stop();
    await redis.stop();
  }
  const workload = `W8 fleet load, 2,250 records over 4 workers at 200/s, paced in Redis (ideal ${IDEAL_S.toFixed(2)} s)`;
  for (const name of Object.keys(SUBJECTS)) {
    if (samples[name].length === 0) continue;
    const ms = median(samples[name]);
    const target = name.startsWith('postgres') ? '<= 1.12x' : '';
    record(workload, `CrmSync, ${name}`, ms / 1000, 's', ms / 1000 / IDEAL_S, target);
    record(workload, `duplicates, ${name}`, duplicates[name], 'records', undefined, '0');
  }
}
