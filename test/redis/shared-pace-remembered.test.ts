import { http } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { memoryStore } from '../../src/redis/index';
import { API_KEY, makeClient, ok } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';
import { server } from '../support/msw-server';
import { bucket, refused, settle, usePacedClock } from '../support/paced';

/*
 * The pace remembered between a tenant's jobs (issue 48): job 1 learns the rate, the key is idle
 * for a day (its schedule forgotten after 15 minutes), and job 2 runs in a new process (a new
 * client) over the same store, as tomorrow night's worker over the same Redis would.
 */
usePacedClock();

const OTHER_BASE = 'https://sandbox.crm.test';
const DAY_MS = 24 * 3_600_000;

/** What the server saw: when each request arrived (fake ms) and whether it was refused. */
interface Arrival {
  readonly at: number;
  readonly refused: boolean;
}

/** Contact creates on both base URLs, limited by `limit.take` (swapped between jobs); every arrival recorded. */
function limitedServer(limit: { take: () => boolean }): Arrival[] {
  const arrivals: Arrival[] = [];
  const answer = () => {
    const accepted = limit.take();
    arrivals.push({ at: Date.now(), refused: !accepted });
    return accepted ? ok({ id: `con_${arrivals.length}`, email: 'x@x.io' }, {}, { status: 201 }) : refused('1');
  };
  const path = mswPath(endpoints.createContact);
  server.use(http.post(`https://crm.test${path}`, answer), http.post(`${OTHER_BASE}${path}`, answer));
  return arrivals;
}

/** `n` creates through a new client (a new process) on `store`: what the server saw of them. */
async function job(
  store: ReturnType<typeof memoryStore>,
  arrivals: Arrival[],
  n: number,
  options: { apiKey?: string; baseUrl?: string } = {},
) {
  const from = arrivals.length;
  const started = Date.now();
  const crm = makeClient({ throttle: { mode: 'auto', store }, maxRetries: 10, ...options });
  const settled = await settle(
    Promise.allSettled(Array.from({ length: n }, (_, i) => crm.contacts.create({ email: `c${from + i}@x.io` }))),
  );
  const seen = arrivals.slice(from);
  return {
    failed: settled.filter((result) => result.status === 'rejected').length,
    requests: seen.length,
    refused: seen.filter((each) => each.refused).length,
    /** Requests that arrived within the job's first second. */
    firstSecond: seen.filter((each) => each.at - started < 1000).length,
    refusedFirstSecond: seen.filter((each) => each.at - started < 1000 && each.refused).length,
  };
}

/** A day passes with the key unused: the store forgets its schedule (15 minutes), not its rate. */
const aDayLater = () => vi.advanceTimersByTimeAsync(DAY_MS);

describe('a rate remembered between jobs', () => {
  test('job 2, a day later in a new process, sends at the 200/s job 1 learned from its first request, and is refused nothing', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore();

    const first = await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(200, 20);
    const second = await job(store, arrivals, 400);

    // Cold, job 1 ramped up to the bucket and was refused there.
    expect(first.failed).toBe(0);
    expect(first.refused).toBeGreaterThan(0);
    // Warm from the store: nothing refused, and its first second held about the bucket's worth
    // (a burst of 20 and 200 a second), where job 1's held its ramp and a pause.
    expect(second.failed).toBe(0);
    expect(second.refused).toBe(0);
    expect(second.requests).toBe(400);
    expect(second.firstSecond).toBeGreaterThanOrEqual(180);
    expect(first.firstSecond).toBeLessThan(180);
  }, 180_000);

  test('a limit lowered to 100/s between the jobs costs job 2 no more refusals than a cold start at 100/s, and job 2 then keeps to it', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore();
    await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(100, 10);

    const second = await job(store, arrivals, 400);

    // A cold start against the same lowered limit, on a store of its own.
    await aDayLater();
    limit.take = bucket(100, 10);
    const cold = await job(memoryStore(), arrivals, 400);

    expect(second.failed).toBe(0);
    expect(second.refused).toBeGreaterThan(0);
    expect(second.refused).toBeLessThanOrEqual(Math.max(cold.refused, 3));
    // Corrected at its first refusal: the rest of the job kept under the new limit.
    expect(second.requests).toBeLessThanOrEqual(400 + Math.max(cold.refused, 3));
  }, 180_000);

  test('a rotated key starts cold: the rate learned with the old one is not used', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore();
    await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(200, 20);

    const rotated = await job(store, arrivals, 400, { apiKey: `${API_KEY}_rotated` });

    // Cold: the ramp, then a refusal at the bucket.
    expect(rotated.failed).toBe(0);
    expect(rotated.refused).toBeGreaterThan(0);
    expect(rotated.firstSecond).toBeLessThan(180);
  }, 180_000);

  test('a rate learned from another base URL (the same key) is not used', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore();
    await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(200, 20);

    const elsewhere = await job(store, arrivals, 400, { baseUrl: OTHER_BASE });

    expect(elsewhere.failed).toBe(0);
    expect(elsewhere.refused).toBeGreaterThan(0);
    expect(elsewhere.firstSecond).toBeLessThan(180);
  }, 180_000);

  test('with rememberMs: 0 the store forgets the rate with the schedule, and job 2 starts cold', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore({ rememberMs: 0 });
    await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(200, 20);

    const second = await job(store, arrivals, 400);

    expect(second.refused).toBeGreaterThan(0);
    expect(second.firstSecond).toBeLessThan(180);
  }, 180_000);

  test('a rate remembered is forgotten rememberMs after the key last used it', async () => {
    const limit = { take: bucket(200, 20) };
    const arrivals = limitedServer(limit);
    const store = memoryStore({ rememberMs: DAY_MS / 2 });
    await job(store, arrivals, 400);
    await aDayLater();
    limit.take = bucket(200, 20);

    const second = await job(store, arrivals, 400);

    expect(second.refused).toBeGreaterThan(0);
  }, 180_000);

  test.each([-1, 1.5, Number.NaN, '7d', 400 * DAY_MS])('memoryStore() refuses rememberMs %s', (rememberMs) => {
    expect(() => memoryStore({ rememberMs: rememberMs as number })).toThrow(/rememberMs must be a whole number/);
  });
});
