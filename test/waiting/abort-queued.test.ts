import { expect, test, vi } from 'vitest';
import { CrmAbortError, CrmClient } from '../../src/index';
import { hang, nextTurn, refused } from '../support/waits';

/*
 * One signal shared by 2,000 calls that wait, and one abort(): every call lets go with
 * CrmAbortError, behind a maxConcurrency slot and behind a pacer's pause alike.
 */

const CALLS = 2_000;

const rejections = async (calls: readonly Promise<unknown>[]): Promise<unknown[]> =>
  (await Promise.allSettled(calls)).map((result) => (result.status === 'rejected' ? result.reason : result.value));

test('2,000 calls queued behind maxConcurrency 1 on one signal all reject with CrmAbortError at one abort, the queued ones "while queued"', async () => {
  let fetched = 0;
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    apiKey: 'key_queue',
    tenantId: 'tenant_queue',
    maxConcurrency: 1,
    fetch: (_url, init) => {
      fetched += 1;
      return hang(init);
    },
  });
  const controller = new AbortController();
  const calls = Array.from({ length: CALLS }, () => crm.opportunities.get('opp_1', { signal: controller.signal }));
  const outcomes = rejections(calls);
  await vi.waitFor(() => expect(fetched).toBe(1), { timeout: 10_000, interval: 5 });
  await nextTurn();

  controller.abort();
  const errors = await outcomes;

  expect(errors.every((error) => error instanceof CrmAbortError)).toBe(true);
  const queued = errors.filter((error) => (error as Error).message.includes('while queued'));
  expect(queued).toHaveLength(CALLS - 1);
  expect(fetched).toBe(1);
});

test('2,000 calls waiting out a pacer pause after a 429 on one signal all reject with CrmAbortError at one abort, and only the refused request was sent', async () => {
  let fetched = 0;
  let refusedOne = false;
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    apiKey: 'key_paced',
    tenantId: 'tenant_paced',
    throttle: 'auto',
    fetch: (_url, init) => {
      fetched += 1;
      if (fetched > 1) return hang(init);
      refusedOne = true;
      return Promise.resolve(refused(60));
    },
  });
  const controller = new AbortController();
  const calls = Array.from({ length: CALLS }, () => crm.opportunities.get('opp_1', { signal: controller.signal }));
  const outcomes = rejections(calls);
  await vi.waitFor(() => expect(refusedOne).toBe(true), { timeout: 10_000, interval: 5 });
  await nextTurn();

  controller.abort();
  const errors = await outcomes;

  expect(errors.every((error) => error instanceof CrmAbortError)).toBe(true);
  expect(fetched).toBe(1);
});
