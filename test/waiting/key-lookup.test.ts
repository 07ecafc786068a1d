import { getEventListeners } from 'node:events';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CrmError, CrmTimeoutError } from '../../src/index';
import { captureAll, makeClient } from '../support/capture';
import { CONTACTS_PATH, clientFor, reply, useFaultServer } from '../support/fault-server';

beforeEach(() => {
  vi.stubEnv('CRM_API_KEY', undefined);
  vi.stubEnv('CRM_TENANT_ID', undefined);
});

describe('an apiKey look-up that never settles', () => {
  it('leaves no abort listener on a long-lived signal once totalTimeout has failed the call', async () => {
    captureAll();
    const appSignal = new AbortController().signal; // e.g. a process-wide shutdown signal
    const crm = makeClient({ apiKey: () => new Promise<string>(() => {}) });

    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => crm.opportunities.get('opp_1', { signal: appSignal, totalTimeout: 5 })),
    );

    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof CrmTimeoutError)).toBe(true);
    expect(getEventListeners(appSignal, 'abort')).toHaveLength(0);
  });
});

const fault = useFaultServer();

describe('an apiKey function failing on page 2 of a for await loop', () => {
  async function loopTenantContacts(crm: ReturnType<typeof clientFor>, prefetch: number) {
    const ids: string[] = [];
    for await (const c of crm.contacts.list({ limit: 1 }, { prefetch })) ids.push(c.id);
    return ids;
  }
  const page = (n: number) =>
    reply.ok([{ id: `con_${n}` }], { extra: { pagination: { page: n, limit: 1, total: 3, pages: 3 } } });

  it.each([0, 1])('with prefetch %i: CrmError with the cause, caller frame in the stack', async (prefetch) => {
    fault().script('GET', CONTACTS_PATH, page(1), page(2), page(3));
    let calls = 0;
    const crm = clientFor(fault(), {
      apiKey: async () => {
        calls += 1;
        if (calls === 2) throw new Error('vault sealed on page 2');
        return 'key_live_paged_1';
      },
    });

    let error: Error | undefined;
    try {
      await loopTenantContacts(crm, prefetch);
    } catch (e) {
      error = e as Error;
    }

    expect(error).toBeInstanceOf(CrmError);
    expect(((error as Error).cause as Error).message).toBe('vault sealed on page 2');
    expect(error?.stack).toContain('loopTenantContacts');
  });
});
