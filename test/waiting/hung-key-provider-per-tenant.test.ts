import { expect, test } from 'vitest';
import { CrmClient, CrmTimeoutError } from '../../src/index';
import { nextTurn, okOpportunity } from '../support/waits';

/*
 * With maxConcurrency, an apiKey function's look-ups have places of their own, held until the
 * function answers. A vault shard that hangs is an ordinary outage: four look-ups of one tenant
 * that never settle held every place, and every other tenant's calls then waited forever. The
 * places are now counted per tenant: a hung provider costs its own tenant's calls only.
 */

/** A provider whose look-ups for `tenant_hung` never settle, and which counts the look-ups started per tenant. */
function vaultWithAHungShard() {
  const started = new Map<string, number>();
  const apiKey = ({ tenantId }: { tenantId: string }) => {
    started.set(tenantId, (started.get(tenantId) ?? 0) + 1);
    return tenantId === 'tenant_hung' ? new Promise<string>(() => {}) : Promise.resolve(`key_${tenantId}`);
  };
  return { started, apiKey };
}

test('four hung look-ups of one tenant, with maxConcurrency 4, do not stop another tenant calls', async () => {
  const { started, apiKey } = vaultWithAHungShard();
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_ok',
    maxConcurrency: 4,
    apiKey,
    fetch: async () => okOpportunity(),
  });

  // No deadline and no signal: these calls never give up.
  for (let i = 0; i < 4; i++) void crm.withTenant('tenant_hung').opportunities.get('opp_1');
  await nextTurn();
  expect(started.get('tenant_hung')).toBe(4);

  // totalTimeout only keeps a failing run from hanging: it is generous, and the call must not need it.
  const calls = ['tenant_ok', 'tenant_other', 'tenant_ok'].map((tenant) =>
    crm.withTenant(tenant).opportunities.get('opp_1', { totalTimeout: 3_000 }),
  );

  expect(await Promise.all(calls)).toEqual([{ id: 'opp_1' }, { id: 'opp_1' }, { id: 'opp_1' }]);
  expect(started.get('tenant_ok')).toBe(2);
  expect(started.get('tenant_other')).toBe(1);
});

test('a fifth call of the hung tenant waits for a place of its own tenant: its look-up is never started', async () => {
  const { started, apiKey } = vaultWithAHungShard();
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_hung',
    maxConcurrency: 4,
    apiKey,
    fetch: async () => okOpportunity(),
  });
  for (let i = 0; i < 4; i++) void crm.opportunities.get('opp_1');
  await nextTurn();

  const fifth = await crm.opportunities.get('opp_1', { totalTimeout: 50 }).catch((error: unknown) => error);

  expect(fifth).toBeInstanceOf(CrmTimeoutError);
  expect((fifth as Error).message).toContain('waiting for the apiKey function');
  expect(started.get('tenant_hung')).toBe(4);
});

test('with maxConcurrency 2, each tenant runs at most 2 look-ups at once, and every call succeeds', async () => {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const pending: (() => void)[] = [];
  const crm = new CrmClient({
    baseUrl: 'http://waiting.invalid',
    tenantId: 'tenant_a',
    maxConcurrency: 2,
    apiKey: ({ tenantId }) => {
      running.set(tenantId, (running.get(tenantId) ?? 0) + 1);
      most.set(tenantId, Math.max(most.get(tenantId) ?? 0, running.get(tenantId) ?? 0));
      return new Promise<string>((resolve) => {
        pending.push(() => {
          running.set(tenantId, (running.get(tenantId) ?? 0) - 1);
          resolve(`key_${tenantId}`);
        });
      });
    },
    fetch: async () => okOpportunity(),
  });

  const calls = ['tenant_a', 'tenant_b'].flatMap((tenant) =>
    Array.from({ length: 6 }, () => crm.withTenant(tenant).opportunities.get('opp_1')),
  );
  const all = Promise.all(calls);
  for (let answered = 0; answered < 12; answered++) {
    while (pending.length === 0) await nextTurn();
    pending.shift()?.();
  }

  expect(await all).toHaveLength(12);
  expect(Object.fromEntries(most)).toEqual({ tenant_a: 2, tenant_b: 2 });
});
