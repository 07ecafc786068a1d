import { expect, test } from 'vitest';
import { makeClient } from '../support/capture';

// Guards "headers built once per client" (PERFORMANCE.md): calls with the client's defaults
// hand fetch the same headers object instead of building one each.

/** A fetch that answers every call at once and keeps the headers object each was given. */
function recordingFetch() {
  const seen: unknown[] = [];
  const fetch = async (_input: RequestInfo | URL, init?: RequestInit) => {
    seen.push(init?.headers);
    return Response.json({ success: true, data: { id: 'opp_1' } });
  };
  return { seen, fetch };
}

test('calls with the client defaults share one headers object, which holds the credentials', async () => {
  const { seen, fetch } = recordingFetch();
  const crm = makeClient({ fetch });

  await crm.opportunities.get('opp_1');
  await crm.opportunities.get('opp_2');

  expect(seen).toHaveLength(2);
  expect(seen[1]).toBe(seen[0]);
  expect(seen[0]).toMatchObject({ 'x-api-key': expect.any(String), 'x-tenant-id': expect.any(String) });
});

test('a call with headers of its own, and a client for another tenant, get objects of their own', async () => {
  const { seen, fetch } = recordingFetch();
  const crm = makeClient({ fetch });

  await crm.opportunities.get('opp_1');
  await crm.opportunities.get('opp_1', { headers: { 'x-trace': 't' } });
  await crm.withTenant('globex').opportunities.get('opp_1');

  expect(new Set(seen).size).toBe(3);
  expect(seen[1]).toMatchObject({ 'x-trace': 't' });
  expect(seen[2]).toMatchObject({ 'x-tenant-id': 'globex' });
});
