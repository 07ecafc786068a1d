import { describe, expect, test } from 'vitest';
import { makeClient } from '../support/capture';
import { twoJobsTenMinutesApart, usePacedClock, worstExcess } from '../support/paced';

/*
 * throttle: 'auto' in a long-lived process (a queue's worker): a job, the key idle, then the next
 * job. Idle time is not quiet time: it says nothing of the limit.
 */
usePacedClock();

describe("throttle: 'auto' after a key was idle", () => {
  // The old pacer sent the next job's 80 calls within 100 ms, and the bucket refused 78 of them:
  // the clock's ten minutes raised the pace to thousands a second, or the key was judged refused
  // for good.
  test.each([
    ['a key idle for ten minutes after its rate was learned paces its next job at that rate', false],
    ['a key refused whatever its pace through one job is tried again at its pace by the next job', true],
  ])('%s, not all at once', { timeout: 60_000 }, async (_, quotaUsedUp) => {
    const { results, next } = await twoJobsTenMinutesApart(makeClient({ throttle: 'auto' }), quotaUsedUp);

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
