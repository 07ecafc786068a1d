import { expect, test, vi } from 'vitest';
import { CrmClient } from '../../src/index';
import { okOpportunity } from '../support/waits';

/*
 * An apiKey function (a vault, a secrets manager) is a resource of its own: with maxConcurrency,
 * no more look-ups run at once than calls may.
 */

test('with maxConcurrency 2, no more than 2 apiKey look-ups run at once, and 20 calls all succeed', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const pending: (() => void)[] = [];
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_vault',
    maxConcurrency: 2,
    apiKey: () => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise<string>((resolve) => {
        pending.push(() => {
          inFlight -= 1;
          resolve('key_from_the_vault');
        });
      });
    },
    fetch: async () => okOpportunity(),
  });

  const calls = Array.from({ length: 20 }, () => crm.opportunities.get('opp_1'));
  const all = Promise.all(calls);
  // The test answers the look-ups one at a time, as a slow vault would.
  for (let answered = 0; answered < 20; answered++) {
    await vi.waitFor(() => expect(pending.length).toBeGreaterThan(0), { timeout: 5000, interval: 2 });
    pending.shift()?.();
  }
  const results = await all;

  expect(maxInFlight).toBeLessThanOrEqual(2);
  expect(results).toEqual(Array(20).fill({ id: 'opp_1' }));
});
