import { expect, test } from 'vitest';
import type { PaceStore } from '../../src/core/pace-store';
import { memoryStore } from '../../src/redis/index';
import { makeClient } from '../support/capture';
import { usePacedClock, workersOnOneKey } from '../support/paced';

/*
 * Workers whose shared store is down pace their key alone, each refused for what the others sent;
 * pausing together, they meet at each pause's end. A key refused whatever its pace looks alike for
 * a few phases: only time tells them apart.
 */
usePacedClock();

/** A store whose every command fails, as Redis down does: each worker paces its key alone. */
const downStore = (): PaceStore => {
  const down = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
  return Object.assign(memoryStore(), { reserve: down, refuse: down, learn: down });
};

// Seeds where the old pacer flooded: 164, 207 and 187 of the requests refused.
test.each([1, 2, 8])(
  "four workers with their store down, on a bucket of 2 at 20/s, place every create at the bucket's pace: meeting at a pause's end is not a key refused whatever its pace (seed %i)",
  async (seed) => {
    const workers = Array.from({ length: 4 }, () =>
      makeClient({ throttle: { mode: 'auto', store: downStore() }, logger: () => {} }),
    );
    const { settled, rejected, answers } = await workersOnOneKey(workers, 75, seed);

    expect(settled).toBe(true);
    expect(rejected).toEqual([]);
    expect(answers.filter((status) => status === 201)).toHaveLength(300);
    // Paced, not sent at once: W6 at 20/s with Redis down has 14% refused; a third is the bound.
    expect(answers.filter((status) => status === 429).length).toBeLessThan(100);
  },
);
