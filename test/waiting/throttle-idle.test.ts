import { describe, test } from 'vitest';
import { makeClient } from '../support/capture';
import { expectPacedByTheBucket, twoJobsTenMinutesApart, usePacedClock } from '../support/paced';

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
    expectPacedByTheBucket(await twoJobsTenMinutesApart(makeClient({ throttle: 'auto' }), quotaUsedUp));
  });
});
