import { expect, test } from 'vitest';
import { CrmRateLimitError } from '../../src/index';
import { clientFor, failure, OPP_ID, OPP_PATH, reply, useFaultServer } from '../support/fault-server';

const fault = useFaultServer();

for (const value of [`1${'0'.repeat(21)}`, `1${'0'.repeat(400)}`, '99999999999']) {
  test(`R4 Retry-After of ${value.length} digits outlasting totalTimeout ends at once with CrmRateLimitError`, async () => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(429, 'slow down', { 'retry-after': value }));
    const { error, elapsed } = await failure(clientFor(fault(), { totalTimeout: 2_000 }).opportunities.get(OPP_ID));
    const seen = fault().received('GET', OPP_PATH).length;
    expect(
      error,
      `${(error as Error).name}: ${(error as Error).message}; requests=${seen}; elapsed=${Math.round(elapsed)}`,
    ).toBeInstanceOf(CrmRateLimitError);
    expect(elapsed, `requests=${seen}`).toBeLessThan(500);
  });
}
