import { describe, expect, test, vi } from 'vitest';
import { makeClient } from '../support/capture';
import { bucket, contactsServer, created, refused, settle, usePacedClock, worstExcess } from '../support/paced';

/*
 * throttle: 'auto' in a long-lived process (a queue's worker): a job learns the key's rate, the key
 * is idle, then the next job comes. Idle time is not quiet time: it says nothing of the limit.
 */
usePacedClock();

describe("throttle: 'auto' after a key was idle", () => {
  test('a key idle for ten minutes after its rate was learned paces its next job at that rate, not all at once', {
    timeout: 60_000,
  }, async () => {
    const take = bucket(20, 2);
    const seen = contactsServer((index) => (take() ? created(index) : refused(1)));
    const crm = makeClient({ throttle: 'auto' });
    await settle(Promise.all(Array.from({ length: 80 }, (_, i) => crm.contacts.create({ email: `a${i}@x.io` }))));
    const firstJob = seen.length;

    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const results = await settle(
      Promise.all(Array.from({ length: 80 }, (_, i) => crm.contacts.create({ email: `b${i}@x.io` }))),
    );

    // The clock's ten minutes raised the pace to thousands a second: all 80 calls went within
    // 100 ms, and the bucket refused 78 of them.
    const next = seen.slice(firstJob);
    expect(results).toHaveLength(80);
    expect(next.filter((request) => request.status === 429).length).toBeLessThanOrEqual(2);
    expect(
      worstExcess(
        next.map((request) => request.at),
        20 * 1.05,
        2,
      ),
    ).toBeLessThanOrEqual(1);
  });

  test('a key refused whatever its pace through one job is tried again at its pace by the next job, ten minutes later, not all at once', {
    timeout: 60_000,
  }, async () => {
    let blocked = true;
    const take = bucket(20, 2);
    const seen = contactsServer((index) => (blocked || !take() ? refused(1) : created(index)));
    const crm = makeClient({ throttle: 'auto' });
    // A quota used up: every request refused, each call failing after its retries.
    const failed = await settle(
      Promise.allSettled(Array.from({ length: 40 }, (_, i) => crm.contacts.create({ email: `a${i}@x.io` }))),
      600_000,
    );
    expect(failed.every((result) => result.status === 'rejected')).toBe(true);
    const firstJob = seen.length;

    blocked = false;
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const results = await settle(
      Promise.all(Array.from({ length: 80 }, (_, i) => crm.contacts.create({ email: `b${i}@x.io` }))),
      600_000,
    );

    // Judged refused for good, the key sent the next job's 80 calls at once: 78 refused.
    const next = seen.slice(firstJob);
    expect(results).toHaveLength(80);
    expect(next.filter((request) => request.status === 429).length).toBeLessThanOrEqual(2);
    expect(
      worstExcess(
        next.map((request) => request.at),
        20 * 1.05,
        2,
      ),
    ).toBeLessThanOrEqual(1);
  });
});
