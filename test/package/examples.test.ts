import { describe, expect, test } from 'vitest';
import { exportContactsAsNdjson } from '../../examples/export-contacts-ndjson';
import { countActiveContacts } from '../../examples/many-tenants';
import { endpoints } from '../../src/endpoints';
import { capture, makeClient, ok } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

describe('examples/export-contacts-ndjson', () => {
  test('writes every contact of every page as one JSON line, asking 200 at a time', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
      const data = page === 1 ? [{ id: 'c1', email: 'a@x.io' }, { id: 'c2' }] : [{ id: 'c3' }];
      return ok(data, { pagination: { page, limit: 200, total: 3, pages: 2 } });
    });
    const lines: string[] = [];

    const count = await exportContactsAsNdjson(makeClient(), (line) => lines.push(line));

    expect(count).toBe(3);
    expect(lines.map((line) => JSON.parse(line))).toEqual([{ id: 'c1', email: 'a@x.io' }, { id: 'c2' }, { id: 'c3' }]);
    expect(lines.every((line) => line.endsWith('\n') && !line.slice(0, -1).includes('\n'))).toBe(true);
    expect(seen.map((r) => [r.url.searchParams.get('limit'), r.url.searchParams.get('page')])).toEqual([
      ['200', null],
      ['200', '2'],
    ]);
  });
});

describe('examples/many-tenants', () => {
  test("counts each tenant's contacts with that tenant's own key, tagged with the job's header", async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), (request) => {
      const tenant = request.headers.get('x-tenant-id') ?? '';
      return ok(
        Array.from({ length: tenant === 'acme' ? 2 : 1 }, (_, i) => ({ id: `${tenant}_${i}` })),
        { pagination: { page: 1, limit: 200, total: 2, pages: 1 } },
      );
    });
    const vault: Record<string, string> = { acme: 'key_live_acme_1', globex: 'key_live_globex_2' };

    const counts = await countActiveContacts(makeClient({ maxConcurrency: 2 }), ['acme', 'globex'], {
      read: async (tenantId) => vault[tenantId] as string,
    });

    expect(counts).toEqual({ acme: 2, globex: 1 });
    const sent = seen.map((r) => [r.headers.get('x-tenant-id'), r.headers.get('x-api-key'), r.headers.get('x-job')]);
    expect(sent.sort()).toEqual([
      ['acme', 'key_live_acme_1', 'nightly-count'],
      ['globex', 'key_live_globex_2', 'nightly-count'],
    ]);
    expect(seen.every((r) => r.url.searchParams.get('status') === 'active')).toBe(true);
  });
});
