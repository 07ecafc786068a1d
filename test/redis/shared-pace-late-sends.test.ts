import { describe, expect, test, vi } from 'vitest';
import type { PaceLearned } from '../../src/core/pace-store';
import { memoryStore } from '../../src/redis/index';
import { bucket, sharedJob, usePacedClock } from '../support/paced';

/*
 * Four workers sharing a pace through a store, each sending its requests some time after their
 * turns: a busy worker (a journal's work between the turn and the send, a lease's answer read
 * late), as W8's were on a loaded machine. The worker whose refusal ends the ramp knows when its
 * own requests went, and the others' only by their schedule.
 */
usePacedClock();

const KEY = 'sk_late_7a6b5c4d3e2f1a0b9c8d';

/** The store of a job, and the rates its pacers tell it, in order. */
function recordingStore() {
  const store = memoryStore();
  const rates: number[] = [];
  const learn = store.learn.bind(store);
  store.learn = (key: string, phase: number, learned: PaceLearned) => {
    if (learned.rate !== undefined) rates.push(learned.rate);
    return learn(key, phase, learned);
  };
  return { store, rates };
}

describe('a shared pace whose requests go late after their turns', () => {
  test("the rate the ramp's refusal finds is the bucket's, when every worker's requests go 25 ms after their turns", async () => {
    const { store, rates } = recordingStore();
    const sent = sharedJob(store, KEY, 4, 150, bucket(200, 20), { lateMs: 25 });
    await vi.advanceTimersByTimeAsync(2000);
    expect(sent.some((s) => !s.accepted)).toBe(true);
    // Taken as sent on schedule, the others' requests went before the one that ran the bucket dry,
    // and the bucket refilled twice over the same time: 129/s, kept for 30 s.
    expect(rates[0]).toBeGreaterThan(200 * 0.95);
    expect(rates[0]).toBeLessThan(200 * 1.05);
  });

  test("on a slow bucket (20/s, a burst of 2), the rate found is the bucket's too", async () => {
    const { store, rates } = recordingStore();
    const sent = sharedJob(store, KEY, 4, 25, bucket(20, 2), { lateMs: 25 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(sent.some((s) => !s.accepted)).toBe(true);
    // 17.6/s before: a job paced 12% under its limit.
    expect(rates[0]).toBeGreaterThan(20 * 0.95);
    expect(rates[0]).toBeLessThan(20 * 1.05);
  });

  test('a job of 2,240 requests against 200/s is refused at its ramp only, and takes at most 1.12x the ideal', async () => {
    const { store } = recordingStore();
    const calls = 2240;
    const sent = sharedJob(store, KEY, 4, calls / 4, bucket(200, 20), { lateMs: 25 });
    let elapsed = 0;
    while (sent.filter((s) => s.accepted).length < calls && elapsed < 60_000) {
      await vi.advanceTimersByTimeAsync(100);
      elapsed += 100;
    }
    const refused = sent.filter((s) => !s.accepted);
    const pauses = refused.filter((s, i) => i === 0 || s.at - (refused[i - 1] as (typeof refused)[number]).at > 500);
    expect(pauses).toHaveLength(1);
    // 18.4 s before (1.65x): the rest of the job paced at the 129/s found.
    expect(elapsed / 1000).toBeLessThanOrEqual(((calls - 20) / 200) * 1.12);
  });
});
