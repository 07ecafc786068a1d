import { expect, test } from 'vitest';
import { CrmClient, CrmTimeoutError } from '../../src/index';
import { okOpportunity } from '../support/waits';

/*
 * A custom `fetch` (a wrapper, an instrumentation, a test double) that does not listen to the
 * signal it is given, and never answers. The attempt's timeout must still end the attempt, and
 * the maxConcurrency slot it held must be given back, as with a fetch that honours its signal.
 */

/** A fetch whose first `hung` calls never settle, whatever their signal does; the others answer. */
function deafFetch(hung: number) {
  const seen = { calls: 0 };
  const fetch = (_input: RequestInfo | URL, _init?: RequestInit): Promise<Response> => {
    seen.calls += 1;
    return seen.calls <= hung ? new Promise<Response>(() => {}) : Promise.resolve(okOpportunity());
  };
  return { seen, fetch };
}

test('a first attempt whose fetch ignores its signal ends at its timeout, and its slot is given back', async () => {
  const { seen, fetch } = deafFetch(1);
  const crm = new CrmClient({
    baseUrl: 'http://deaf.invalid',
    apiKey: 'key_deaf',
    tenantId: 'tenant_deaf',
    maxConcurrency: 1,
    maxRetries: 0,
    timeout: 20,
    fetch,
  });

  const error = await crm.opportunities.get('opp_1').catch((failure: unknown) => failure);
  const next = await crm.opportunities.get('opp_1');

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect((error as Error).message).toBe('No response within 20 ms: GET /integrations/v1/opportunities/opp_1');
  expect(next).toEqual({ id: 'opp_1' });
  expect(seen.calls).toBe(2);
});

test('a retry (sent through ky) whose fetch ignores its signal ends at its timeout and is retried', async () => {
  let calls = 0;
  const crm = new CrmClient({
    baseUrl: 'http://deaf.invalid',
    apiKey: 'key_deaf',
    tenantId: 'tenant_deaf',
    maxConcurrency: 1,
    maxRetries: 2,
    timeout: 20,
    fetch: () => {
      calls += 1;
      // The first attempt fails at once; the first retry never answers; the second retry succeeds.
      if (calls === 1) return Promise.reject(new TypeError('fetch failed'));
      if (calls === 2) return new Promise<Response>(() => {});
      return Promise.resolve(okOpportunity());
    },
  });

  expect(await crm.opportunities.get('opp_1')).toEqual({ id: 'opp_1' });
  expect(calls).toBe(3);
});

test('a fetch that ignores its signal and rejects after the timeout leaves no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  let reject: (reason: unknown) => void = () => {};
  try {
    const crm = new CrmClient({
      baseUrl: 'http://deaf.invalid',
      apiKey: 'key_deaf',
      tenantId: 'tenant_deaf',
      maxRetries: 0,
      timeout: 20,
      fetch: () =>
        new Promise<Response>((_, no) => {
          reject = no;
        }),
    });

    await expect(crm.opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmTimeoutError);
    reject(new TypeError('fetch failed, late'));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  expect(unhandled).toEqual([]);
});
