import { expect, test } from 'vitest';
import { makeClient } from '../support/capture';
import { usePacedClock, workersOnOneKey } from '../support/paced';

/*
 * throttle: 'auto' in each of several workers of one key, without a shared store: each is refused
 * for what the others sent, and pausing together they meet at each pause's end.
 */
usePacedClock();

// The old pacer took the key for refused whatever its pace at seeds 1 and 4: 42 and 182 of the 300
// creates failed, with 287 and 796 requests refused.
test.each([1, 2, 3, 4])(
  "four workers pacing one key alone, on a bucket of 2 at 20/s, place every create: three first turns refused in a row, at pauses' ends, do not fail their calls (seed %i)",
  async (seed) => {
    const workers = Array.from({ length: 4 }, () => makeClient({ throttle: 'auto' }));
    const { settled, rejected, answers } = await workersOnOneKey(workers, 75, seed);

    expect(settled).toBe(true);
    expect(rejected).toEqual([]);
    expect(answers.filter((status) => status === 201)).toHaveLength(300);
    expect(answers.filter((status) => status === 429).length).toBeLessThan(100);
  },
);
