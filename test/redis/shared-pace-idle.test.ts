import { describe, expect, test, vi } from 'vitest';
import { Pacers } from '../../src/internal/waiting/pacer';
import { memoryStore } from '../../src/redis/index';
import { makeClient } from '../support/capture';
import { expectPacedByTheBucket, twoJobsTenMinutesApart, usePacedClock, worstExcess } from '../support/paced';

/*
 * Workers sharing a pace through a store, in long-lived processes: a job, the key idle, the next
 * job. Idle time is not quiet time: it says nothing of the limit.
 */
usePacedClock();

const KEY = 'sk_idle_5d1e2f3a4b5c6d7e8f9a';

describe('a shared pace after the key was idle', () => {
  test('four workers whose key was idle for ten minutes pace their next job at the rate the store learned: no interval of t gets more than burst + rate × t', async () => {
    const store = memoryStore();
    // The store knows the key's rate: 200/s (a burst of 20, a tenth of a second of it).
    await store.learn(KEY, 0, { rate: 200, ceiling: 200, quietMs: 30_000 });
    const pacers = Array.from({ length: 4 }, () => new Pacers(undefined).of(KEY, store));
    const job = (given: number[]) => {
      for (const pacer of pacers)
        for (let i = 0; i < 100; i++)
          void pacer.turn(false, undefined, undefined).then((ticket) => {
            pacer.sent(ticket);
            given.push(performance.now());
            pacer.learned(ticket, 200, new Headers(), 60_000);
          });
    };
    const first: number[] = [];
    job(first);
    await vi.advanceTimersByTimeAsync(5000);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const next: number[] = [];
    job(next);
    await vi.advanceTimersByTimeAsync(5000);

    // Counted by the clock, the ten minutes raised the pace past any limit: the 400 calls went
    // within 100 ms, 380 over the bucket.
    expect(first).toHaveLength(400);
    expect(next).toHaveLength(400);
    expect(
      worstExcess(
        next.sort((a, b) => a - b),
        200,
        20,
      ),
    ).toBeLessThanOrEqual(0);
  });

  test('a key refused whatever its pace through one job is tried again at its pace by the next job, ten minutes later, not all at once', {
    timeout: 60_000,
  }, async () => {
    const crm = makeClient({ throttle: { mode: 'auto', store: memoryStore() } });

    // Judged refused for good, the key sent the next job's 80 calls at once: 79 refused.
    expectPacedByTheBucket(await twoJobsTenMinutesApart(crm, true));
  });
});
