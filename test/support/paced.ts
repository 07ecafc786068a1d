import { delay, HttpResponse, http } from 'msw';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import type { CrmClient } from '../../src/client';
import type { PaceStore } from '../../src/core/pace-store';
import { endpoints } from '../../src/endpoints';
import { CrmRateLimitError } from '../../src/index';
import { Pacers } from '../../src/internal/waiting/pacer';
import { ok } from './capture';
import { urlOf } from './endpoint-paths';
import { server } from './msw-server';

/*
 * throttle: 'auto' on the fake clock: the pacer's waits and pace are timers and performance.now(),
 * which vitest advances, against MSW's contact creates.
 */

/** Fakes the clock around each test. */
export function usePacedClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** What the server saw of a create: when it arrived (fake ms), its key and email, and what it answered. */
export interface Seen {
  readonly at: number;
  readonly key: string | null;
  readonly email: string;
  readonly status: number;
}

/** Answers contact creates with `answer(index, key)`, after `latencyMs`, recording each request. */
export function contactsServer(answer: (index: number, key: string | null) => Response, latencyMs = 0): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.post(urlOf(endpoints.createContact), ({ request }) => {
      // Numbered, answered and recorded as it arrives, and answered at once without a latency: no
      // await before, so that the order and the times are the server's, and a refusal is heard at once.
      const key = request.headers.get('x-api-key');
      const response = answer(seen.length, key);
      const record = { at: Date.now(), key, email: '', status: response.status };
      seen.push(record);
      void request.json().then((body) => {
        record.email = (body as { email: string }).email;
      });
      return latencyMs ? delay(latencyMs).then(() => response) : response;
    }),
  );
  return seen;
}

/** A refusal: 429 (or `status`), with `Retry-After` when given. */
export const refused = (retryAfter?: number | string, status = 429) =>
  HttpResponse.json(
    { success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } },
    { status, headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) } },
  );

/** A create that succeeded. */
export const created = (index: number) => ok({ id: `con_${index}`, email: `c${index}@x.io` });

/** Runs the fake clock in steps until `promise` settles or `ms` pass; says whether and when it settled. */
export async function within(
  promise: Promise<unknown>,
  ms: number,
  step = 50,
): Promise<{ settled: boolean; elapsed: number }> {
  let done = false;
  const mark = () => {
    done = true;
  };
  promise.then(mark, mark);
  const start = Date.now();
  for (let waited = 0; !done && waited < ms; waited += step) await vi.advanceTimersByTimeAsync(step);
  return { settled: done, elapsed: Date.now() - start };
}

/** Runs the fake clock until `promise` settles (at most `ms`), and gives its outcome. */
export async function settle<T>(promise: Promise<T>, ms = 120_000): Promise<T> {
  await within(promise, ms);
  return promise;
}

/** The most of `times` (ms, sorted) within any interval of length t, over the bound burst + rate * t. */
export function worstExcess(times: readonly number[], rate: number, burst: number): number {
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < times.length; i++)
    for (let j = i; j < times.length; j++) {
      const t = ((times[j] as number) - (times[i] as number)) / 1000;
      worst = Math.max(worst, j - i + 1 - (burst + rate * t));
    }
  return worst;
}

/** A token bucket on the fake clock, refilled at `perSecond` up to `burst`: `take()` says whether a request arriving now is accepted. */
export function bucket(perSecond: number, burst: number): () => boolean {
  let tokens = burst;
  let at = performance.now();
  return () => {
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - at) / 1000) * perSecond);
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/**
 * `creates` contact creates from each of `workers` (clients of one key, each pacing it in its own
 * transport, as processes do) against a bucket of 2 at 20/s, answered after 15 to 30 ms drawn from
 * a generator seeded by `seed` (so the workers' pauses end a little apart, as in real runs).
 * Resolves to the creates' outcomes and the server's answers, in order.
 */
export async function workersOnOneKey(
  workers: readonly CrmClient[],
  creates: number,
  seed: number,
): Promise<{ settled: boolean; rejected: unknown[]; answers: number[] }> {
  let state = seed;
  const latency = () => {
    state = (state * 16807) % 2147483647;
    return 15 + (state / 2147483647) * 15;
  };
  const take = bucket(20, 2);
  const answers: number[] = [];
  server.use(
    http.post(urlOf(endpoints.createContact), async ({ request }) => {
      const { email } = (await request.json()) as { email: string };
      const accepted = take();
      answers.push(accepted ? 201 : 429);
      await delay(latency());
      return accepted ? ok({ id: `con_${answers.length}`, email }, {}, { status: 201 }) : refused('1');
    }),
  );
  const job = Promise.allSettled(
    workers.flatMap((crm, w) =>
      Array.from({ length: creates }, (_, i) => crm.contacts.create({ email: `w${w}-${i}@x.io` })),
    ),
  );
  const { settled } = await within(job, 300_000, 250);
  const rejected = (await job).flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  return { settled, rejected, answers };
}

/** A request of sharedJob(): which worker sent it, when (fake ms), and whether the bucket took it. */
export interface Sent {
  readonly worker: number;
  readonly at: number;
  accepted?: boolean;
}

/**
 * `workers` pacers of `key` over one store, each with `calls` calls, each call retried until the
 * bucket (`take`) accepts it; every request answered after `latencyMs`, a refusal with
 * `Retry-After: 1`. `lateMs`: how long after its turn each request goes (a busy worker's work
 * between the two: a journal's, an event loop's), the time the pacer is told (`sent()`): the
 * same for every worker, or by worker (0 to `workers - 1`).
 */
export function sharedJob(
  store: PaceStore,
  key: string,
  workers: number,
  calls: number,
  take: () => boolean,
  { latencyMs = 20, lateMs = 0 }: { latencyMs?: number; lateMs?: number | ((worker: number) => number) } = {},
): Sent[] {
  const sent: Sent[] = [];
  for (let worker = 0; worker < workers; worker++) {
    const pacer = new Pacers(undefined).of(key, store);
    const call = async (): Promise<void> => {
      for (;;) {
        const ticket = await pacer.turn(false, undefined, undefined);
        const late = typeof lateMs === 'number' ? lateMs : lateMs(worker);
        if (late > 0) await new Promise((resolve) => setTimeout(resolve, late));
        pacer.sent(ticket);
        const request: Sent = { worker, at: performance.now() };
        sent.push(request);
        const accepted = take();
        request.accepted = accepted;
        await new Promise((resolve) => setTimeout(resolve, latencyMs));
        const headers = accepted ? new Headers() : new Headers({ 'retry-after': '1' });
        pacer.learned(ticket, accepted ? 201 : 429, headers, 60_000);
        if (accepted) return;
      }
    };
    for (let i = 0; i < calls; i++) void call();
  }
  return sent;
}

/**
 * A long-lived worker's two jobs of 80 creates on one key, ten minutes apart, against a bucket of
 * 2 at 20/s: the first job's requests all refused when `quotaUsedUp` (its calls fail after their
 * retries), else paced by it. Resolves to the second job's results and what the server saw of it.
 */
export async function twoJobsTenMinutesApart(
  crm: CrmClient,
  quotaUsedUp: boolean,
): Promise<{ results: unknown[]; next: Seen[] }> {
  let blocked = quotaUsedUp;
  const take = bucket(20, 2);
  const seen = contactsServer((index) => (blocked || !take() ? refused(1) : created(index)));
  const job = (name: string) =>
    Promise.allSettled(Array.from({ length: 80 }, (_, i) => crm.contacts.create({ email: `${name}${i}@x.io` })));
  const first = await settle(job('a'), 600_000);
  if (first.some((result) => (result.status === 'rejected') !== quotaUsedUp))
    throw new Error('the first job went otherwise');
  const firstJob = seen.length;
  blocked = false;
  await vi.advanceTimersByTimeAsync(10 * 60_000);
  const second = await settle(job('b'), 600_000);
  return {
    results: second.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
    next: seen.slice(firstJob),
  };
}

/**
 * Asserts that the second job of twoJobsTenMinutesApart() was paced by the bucket, 2 at 20/s: all
 * 80 created, at most 2 refused, and no interval of t with more than one request over 2 + 21 t.
 */
export function expectPacedByTheBucket({ results, next }: { results: unknown[]; next: Seen[] }): void {
  expect(results).toHaveLength(80);
  expect(next.filter((request) => request.status === 429).length).toBeLessThanOrEqual(2);
  expect(
    worstExcess(
      next.map((request) => request.at),
      20 * 1.05,
      2,
    ),
  ).toBeLessThanOrEqual(1);
}

/** What a server that refuses everything saw of a job: each call's requests (when they arrived, fake ms). */
export interface Storm {
  readonly byCall: readonly (readonly number[])[];
  readonly total: number;
  readonly elapsed: number;
  readonly results: readonly PromiseSettledResult<unknown>[];
}

/**
 * `calls` contact creates at once, spread over `clients` (workers of one key), against a server
 * that answers every request 429 with `Retry-After: retryAfter` (none when undefined), after
 * `latencyMs`. Runs the fake clock until every call has settled.
 */
export async function refusedThroughout(
  clients: readonly CrmClient[],
  calls: number,
  retryAfter: string | undefined,
  latencyMs = 0,
): Promise<Storm> {
  const seen = contactsServer(() => refused(retryAfter), latencyMs);
  const start = Date.now();
  const job = Promise.allSettled(
    Array.from({ length: calls }, (_, i) =>
      (clients[i % clients.length] as CrmClient).contacts.create({ email: `c${i}@x.io` }),
    ),
  );
  const { settled } = await within(job, 600_000, 250);
  if (!settled) throw new Error('the calls did not settle within 10 minutes');
  const results = await job;
  // The emails are read after the requests were counted: by now, every body has been.
  await vi.advanceTimersByTimeAsync(0);
  const byCall = Array.from({ length: calls }, (_, i) =>
    seen.filter((request) => request.email === `c${i}@x.io`).map((request) => request.at),
  );
  return { byCall, total: seen.length, elapsed: Date.now() - start, results };
}

/**
 * A key's probes, a few at first, then one a second at most: what a server that accepts nothing
 * may see beside each call's own attempts, over `elapsedMs`.
 */
const probesWithin = (elapsedMs: number): number => 4 + elapsedMs / 1000;

/**
 * Asserts what issue 45 (8) asks of a server that accepts nothing: every call fails with the
 * rate-limit error, and the server saw at most `maxRetries + 1` requests a call, beside the key's
 * probes (probesWithin() the time the calls took), each call's and all of them together.
 */
export function expectRetriesAndProbesOnly(storm: Storm, maxRetries: number): void {
  const { byCall, total, elapsed, results } = storm;
  for (const result of results) {
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(CrmRateLimitError);
  }
  const probes = probesWithin(elapsed);
  expect(Math.max(...byCall.map((times) => times.length))).toBeLessThanOrEqual(maxRetries + 1 + probes);
  expect(total).toBeLessThanOrEqual(byCall.length * (maxRetries + 1) + probes);
}
