/**
 * An integration platform's nightly job: for each tenant, with that tenant's own API key, count
 * its active contacts. One client for every tenant: the calls share its connections and its
 * `maxConcurrency` slots, and the export runs with longer timeouts than the platform's other
 * calls.
 */
import type { CrmClient } from 'crm-integration-sdk';

/** Where the platform keeps each tenant's key (a vault, a database): here, anything with `read()`. */
export interface KeyStore {
  read(tenantId: string): Promise<string>;
}

export async function countActiveContacts(
  crm: CrmClient,
  tenantIds: readonly string[],
  keys: KeyStore,
): Promise<Record<string, number>> {
  const nightly = crm.withOptions({ timeout: 120_000, maxRetries: 5, headers: { 'x-job': 'nightly-count' } });
  const counts: Record<string, number> = {};
  await Promise.all(
    tenantIds.map(async (tenantId) => {
      // A function key is looked up once per call, with the call's tenant.
      const tenant = nightly.withTenant(tenantId, { apiKey: () => keys.read(tenantId) });
      let count = 0;
      for await (const _contact of tenant.contacts.list({ status: 'active', limit: 200 })) count += 1;
      counts[tenantId] = count;
    }),
  );
  return counts;
}
