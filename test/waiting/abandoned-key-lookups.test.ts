import { expect, test } from 'vitest';
import { CrmAbortError, CrmClient, CrmTimeoutError } from '../../src/index';
import { nextTurn, okOpportunity } from '../support/waits';

/*
 * An apiKey function cannot be cancelled: it is given no signal. A call that stops waiting for
 * it (its signal aborts, its totalTimeout passes) leaves it running, so its place among the
 * maxConcurrency look-ups is taken until the function answers: otherwise calls that give up one
 * after another start look-ups one after another, and a slow vault gets as many at once as
 * there are calls.
 */

/** An apiKey function whose look-ups the test answers, and which counts those running. */
function slowVault() {
  const vault = { running: 0, most: 0, started: 0, pending: [] as (() => void)[] };
  const apiKey = () => {
    vault.started += 1;
    vault.running += 1;
    vault.most = Math.max(vault.most, vault.running);
    return new Promise<string>((resolve) => {
      vault.pending.push(() => {
        vault.running -= 1;
        resolve('key_from_the_vault');
      });
    });
  };
  return { vault, apiKey };
}

test('with maxConcurrency 1, a look-up its call gave up on still holds its place until the function answers', async () => {
  const { vault, apiKey } = slowVault();
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_vault',
    maxConcurrency: 1,
    apiKey,
    fetch: async () => okOpportunity(),
  });

  // Three calls give up, one after another, while the vault has not answered the first look-up.
  const outcomes: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    const controller = new AbortController();
    const call = crm.opportunities.get('opp_1', { signal: controller.signal });
    await nextTurn();
    controller.abort();
    outcomes.push(await call.catch((error: unknown) => error));
  }
  const timedOut = await crm.opportunities.get('opp_1', { totalTimeout: 20 }).catch((error: unknown) => error);

  expect(outcomes.map((each) => each instanceof CrmAbortError)).toEqual([true, true, true]);
  expect(timedOut).toBeInstanceOf(CrmTimeoutError);
  expect(vault.started).toBe(1);
  expect(vault.most).toBe(1);

  // The vault answers the abandoned look-up: the place is free again, and the next call looks its key up.
  vault.pending.shift()?.();
  const call = crm.opportunities.get('opp_1');
  while (vault.pending.length === 0) await nextTurn();
  vault.pending.shift()?.();

  expect(await call).toEqual({ id: 'opp_1' });
  expect(vault.started).toBe(2);
  expect(vault.most).toBe(1);
});

test('an apiKey function that throws synchronously gives its place back at once', async () => {
  let calls = 0;
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_vault',
    maxConcurrency: 1,
    apiKey: () => {
      calls += 1;
      if (calls === 1) throw new Error('vault sealed');
      return 'key_from_the_vault';
    },
    fetch: async () => okOpportunity(),
  });

  await expect(crm.opportunities.get('opp_1')).rejects.toThrow('The apiKey function failed');
  expect(await crm.opportunities.get('opp_1', { totalTimeout: 1000 })).toEqual({ id: 'opp_1' });
});
