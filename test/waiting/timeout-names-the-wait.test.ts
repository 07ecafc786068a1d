import { describe, expect, test, vi } from 'vitest';
import { CrmTimeoutError } from '../../src/index';
import { clientFor, failure, OPP_ID, OPP_PATH, reply, useFaultServer } from '../support/fault-server';

/*
 * A call whose totalTimeout passes before it is sent says what it was waiting for: a slot, its
 * turn at the rate limit, or its key. On a real socket for the first two.
 */

const fault = useFaultServer();

describe('a call that times out before it is sent names what it waited for', () => {
  test('waiting for a maxConcurrency slot that another call holds', async () => {
    fault().script('GET', OPP_PATH, reply.hang());
    const crm = clientFor(fault(), { maxConcurrency: 1 });
    const holder = new AbortController();
    const holding = crm.opportunities.get(OPP_ID, { signal: holder.signal }).catch(() => undefined);
    try {
      await fault().waitForRequests(1);

      const { error } = await failure(crm.opportunities.get(OPP_ID, { totalTimeout: 200 }));

      expect(error).toBeInstanceOf(CrmTimeoutError);
      expect((error as Error).message).toContain('queued for a maxConcurrency slot');
    } finally {
      holder.abort();
      await holding;
    }
  });

  test("waiting for its turn at the rate limit after a 429, with no maxConcurrency, says so and not 'maxConcurrency'", async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(429, 'slow down', { 'retry-after': '60' }));
    const crm = clientFor(fault(), { throttle: 'auto' });
    const first = new AbortController();
    const refused = crm.opportunities.get(OPP_ID, { signal: first.signal }).catch(() => undefined);
    try {
      await fault().waitForRequests(1);
      await vi.waitFor(() => expect(fault().requests[0]?.status).toBe(429), { timeout: 5000, interval: 5 });

      const { error } = await failure(crm.opportunities.get(OPP_ID, { totalTimeout: 200 }));

      expect(error).toBeInstanceOf(CrmTimeoutError);
      expect((error as Error).message).toContain('queued for its turn at the rate limit');
      expect((error as Error).message).not.toContain('maxConcurrency');
      expect(fault().requests).toHaveLength(1);
    } finally {
      first.abort();
      await refused;
    }
  });

  test('waiting for an apiKey function that never resolves', async () => {
    const crm = clientFor(fault(), { apiKey: () => new Promise<string>(() => {}) });

    const { error } = await failure(crm.opportunities.get(OPP_ID, { totalTimeout: 200 }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect((error as Error).message).toContain('waiting for the apiKey function');
    expect(fault().requests).toHaveLength(0);
  });
});
