import { afterEach, describe, expect, test } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/server';
import { FakeStore } from '../../src/testing/store';

/* The fake's store as CSV, as a CRM's export gives it: what crm sync resolve --match reads (issue 46, 3). */

describe('store.exportCsv()', () => {
  test("holds an id column and the fields as the API names them, one row per record of the tenant's, quoted where it must be", () => {
    const store = new FakeStore(() => new Date('2026-01-01T00:00:00Z'), 'acme');
    store.insertAccount({ id: 'acc_1', name: 'Acme, "the" Ltd', industry: 'Retail', annualRevenue: 1200 });
    store.insertAccount({ id: 'acc_2', name: ' Beta\nLine', website: 'https://beta.example' });
    store.insertAccount({ id: 'acc_3', name: 'Other tenant', tenantId: 'globex' });

    const [header, ...rows] = store.exportCsv('accounts').split('\r\n');
    const columns = String(header).split(',');
    expect(columns[0]).toBe('id');
    expect(columns).toEqual(expect.arrayContaining(['name', 'industry', 'annualRevenue', 'website', 'owner_name']));
    expect(columns).not.toContain('tenantId');
    const text = rows.join('\r\n');
    expect(text).toContain('"Acme, ""the"" Ltd"');
    expect(text).toContain('" Beta\nLine"');
    expect(text).not.toContain('Other tenant');
    expect(store.exportCsv('accounts', 'globex')).toMatch(/^acc_3,.*Other tenant/m);
  });

  test('exports each type, and refuses another', () => {
    const store = new FakeStore();
    const account = store.insertAccount({ name: 'A' });
    store.insertContact({ email: 'a@example.test', accountId: account.id });
    expect(store.exportCsv('contacts')).toMatch(/^id,.*email.*\r\ncon_\w+,.*a@example\.test/s);
    expect(store.exportCsv('opportunities')).toBe('id\r\n');
    expect(() => store.exportCsv('deals' as never)).toThrow(RangeError);
  });
});

describe('GET /_fake/export/<type>.csv of crm-fake', () => {
  let server: FakeCrmServer;
  afterEach(async () => server.close());

  test("answers the tenant's export with its key, 401 without it, 404 for another type, and is not in the request log", async () => {
    server = await startFakeCrmServer();
    const { tenantId, apiKey } = server.fake.credentials;
    server.fake.store.insertAccount({ name: 'Acme' });
    const url = `${server.url}/_fake/export/accounts.csv?tenantId=${tenantId}`;

    const ok = await fetch(url, { headers: { 'x-api-key': String(apiKey) } });
    expect([ok.status, ok.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
    expect(await ok.text()).toBe(server.fake.store.exportCsv('accounts'));
    const byHeader = await fetch(`${server.url}/_fake/export/accounts.csv`, {
      headers: { 'x-api-key': String(apiKey), 'x-tenant-id': tenantId },
    });
    expect(byHeader.status).toBe(200);
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    expect(
      (await fetch(`${server.url}/_fake/export/deals.csv`, { headers: { 'x-api-key': String(apiKey) } })).status,
    ).toBe(404);
    expect(server.fake.requests).toEqual([]);
  });
});
