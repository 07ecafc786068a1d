import { beforeAll, describe, expect, test } from 'vitest';
import { makeClient } from '../support/capture';
import { expectRetriesAndProbesOnly, refusedThroughout, usePacedClock } from '../support/paced';

/*
 * throttle: 'auto' against a server that accepts nothing (issue 45, 8): its refusals cost each
 * call time, at a pace that falls, and the server sees each call's attempts and the key's probes,
 * not a storm. On the fake clock, as in throttle.test.ts.
 */
usePacedClock();
// A first retry imports ky, the one real await of a call: loaded before the clock stands.
beforeAll(() => import('../../src/internal/exchange/ky'));

/**
 * 50 calls of one client (maxRetries 2) against a server refusing each with `retryAfter`: they
 * fail with the rate-limit error after their own attempts and the key's probes, and each call's
 * waits between its requests are more than nothing, never shorter than the one before.
 */
async function expectFiftyCallsHeldBack(retryAfter: string | undefined): Promise<void> {
  const storm = await refusedThroughout([makeClient({ throttle: 'auto', maxRetries: 2 })], 50, retryAfter);

  expectRetriesAndProbesOnly(storm, 2);
  for (const times of storm.byCall) {
    const waits = times.slice(1).map((at, i) => at - (times[i] as number));
    for (let i = 0; i < waits.length; i++) {
      expect(waits[i]).toBeGreaterThan(0);
      if (i > 0) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1] as number);
    }
  }
}

describe("throttle: 'auto' against a server that refuses every request", () => {
  // The old pacer took each of these refusals for a pause of nothing, and its calls' refusals for
  // turns to wait rather than retries: 50 calls sent 1,150 requests within 50 ms, 23 a call.
  test.each([
    ['Retry-After: 0', '0'],
    ['Retry-After: an HTTP date in the past', 'Thu, 01 Jan 1970 00:00:00 GMT'],
    ['Retry-After: 0.0000001', '0.0000001'],
  ])(
    "%s: 50 calls fail with the rate-limit error after at most maxRetries + 1 requests each, beside the key's probes, and each refusal costs a call time, never less than the one before",
    {
      timeout: 60_000,
    },
    async (_, retryAfter) => {
      await expectFiftyCallsHeldBack(retryAfter);
    },
  );

  // Held before too (a refusal that does not say how long pauses the key 1 s): kept as a guard.
  test("no Retry-After: 50 calls fail with the rate-limit error after at most maxRetries + 1 requests each, beside the key's probes a second apart", {
    timeout: 60_000,
  }, async () => {
    await expectFiftyCallsHeldBack(undefined);
  });

  test('answered 100 ms after they arrive, so that several are on their way at once: 50 calls fail after at most maxRetries + 1 requests each, beside the probes', {
    timeout: 60_000,
  }, async () => {
    const storm = await refusedThroughout([makeClient({ throttle: 'auto', maxRetries: 2 })], 50, '0', 100);

    expectRetriesAndProbesOnly(storm, 2);
  });
});
