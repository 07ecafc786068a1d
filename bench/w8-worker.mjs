// One worker process of W8 (bench/w8.mjs): its slice of W7a's source, synced by CrmSync paced
// through Redis, on the shared Postgres journal, or on a journal of its own in memory or in SQLite
// (one process given the whole job). Over IPC:
//   { type: 'setup', url, tenant, groups, sizes, redisPort, prefix, journal, sqlitePath, pg, schema, cold } -> { type: 'ready' }
//   { type: 'go', at }  (epoch ms, the same for every worker) -> { type: 'done', report, endedAt }
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import pg from 'pg';
import { CrmClient } from '../dist/index.js';
import { postgresJournal } from '../dist/postgres.js';
import { redisStore } from '../dist/redis.js';
import { CrmSync, memoryJournal, sqliteJournal } from '../dist/sync.js';
import { sliceOf } from './w8.mjs';

/**
 * A job's workers are long-lived (a queue's): before the measured job, each syncs a small one of its
 * own, 180 records, through the same pool and Redis connection, into a fake, a schema and a pace
 * key of its own. Its code is then compiled and its pool's connections open, as in a worker that has
 * run a job before; nothing of the measured tenant is known (its pace is learned as at a first
 * job, its journal's schema is new). Fresh processes spent their first second compiling, four at
 * once on two cores: the server saw the ramp's requests 10 to 70 ms late, and the rate was found
 * 5 to 18% off (BENCH_W8_COLD=1 measures them so). Warm pools also met a defect fresh ones hid:
 * three of four workers failed to open the new journal.
 */
async function warmUp({ tenant, prefix, schema, groups }, redis, pool) {
  const { startFakeCrmServer } = await import('../dist/testing.js');
  const { records } = await import('./w7.mjs');
  const server = await startFakeCrmServer({
    latencyMs: 20,
    seed: { tenants: [{ id: tenant.id, apiKey: tenant.key }] },
  });
  try {
    const crm = new CrmClient({
      baseUrl: server.url,
      apiKey: tenant.key,
      tenantId: tenant.id,
      throttle: { mode: 'auto', store: redisStore(redis, { prefix: `${prefix}warm-up-${groups[0]}:` }) },
    });
    const journal = pool ? postgresJournal(pool, { schema: `${schema}_warm_up_${groups[0]}` }) : memoryJournal();
    const sizes = { accounts: 40, contacts: 80, opportunities: 20, activities: 40 };
    await new CrmSync(crm, { journal }).run(
      Object.fromEntries(Object.keys(sizes).map((type) => [type, records(type, sizes)])),
    );
  } finally {
    await server.close();
  }
}

let run;
const trace = [];
let close;
process.on('message', async (message) => {
  if (message.type === 'setup') {
    const { url, tenant, groups, redisPort, prefix, journal, schema } = message;
    const redis = new Redis({ port: redisPort, host: '127.0.0.1' });
    await redis.ping();
    const pool = journal === 'postgres' ? new pg.Pool({ ...message.pg, max: 4 }) : undefined;
    pool?.on('error', () => {});
    // BENCH_W8_TRACE: each request's send and answer (epoch ms) and status, for bench/w8.mjs's trace.
    const traced = message.trace
      ? async (input, init) => {
          const entry = [Date.now(), 0, 0];
          trace.push(entry);
          try {
            const response = await fetch(input, init);
            entry[1] = Date.now();
            entry[2] = response.status;
            return response;
          } catch (error) {
            entry[1] = Date.now();
            throw error;
          }
        }
      : undefined;
    const crm = new CrmClient({
      ...(traced ? { fetch: traced } : {}),
      baseUrl: url,
      apiKey: tenant.key,
      tenantId: tenant.id,
      throttle: { mode: 'auto', store: redisStore(redis, { prefix }) },
    });
    const own = journal === 'sqlite' ? sqliteJournal(message.sqlitePath) : memoryJournal();
    const sync = new CrmSync(crm, { journal: pool ? postgresJournal(pool, { schema }) : own });
    if (!message.cold) await warmUp(message, redis, pool);
    run = () => sync.run(sliceOf(groups, message.sizes));
    close = async () => {
      redis.disconnect();
      await pool?.end();
    };
    process.send({ type: 'ready' });
  } else if (message.type === 'go') {
    await sleep(Math.max(0, message.at - Date.now()));
    const report = await run();
    const endedAt = Date.now();
    process.send({
      type: 'done',
      endedAt,
      trace,
      report: {
        created: report.created,
        unchanged: report.unchanged,
        failed: report.failed.length,
        inDoubt: report.inDoubt.length,
        skipped: report.skipped.length,
      },
    });
    await close();
  }
});
process.on('disconnect', () => process.exit(0));
