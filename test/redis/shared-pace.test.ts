import type Redis from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { CrmClient, type CrmRequestLog } from '../../src/index';
import { type PaceStore, redisStore, sharedPaceStore } from '../../src/redis/index';
import { MemoryStore } from '../../src/redis/memory-store';
import type { FakeCrmCore } from '../../src/testing/index';
import { startedServer, throughMsw } from '../support/fake-harness';
import { settle } from '../support/paced';
import { startRedis, type TestRedis } from '../support/redis';
import { useStoreBudget } from '../support/store-budget';

/*
 * Workers of one tenant, each with a client of its own and a Redis connection of its own (as
 * processes of a queue would be), against the fake CRM over HTTP with a rate limit: no timed
 * assertions, only what the server stored and answered. Redis may take 2 s to answer here (a busy
 * machine delayed it past 100 ms, and the workers then paced alone). The workers of a memory store
 * meet the fake through MSW on a fake clock: their pace and its bucket run on a time that no busy
 * machine moves (on real time, 53 of 253 requests were refused where 20 % was the bound).
 */

useStoreBudget(2_000);
afterEach(() => {
  vi.useRealTimers();
});

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.close();
});

const TENANT = 'tenant_bulk';
const KEY = 'sk_bulk_5d1e2f3a4b5c6d7e8f9a0b1c';

const limited = (perSecond: number, burst: number) => ({
  seed: { tenants: [{ id: TENANT, apiKey: KEY, rateLimit: { perSecond, burst } }] },
  latencyMs: 5,
});

/** The rate-limited fake over HTTP, on real time (for a real Redis). */
async function limitedFake(perSecond: number, burst: number): Promise<{ url: string; fake: FakeCrmCore }> {
  return startedServer(limited(perSecond, burst));
}

/** The rate-limited fake through MSW, the clock faked from now on: `job()`s run with `settle()`. */
async function pacedFake(perSecond: number, burst: number): Promise<{ url: string; fake: FakeCrmCore }> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  const { fake, baseUrl } = await throughMsw(limited(perSecond, burst));
  return { url: baseUrl, fake };
}

interface Worker {
  readonly crm: CrmClient;
  readonly logs: { line: string; entry: CrmRequestLog }[];
}

function workers(url: string, count: number, store: () => PaceStore | undefined): Worker[] {
  return Array.from({ length: count }, () => {
    const logs: Worker['logs'] = [];
    const made = store();
    const crm = new CrmClient({
      baseUrl: url,
      apiKey: KEY,
      tenantId: TENANT,
      throttle: made ? { mode: 'auto', store: made } : 'auto',
      logger: (line, entry) => logs.push({ line, entry }),
    });
    return { crm, logs };
  });
}

/** Creates `n` contacts split over the workers, all at once; the outcomes, as Promise.allSettled gives them. */
function job(list: Worker[], n: number, from = 0) {
  return Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      (list[i % list.length] as Worker).crm.contacts.create({
        firstName: 'Bulk',
        lastName: `${from + i}`,
        email: `bulk-${from + i}@shared.test`,
      }),
    ),
  );
}

/** What the fake holds and saw of the tenant: records, distinct emails, requests, refusals. */
function seen(server: { fake: FakeCrmCore }) {
  const contacts = server.fake.store.contactsOf(TENANT);
  const requests = server.fake.requests.filter((request) => request.headers['x-api-key'] === KEY);
  return {
    stored: contacts.length,
    distinct: new Set(contacts.map((contact) => contact.email)).size,
    requests: requests.length,
    refused: requests.filter((request) => request.status === 429).length,
  };
}

/** A step a store was asked for: a lease (with the phase it answered in), or the end of a phase. */
type Step = { call: 'reserve'; count: number; interval: number; phase: number } | { call: 'refuse' };

/** A store over `shared`, made usable by sharedPaceStore(), that writes each lease and refusal it is asked for to each of `logs`. */
function spied(shared: MemoryStore, ...logs: Step[][]): PaceStore {
  return sharedPaceStore({
    reserve: (key: string, count: number, interval: number) => {
      const lease = shared.reserve(key, count, interval);
      for (const log of logs) log.push({ call: 'reserve', count, interval, phase: lease.phase });
      return lease;
    },
    refuse: (key: string, phase: number, turn: number, pause: number) => {
      for (const log of logs) log.push({ call: 'refuse' });
      return shared.refuse(key, phase, turn, pause);
    },
    learn: (key: string, phase: number, learned: object) => shared.learn(key, phase, learned),
  });
}

const warnings = (worker: Worker) => worker.logs.filter(({ entry }) => entry.warning !== undefined);

describe('throttle: { mode: "auto", store: redisStore() }', () => {
  test('four workers sharing one Redis place every record once, with few refusals, and warn of nothing', async () => {
    const server = await limitedFake(100, 10);
    const prefix = `shared-${Math.random().toString(36).slice(2)}:`;
    const clients: Redis[] = [];
    const list = workers(server.url, 4, () => {
      const client = redis.client();
      clients.push(client);
      return redisStore(client, { prefix });
    });

    const settled = await job(list, 400);

    expect(settled.filter((result) => result.status === 'rejected')).toEqual([]);
    const { stored, distinct, requests, refused } = seen(server);
    expect(stored).toBe(400);
    expect(distinct).toBe(400);
    // Loose: one key paced as one learns the limit in a phase or two (a few dozen refusals at most
    // on an idle machine). Redis and the bucket run on real time here, so a machine busy enough to
    // stall the workers costs refusals (10.3 % with three busy loops and other tests beside it):
    // the bound is for a pace that is shared, not for the machine's speed.
    expect(refused / requests).toBeLessThan(0.2);
    expect(list.flatMap(warnings)).toEqual([]);
    // The pace went through Redis: the tenant's state is there, under the prefix.
    // (and the rate remembered past it, once a phase found one: rememberMs).
    const keys = await (clients[0] as Redis).keys(`${prefix}*`);
    expect(keys.filter((key) => /:(state|turns)$/.test(key))).toHaveLength(2);
  }, 60_000);

  test('a store of your own, made usable by sharedPaceStore(), paces the workers as one', async () => {
    const server = await limitedFake(100, 10);
    const calls: string[] = [];
    const inner = redisStore(redis.client(), { prefix: `own-${Math.random().toString(36).slice(2)}:` });
    const own = sharedPaceStore({
      reserve: (key: string, count: number, interval: number) => {
        calls.push('reserve');
        return inner.reserve(key, count, interval);
      },
      refuse: (key: string, phase: number, turn: number, pause: number) => inner.refuse(key, phase, turn, pause),
      learn: (key: string, phase: number, learned: object) => inner.learn(key, phase, learned),
    });
    const list = workers(server.url, 2, () => own);

    const settled = await job(list, 200);

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(seen(server).distinct).toBe(200);
    expect(calls.length).toBeGreaterThan(0);
  }, 60_000);

  test('after a refusal a worker asks the store for one turn before it paces again, so that the rate another worker learned meanwhile sets its pace', async () => {
    const server = await pacedFake(100, 10);
    const shared = new MemoryStore();
    const calls: Step[][] = [[], []];
    let made = 0;
    const list = workers(server.url, 2, () => spied(shared, calls[made++] as Step[]));

    const settled = await settle(job(list, 300));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(seen(server).distinct).toBe(300);
    const refusals = calls.flat().filter((each) => each.call === 'refuse');
    expect(refusals.length).toBeGreaterThan(0);
    for (const log of calls) {
      // The first lease, and the first after each refusal: one turn, nothing reserved after it.
      const asking = log.filter((each, i) => each.call === 'reserve' && (i === 0 || log[i - 1]?.call === 'refuse'));
      expect(asking.length).toBeGreaterThan(0);
      for (const each of asking)
        expect(each).toEqual({ call: 'reserve', count: 1, interval: 0, phase: expect.any(Number) });
    }
  }, 60_000);

  test('a worker whose lease shows that another worker was refused asks the store for one turn before it paces again', async () => {
    const server = await pacedFake(100, 10);
    const shared = new MemoryStore();
    // A rate the store remembers above the tenant's limit (lowered since): every worker leases at
    // it from the start, and one's refusal ends the phase while the others hold paced leases.
    // (With no rate known, one worker ramps alone and the others ask one turn at a time.)
    shared.learn(KEY, 0, { rate: 150 });
    const steps: Step[][] = [[], [], [], []];
    let made = 0;
    const list = workers(server.url, 4, () => spied(shared, steps[made++] as Step[]));

    const settled = await settle(job(list, 300));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(seen(server).distinct).toBe(300);
    // A paced lease answered in a phase after the one its worker knew: the worker's next lease asks.
    const leases = steps.map((log) => log.filter((each) => each.call === 'reserve'));
    const told = leases.flatMap((log) =>
      log.flatMap((each, i) => {
        const before = log[i - 1];
        const next = log[i + 1];
        const paced = !(each.count === 1 && each.interval === 0);
        return before && next && paced && each.phase > before.phase ? [next] : [];
      }),
    );
    expect(told.length).toBeGreaterThan(0);
    for (const next of told) expect({ count: next.count, interval: next.interval }).toEqual({ count: 1, interval: 0 });
  }, 60_000);

  test('while no rate is known one worker ramps, rising with its turns, and the others ask one turn at a time', async () => {
    const server = await pacedFake(200, 20);
    const shared = new MemoryStore();
    const log: Step[] = [];
    const own: Step[][] = [[], [], [], []];
    let made = 0;
    const list = workers(server.url, 4, () => spied(shared, log, own[made++] as Step[]));

    const settled = await settle(job(list, 400));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(seen(server).distinct).toBe(400);
    const ramp = log.slice(0, log.findIndex((each) => each.call === 'refuse') >>> 0);
    const paced = ramp.filter((each) => each.call === 'reserve' && each.interval !== 0);
    // The ramp's leases are one worker's, and rise with the turns given, from the first: none at
    // the starting 50/s (20 ms apart), the last past 200/s. (Four workers ramping together, the one
    // whose refusal ended the ramp placed the others' requests by their schedule: 203 to 220/s of
    // 200 found on W8's busy machine.)
    expect(paced.length).toBeGreaterThan(4);
    const intervals = paced.map((each) => (each.call === 'reserve' ? each.interval : Number.NaN));
    for (const interval of intervals) expect(interval).toBeLessThan(19);
    expect(Math.min(...intervals)).toBeLessThan(5);
    // The ramp is the first phase: the leases answered in phase 0.
    const rampOf = (steps: Step[]) => steps.filter((each) => each.call === 'reserve' && each.phase === 0);
    const ramping = own.filter((steps) => rampOf(steps).some((each) => each.call === 'reserve' && each.interval !== 0));
    expect(ramping).toHaveLength(1);
    // The others stood by: one turn at a time, a few times a second over the ramp's half-second.
    const standing = own.filter((steps) => !ramping.includes(steps)).map((steps) => rampOf(steps));
    for (const steps of standing) {
      for (const each of steps)
        if (each.call === 'reserve')
          expect({ count: each.count, interval: each.interval }).toEqual({ count: 1, interval: 0 });
      expect(steps.length).toBeLessThanOrEqual(3);
    }
  }, 60_000);

  test('a store that numbers its turns from far above 0 does not start the ramp in a burst: few requests are refused', async () => {
    const server = await pacedFake(100, 10);
    const shared = new MemoryStore();
    // Against the contract (turns are numbered from 0 in each phase): every turn 50,000 higher.
    const OFFSET = 50_000;
    const offset = () =>
      sharedPaceStore({
        reserve: (key: string, count: number, interval: number) => {
          const lease = shared.reserve(key, count, interval);
          return { ...lease, turn: lease.turn + OFFSET };
        },
        refuse: (key: string, phase: number, turn: number, pause: number) =>
          shared.refuse(key, phase, turn - OFFSET, pause)?.map((each) => ({ ...each, turn: each.turn + OFFSET })),
        learn: (key: string, phase: number, learned: object) => shared.learn(key, phase, learned),
      });
    const list = workers(server.url, 4, offset);

    const settled = await settle(job(list, 200));

    expect(settled.every((result) => result.status === 'fulfilled')).toBe(true);
    const { distinct, requests, refused } = seen(server);
    expect(distinct).toBe(200);
    // Counted from the store's turn numbers, the ramp started at 230,000/s: 917 of 1,117 refused.
    expect(refused).toBeLessThan(requests / 5);
  }, 60_000);

  test('a store not made by crm-integration-sdk/redis, or a misspelt mode, is refused at construction', () => {
    const plain = { reserve() {}, refuse() {}, learn() {} } as unknown as PaceStore;
    const make = (throttle: unknown) =>
      new CrmClient({ baseUrl: 'http://crm.test', apiKey: KEY, tenantId: TENANT, throttle: throttle as 'auto' });
    expect(() => make({ mode: 'auto', store: plain })).toThrow(
      /\{ mode: 'auto', store \} \(crm-integration-sdk\/redis\)/,
    );
    expect(() => make({ mode: 'on' })).toThrow(/Must be 'off', 'auto' or \{ mode: 'auto', store \}/);
    expect(() => make('fast')).toThrow(/throttle/);
    expect(() => make({ mode: 'auto' })).not.toThrow();
  });
});
