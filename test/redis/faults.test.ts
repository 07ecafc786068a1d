import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { CrmClient, type CrmRequestLog } from '../../src/index';
import { type PaceStore, redisStore, sharedPaceStore } from '../../src/redis/index';
import type { FakeCrmServer } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { startRedis, type TestRedis } from '../support/redis';
import { useStoreBudget } from '../support/store-budget';

/*
 * Redis that fails: stopped halfway, never there, answering nonsense or nothing. The calls go on,
 * paced in their process, every record placed once; the client warns once per outage, and shares
 * again once the store answers. No timed assertions: what the server stored, and what was logged.
 */

// The time Redis may take to answer: 100 ms in production, which a busy machine's Redis overran
// (a second warning in a job, a warning where none was due). A store that never answers still
// fails after it.
const BUDGET_MS = 1_000;
useStoreBudget(BUDGET_MS);

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.close();
});

const TENANT = 'tenant_faults';
const KEY = 'sk_faults_9e8d7c6b5a4f3e2d1c0b';

const limitedFake = (perSecond: number, burst: number): Promise<FakeCrmServer> =>
  startedServer({ seed: { tenants: [{ id: TENANT, apiKey: KEY, rateLimit: { perSecond, burst } }] }, latencyMs: 5 });

type Logs = { line: string; entry: CrmRequestLog }[];

function client(url: string, store: PaceStore, logs: Logs): CrmClient {
  return new CrmClient({
    baseUrl: url,
    apiKey: KEY,
    tenantId: TENANT,
    throttle: { mode: 'auto', store },
    logger: (line, entry) => logs.push({ line, entry }),
  });
}

const create = (crm: CrmClient, i: number) =>
  crm.contacts.create({ firstName: 'Fault', lastName: `${i}`, email: `fault-${i}@faults.test` });

function placed(server: FakeCrmServer) {
  const contacts = server.fake.store.contactsOf(TENANT);
  return { stored: contacts.length, distinct: new Set(contacts.map((contact) => contact.email)).size };
}

const warningsIn = (logs: Logs) => logs.filter(({ entry }) => entry.warning === 'pace-store-unavailable');

describe('a pace store that fails', () => {
  test('Redis stopped halfway through a job of four workers: no record lost, none duplicated, the job ends; started again, the workers share again', async () => {
    const server = await limitedFake(100, 10);
    const prefix = `halfway-${Math.random().toString(36).slice(2)}:`;
    const logs: Logs[] = [];
    const workers = Array.from({ length: 4 }, () => {
      const own: Logs = [];
      logs.push(own);
      return client(server.url, redisStore(redis.client(), { prefix }), own);
    });
    const n = 1000;
    const job = Promise.allSettled(Array.from({ length: n }, (_, i) => create(workers[i % 4] as CrmClient, i)));

    // Halfway through the first 300 records, Redis goes; a second later it is back, empty.
    await vi.waitFor(() => expect(placed(server).stored).toBeGreaterThanOrEqual(150), {
      timeout: 30_000,
      interval: 20,
    });
    await redis.stop();
    await vi.waitFor(() => expect(logs.every((own) => warningsIn(own).length > 0)).toBe(true), {
      timeout: 30_000,
      interval: 20,
    });
    await redis.restart();
    const settled = await job;

    expect(settled.filter((result) => result.status === 'rejected')).toEqual([]);
    expect(placed(server)).toEqual({ stored: n, distinct: n });
    // One warning per worker for the outage, which names neither the key nor any part of it.
    for (const own of logs) {
      expect(warningsIn(own)).toHaveLength(1);
      expect(warningsIn(own)[0]?.line).toMatch(/^crm warning pace-store-unavailable: .+; each key paced/);
    }
    expect(JSON.stringify(logs)).not.toContain(KEY);
    // Back: the workers wrote their pace to the new, empty Redis.
    const keys = await redis.client().keys(`${prefix}*`);
    expect(keys.filter((key) => /:(state|turns)$/.test(key))).toHaveLength(2);
  }, 120_000);

  test('Redis not there when the job starts: every record is placed once, paced in the process, and one warning says so', async () => {
    const server = await limitedFake(100, 10);
    const logs: Logs = [];
    // Nothing listens on port 1.
    const crm = client(
      server.url,
      redisStore(
        new (await import('ioredis')).default({
          port: 1,
          lazyConnect: true,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
        }).on('error', () => {}),
      ),
      logs,
    );

    const settled = await Promise.allSettled(Array.from({ length: 150 }, (_, i) => create(crm, i)));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(placed(server)).toEqual({ stored: 150, distinct: 150 });
    expect(warningsIn(logs)).toHaveLength(1);
  }, 60_000);

  test('a process too busy to read the store in time (queuing a job of thousands of calls) does not take the store for failed', async () => {
    const server = await limitedFake(100, 10);
    const logs: Logs = [];
    const prefix = `busy-${Math.random().toString(36).slice(2)}:`;
    const inner = redisStore(redis.client(), { prefix });
    let busy = true;
    // The first reservation is sent, and then the process is busy for three times the store's
    // budget before it can read the answer: what queuing thousands of calls does on two cores.
    const store = sharedPaceStore({
      reserve: (key: string, count: number, interval: number) => {
        const answer = inner.reserve(key, count, interval);
        const until = performance.now() + (busy ? 3 * BUDGET_MS : 0);
        busy = false;
        while (performance.now() < until) {}
        return answer;
      },
      refuse: (key: string, phase: number, turn: number, pause: number) => inner.refuse(key, phase, turn, pause),
      learn: (key: string, phase: number, learned: object) => inner.learn(key, phase, learned),
    });
    const crm = client(server.url, store, logs);

    const settled = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => create(crm, i)));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(placed(server)).toEqual({ stored: 50, distinct: 50 });
    expect(warningsIn(logs)).toEqual([]);
  }, 60_000);

  test('a client that was closed (quit) fails the store, never a call', async () => {
    const server = await limitedFake(200, 20);
    const closed = redis.client();
    await closed.quit();
    const logs: Logs = [];
    const crm = client(server.url, redisStore(closed), logs);

    const settled = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => create(crm, i)));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(warningsIn(logs)).toHaveLength(1);
    expect(warningsIn(logs)[0]?.entry.error).toMatch(/Connection is closed|not connected/);
  }, 60_000);

  test.each([
    [
      'throws',
      () =>
        sharedStoreOf(() => {
          throw new Error(`boom for ${KEY}`);
        }),
    ],
    ['rejects', () => sharedStoreOf(() => Promise.reject(new Error('down')))],
    ['never answers', () => sharedStoreOf(() => new Promise(() => {}))],
    ['answers nonsense', () => sharedStoreOf(() => ({ phase: 'x', turn: Number.NaN, delayMs: -1 }))],
    ['answers null', () => sharedStoreOf(() => null)],
    [
      'asks for a wait of years',
      () => sharedStoreOf(() => ({ phase: 0, turn: 0, delayMs: 1e12, now: 1, startedAt: 1, learned: undefined })),
    ],
  ])(
    'a store that %s: every call placed once, the key masked in the one warning',
    async (_, make) => {
      const server = await limitedFake(200, 20);
      const logs: Logs = [];
      const crm = client(server.url, make(), logs);

      const settled = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => create(crm, i)));

      expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
      expect(placed(server)).toEqual({ stored: 60, distinct: 60 });
      expect(warningsIn(logs)).toHaveLength(1);
      expect(JSON.stringify(logs)).not.toContain(KEY);
    },
    60_000,
  );
});

test('a store whose error quotes the key JSON-escaped, URL-encoded, in base64 or in upper case: the warning masks every form', async () => {
  const server = await limitedFake(200, 20);
  const logs: Logs = [];
  const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const forms = [escaped, KEY.replace(/_/g, '%5F'), btoa(KEY), KEY.toUpperCase()];
  const crm = client(
    server.url,
    sharedStoreOf(() => {
      throw new Error(`store refused {"key":"${escaped}"} ${forms.slice(1).join(' ')}`);
    }),
    logs,
  );

  const settled = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => create(crm, i)));

  expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
  const [warning] = warningsIn(logs);
  expect(warning?.entry.error).toBe('Error: store refused {"key":"[redacted]"} [redacted] [redacted] [redacted]');
  expect(warning?.line).toContain('store refused {"key":"[redacted]"} [redacted] [redacted] [redacted];');
  for (const form of [KEY, ...forms]) expect(JSON.stringify(logs)).not.toContain(form);
}, 60_000);

/** A store of the user's whose every step answers `answer()`. */
function sharedStoreOf(answer: () => unknown): PaceStore {
  const step = () => answer() as never;
  return sharedPaceStore({ reserve: step, refuse: step, learn: step });
}
