import { beforeAll, describe, expect, test } from 'vitest';
import { memoryStore } from '../../src/redis/index';
import { makeClient } from '../support/capture';
import { expectRetriesAndProbesOnly, refusedThroughout, usePacedClock } from '../support/paced';

/*
 * Workers sharing a key's pace through a store, against a server that accepts nothing (issue 45,
 * 8): the same rules as throttle: 'auto' in one process (test/waiting/throttle-refusal-storm.test.ts).
 */
usePacedClock();
beforeAll(() => import('../../src/internal/exchange/ky'));

describe('a shared pace against a server that refuses every request', () => {
  // The old shared pacer waited out each worker's refusals as turns, and took the key for refused
  // whatever its pace only where a phase's first turn was refused: the workers given the later
  // turns never did, and sent each call 23 times.
  test.each([
    ['Retry-After: 0', '0', 0],
    ['Retry-After: an HTTP date in the past', 'Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Retry-After: 0.0000001', '0.0000001', 0],
    ['no Retry-After', undefined, 0],
    ['Retry-After: 0, answered 100 ms after', '0', 100],
  ] as const)(
    "%s: four workers' 50 calls fail with the rate-limit error after at most maxRetries + 1 requests each, beside the key's probes, and each refusal costs a call time",
    {
      timeout: 60_000,
    },
    async (_, retryAfter, latencyMs) => {
      const store = memoryStore();
      const workers = Array.from({ length: 4 }, () => makeClient({ throttle: { mode: 'auto', store }, maxRetries: 2 }));
      const storm = await refusedThroughout(workers, 50, retryAfter, latencyMs);

      expectRetriesAndProbesOnly(storm, 2);
      for (const times of storm.byCall)
        for (let i = 1; i < times.length; i++)
          expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(250);
    },
  );
});
