import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';
import { API_KEY, BASE_URL, capture, ok, TENANT } from './support/capture';

// `npm test` builds dist/ before running the suite; these tests load the built entries as a consumer would.
type Entry = typeof import('../src/index');
const require = createRequire(import.meta.url);

const entries: [string, () => Promise<Entry>][] = [
  ['the ESM entry (import)', async () => (await import('../dist/index.js')) as unknown as Entry],
  ['the CJS entry (require)', async () => require('../dist/index.cjs') as Entry],
];

describe.each(entries)('%s', (_name, load) => {
  test('exports the client, the errors and the schemas', async () => {
    const sdk = await load();
    expect(typeof sdk.CrmClient).toBe('function');
    expect(typeof sdk.CrmNotFoundError).toBe('function');
    expect(typeof sdk.isCrmError).toBe('function');
    expect(sdk.OpportunitySchema.safeParse({ id: 'o1' }).success).toBe(true);
  });

  test('makes a real call and maps a 404 to CrmNotFoundError', async () => {
    const sdk = await load();
    const seen = capture('get', '/integrations/v1/opportunities/:id', (_request, index) =>
      index === 0 ? ok({ id: 'o1', name: 'Deal' }) : new Response('{"message":"gone"}', { status: 404 }),
    );
    const crm = new sdk.CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT });

    await expect(crm.opportunities.get('o1')).resolves.toEqual({ id: 'o1', name: 'Deal' });
    const error = await crm.opportunities.get('o2').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(sdk.CrmNotFoundError);
    expect(sdk.isCrmApiError(error)).toBe(true);
    expect(seen[0]?.url.searchParams.get('tenantId')).toBe(TENANT);
  });
});
