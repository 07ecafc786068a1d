import { inspect } from 'node:util';
import { HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { CrmAbortError } from '../../src/index';
import { API_KEY, makeClient, rejection } from '../support/capture';
import { contactsServer, created, refused, type Seen, settle, usePacedClock, within } from '../support/paced';

/* Adversarial tests of throttle: 'auto' (issue 19), on the fake clock, as in test/waiting/throttle.test.ts. */
usePacedClock();

describe("throttle: 'auto' under Retry-After, refusals and deadlines", () => {
  test('a retry that waits out a Retry-After longer than `timeout` is placed, as with throttle off', async () => {
    // Retry-After 5 s, per-attempt timeout 2 s. With 'off' ky waits 5 s between attempts, outside the
    // attempt's timeout. With 'auto' the retry waits for its turn inside ky's fetch, so the pause
    // counts against the attempt's timeout and the create fails with CrmTimeoutError.
    const seen = contactsServer((index) => (index === 0 ? refused('5') : created(index)));
    const crm = makeClient({ throttle: 'auto', timeout: 2000 });

    const result = await settle(crm.contacts.create({ email: 'a@x.io' }).catch((error: unknown) => error));

    expect(result).toMatchObject({ id: 'con_1' });
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
  });

  test('a 429 on the very first request of a phase does not collapse the pace to 1 request a second', async () => {
    // The bucket was drained by someone else (another process with the same key) when the job
    // starts: the first request is refused, every later one accepted. rateOf([t]) is ~0.1, so the
    // pacer paces at Math.max(1, …) = 1 request a second, for 30 s, then +10%, +20%, …
    const seen = contactsServer((index) => (index === 0 ? refused('1') : created(index)));
    const crm = makeClient({ throttle: 'auto' });
    // The first create alone: refused, then placed after 1 s.
    await settle(crm.contacts.create({ email: 'first@x.io' }));

    const job = Promise.all(Array.from({ length: 100 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` })));
    const { settled, elapsed } = await within(job, 120_000);

    expect(settled).toBe(true);
    // A server that accepts everything after one 1 s pause: 100 creates take about 1 s, not ~80 s.
    expect(elapsed).toBeLessThan(10_000);
    expect(seen.filter((request) => request.status === 200)).toHaveLength(101);
  }, 60_000);

  test('a server that refuses everything: paced calls fail about as soon as with throttle off', async () => {
    // Off: each create fails after maxRetries (2) retries, ~3 s. Auto: each create is retried up to
    // 22 times, the pace collapses to 1/s (every phase's first request is refused), so 20 creates
    // take ~20 x 23 pauses of 1 s; 1,000 creates (a bulk job against an exhausted quota) take hours.
    contactsServer(() => refused('1'));
    const off = makeClient({ throttle: 'off', maxRetries: 2 });
    const offJob = Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => off.contacts.create({ email: `o${i}@x.io` })),
    );
    const offRun = await within(offJob, 600_000, 100);
    expect(offRun.settled).toBe(true);

    const auto = makeClient({ throttle: 'auto', maxRetries: 2 });
    const autoJob = Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => auto.contacts.create({ email: `a${i}@x.io` })),
    );
    const autoRun = await within(autoJob, 600_000, 250);
    expect(autoRun.settled).toBe(true);
    // Generous: ten times what throttle off took.
    expect(autoRun.elapsed).toBeLessThan(Math.max(30_000, offRun.elapsed * 10));
  }, 60_000);

  test('with maxConcurrency, no call of the key goes out while the key is paused for Retry-After', async () => {
    // The turn is taken (pacers.admit) before the maxConcurrency slot (limiter.run): calls that got
    // their turn before the refusal, and then waited for a slot, go out during the pause.
    const seen = contactsServer((index) => (index === 1 ? refused('5') : created(index)), 200);
    const crm = makeClient({ throttle: 'auto', maxConcurrency: 2 });

    await settle(Promise.all(Array.from({ length: 10 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` }))));

    const refusal = seen.find((request) => request.status === 429) as Seen;
    // The refusal is answered `latency` after it arrived; the pause runs from then.
    const answered = refusal.at + 200;
    const during = seen.filter((request) => request.at > answered && request.at < answered + 5000);
    expect(during.map((request) => request.email)).toEqual([]);
    expect(seen.filter((request) => request.status === 200)).toHaveLength(10);
  }, 30_000);

  test('totalTimeout shorter than Retry-After: the caller gets the server hint at once, as with throttle off', async () => {
    // Off: retry-policy's outlastsDeadline stops at once with the 429 (CrmRateLimitError, retryAfter).
    // Auto: the bare copy's Retry-After is 0, so outlastsDeadline never fires; the call sits in the
    // pacer's queue until the deadline and ends as a CrmTimeoutError, the hint lost.
    contactsServer(() => refused('60'));
    const off = await settle(
      rejection(makeClient({ throttle: 'off' }).contacts.create({ email: 'a@x.io' }, { totalTimeout: 5000 })),
    );
    contactsServer(() => refused('60'));
    const started = Date.now();
    const auto = await settle(
      rejection(makeClient({ throttle: 'auto' }).contacts.create({ email: 'b@x.io' }, { totalTimeout: 5000 })),
    );
    const elapsed = Date.now() - started;

    expect(auto.constructor).toBe(off.constructor);
    expect(elapsed).toBeLessThan(1000);
  });
});

describe("throttle: 'auto' with aborts, deadlines, POSTs and other options", () => {
  test('abort while a retry waits for its turn: CrmAbortError at once, nothing more sent', async () => {
    const seen = contactsServer(() => refused('60'));
    const crm = makeClient({ throttle: 'auto' });
    const controller = new AbortController();
    const call = rejection(crm.contacts.create({ email: 'a@x.io' }, { signal: controller.signal }));
    // Until the first attempt has been refused: the retry then waits out its 60 s.
    for (let i = 0; i < 100 && seen.length === 0; i++) await vi.advanceTimersByTimeAsync(100);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    expect(await settle(call, 1000)).toBeInstanceOf(CrmAbortError);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(seen).toHaveLength(1);
  });

  test('totalTimeout while a retry waits for its turn: a timeout, at the deadline', async () => {
    const seen = contactsServer(() => refused('30'));
    const crm = makeClient({ throttle: 'auto', timeout: 60_000, maxRetryAfter: 60_000 });
    const started = Date.now();
    const error = await settle(rejection(crm.contacts.create({ email: 'a@x.io' }, { totalTimeout: 40_000 })));
    // Either the hint at once or a timeout by the deadline; never past it.
    expect(Date.now() - started).toBeLessThanOrEqual(41_000);
    expect(error).toBeInstanceOf(Error);
    expect(seen.length).toBeLessThanOrEqual(2);
  });

  test.each([
    ['an HTTP date 10 s ahead, capped by maxRetryAfter', () => new Date(Date.now() + 10_000).toUTCString(), 2000],
    ['a malformed value', () => 'soon', 1000],
    ['a negative value', () => '-5', 1000],
    ['a huge value, capped by maxRetryAfter', () => '99999999999', 2000],
    ['no Retry-After at all', () => undefined, 1000],
  ])('a 429 with %s: the create is placed once, after a bounded pause', async (_, value, pause) => {
    const seen = contactsServer((index) => (index === 0 ? refused(value()) : created(index)));
    const crm = makeClient({ throttle: 'auto', maxRetryAfter: 2000 });
    const { settled } = await within(crm.contacts.create({ email: 'a@x.io' }), 30_000);
    expect(settled).toBe(true);
    expect(seen.map((request) => request.status)).toEqual([429, 200]);
    expect((seen[1] as Seen).at - (seen[0] as Seen).at).toBeGreaterThanOrEqual(pause - 1);
    expect((seen[1] as Seen).at - (seen[0] as Seen).at).toBeLessThan(pause + 9000);
  });

  test('a POST answered 503 without Retry-After, or 500, is not replayed under auto', async () => {
    const seen = contactsServer(() => HttpResponse.json({ success: false }, { status: 503 }));
    const crm = makeClient({ throttle: 'auto' });
    await settle(rejection(crm.contacts.create({ email: 'a@x.io' })));
    expect(seen).toHaveLength(1);
  });

  test('a POST answered 503 with Retry-After is retried and placed once', async () => {
    const seen = contactsServer((index) => (index === 0 ? refused('1', 503) : created(index)));
    const crm = makeClient({ throttle: 'auto' });
    expect(await settle(crm.contacts.create({ email: 'a@x.io' }))).toMatchObject({ id: 'con_1' });
    expect(seen.map((request) => request.status)).toEqual([503, 200]);
  });

  test("throttle 'off' is unchanged: a 429 uses up maxRetries", async () => {
    const seen = contactsServer(() => refused('1'));
    const crm = makeClient({ throttle: 'off', maxRetries: 2 });
    await settle(rejection(crm.contacts.create({ email: 'a@x.io' })));
    expect(seen).toHaveLength(3);
  });

  test("withOptions({ throttle: 'auto' }) paces, and a key from an apiKey function is paced per key", async () => {
    const seen = contactsServer((index) => (index === 0 ? refused('2') : created(index)));
    const crm = makeClient().withOptions({ throttle: 'auto' });
    await settle(Promise.all(Array.from({ length: 5 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` }))));
    const refusal = seen[0] as Seen;
    // Those sent before the refusal was answered were already on their way; none after, before 2 s.
    const later = seen.slice(1).filter((request) => request.at > refusal.at + 50);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((request) => request.at >= refusal.at + 2000)).toBe(true);

    const keyed = makeClient({ throttle: 'auto', apiKey: async () => 'key_from_lookup' });
    const more = contactsServer((index) => created(index));
    await settle(Promise.all(Array.from({ length: 3 }, (_, i) => keyed.contacts.create({ email: `k${i}@x.io` }))));
    expect(more).toHaveLength(3);
  });

  test('the key is not shown by inspecting a paced client, nor in the error of a refused call', async () => {
    contactsServer(() => refused('1'));
    const crm = makeClient({ throttle: 'auto', maxRetries: 0 });
    const error = await settle(rejection(crm.contacts.create({ email: 'a@x.io' })));
    expect(inspect(crm, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });
});
