// One worker process of W6 (bench/w6.mjs): its share of one tenant's creates, as a worker of a job
// queue (BullMQ, a Kubernetes job) would send them. Driven over IPC:
//   { type: 'setup', url, tenant, indices, subject, redisPort, prefix, workers, index } -> { type: 'ready' }
//   { type: 'go', at }  (epoch ms, the same for every worker)         -> { type: 'done', failed, reasons, endedAt }
import { setTimeout as sleep } from 'node:timers/promises';
import Redis from 'ioredis';
import { CrmClient } from '../dist/index.js';
import { redisStore } from '../dist/redis.js';

const contact = (i) => ({ firstName: 'Bulk', lastName: `Contact ${i}`, email: `bulk-${i}@w6.test` });
const nameOf = (reason) => (reason instanceof Error ? reason.constructor.name : typeof reason);

let run;
let redis;
process.on('message', async (message) => {
  if (message.type === 'setup') {
    const { url, tenant, indices, subject, redisPort, prefix, workers, index } = message;
    if (subject === 'fetch') {
      run = () => rawFetch(url, tenant, indices, workers, index);
    } else {
      let throttle = 'auto';
      if (subject === 'store') {
        redis = new Redis({ port: redisPort, host: '127.0.0.1' });
        await redis.ping();
        throttle = { mode: 'auto', store: redisStore(redis, { prefix }) };
      } else if (subject === 'store-down') {
        // Redis down for the whole job: a port nothing listens on (the job's must not fail for it).
        redis = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
        redis.on('error', () => {});
        throttle = { mode: 'auto', store: redisStore(redis, { prefix }) };
      }
      // The store's warning is expected when Redis is down: kept off the bench's output.
      const logger = subject === 'store-down' ? () => {} : undefined;
      const crm = new CrmClient({ baseUrl: url, apiKey: tenant.key, tenantId: tenant.id, throttle, logger });
      run = () => Promise.allSettled(indices.map((i) => crm.contacts.create(contact(i))));
    }
    process.send({ type: 'ready' });
  } else if (message.type === 'go') {
    await sleep(Math.max(0, message.at - Date.now()));
    const settled = await run();
    const endedAt = Date.now();
    const reasons = {};
    for (const result of settled)
      if (result.status === 'rejected') reasons[nameOf(result.reason)] = (reasons[nameOf(result.reason)] ?? 0) + 1;
    process.send({
      type: 'done',
      failed: settled.filter((r) => r.status === 'rejected').length,
      reasons,
      endedAt,
    });
    redis?.disconnect();
  }
});
process.on('disconnect', () => process.exit(0));

/**
 * Raw fetch that knows its share of the limit: its part of the burst at once, then one request
 * every workers / perSecond seconds, the workers' ticks spread evenly, no retries. What a job that
 * was told the limit would do.
 */
async function rawFetch(url, tenant, indices, workers, index) {
  const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': tenant.key };
  const { perSecond, burst } = tenant.rateLimit;
  // 1% under its share: timers fire late, and a request bunched with the next finds the bucket dry.
  const every = (1010 * workers) / perSecond;
  const ownBurst = Math.floor(burst / workers);
  const start = performance.now();
  return Promise.allSettled(
    indices.map(async (i, k) => {
      const at = start + (k < ownBurst ? 0 : (k - ownBurst + 1) * every + (index * every) / workers);
      await sleep(Math.max(0, at - performance.now()));
      const body = JSON.stringify({ tenantId: tenant.id, ...contact(i) });
      const res = await fetch(`${url}/integrations/v1/contacts`, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`status ${res.status}`);
    }),
  );
}
