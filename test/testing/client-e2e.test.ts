import { describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmConnectionError, CrmNotFoundError, CrmServerError, CrmValidationError } from '../../src/index';
import { type FakeCrmCore, generateFakeData, startFakeCrmServer } from '../../src/testing/index';
import { type Harness, overRealSockets, startedServer, throughMsw } from '../support/fake-harness';

/*
 * The SDK client end to end against the fake: once through MSW, once over real sockets to
 * startFakeCrmServer(). Every scenario runs on both.
 */

/** A client holding the fake's current credentials. */
const clientOf = ({ fake, baseUrl }: Harness, options: { maxRetries?: number } = {}) =>
  new CrmClient({ ...fake.credentials, baseUrl, ...options });

const endpointsCalled = (fake: FakeCrmCore) => fake.requests.map((r) => `${r.endpoint} ${r.status}`);

describe.each([
  ['MSW', throughMsw],
  ['a real server', overRealSockets],
])('the client against the fake through %s', (_transport, start) => {
  test('the integration flow runs end to end: key, account, contacts, opportunity, activities, update', async () => {
    const harness = await start({ apiKey: null });
    const { fake, baseUrl } = harness;

    const admin = new CrmClient({ baseUrl, adminToken: fake.adminToken });
    expect(await admin.apiKey.status()).toMatchObject({ tenantId: fake.tenantId, hasKey: false });
    const generated = await admin.apiKey.generate();
    expect(generated.apiKey).toEqual(expect.any(String));
    expect(fake.credentials.apiKey).toBe(generated.apiKey);

    const crm = new CrmClient({ baseUrl, tenantId: fake.tenantId, apiKey: String(generated.apiKey) });
    const account = await crm.accounts.create({ name: 'Acme Ltd', status: 'prospect', country: 'GB' });
    const ada = await crm.contacts.create({ accountId: account.id, firstName: 'Ada', lastName: 'Lovelace' });
    await crm.contacts.create({ accountId: account.id, firstName: 'Grace', email: 'grace@acme.test' });
    const opportunity = await crm.opportunities.create({
      name: 'Acme renewal',
      accountId: account.id,
      contactId: ada.id,
      amount: 12_000,
      expectedCloseDate: new Date('2027-01-31T00:00:00Z'),
    });
    await crm.activities.create({ opportunityId: opportunity.id, type: 'call', subject: 'Discovery call' });
    await crm.activities.create({
      opportunityId: opportunity.id,
      type: 'meeting',
      subject: 'Demo',
      activityDate: '2026-05-04T10:00:00Z',
    });
    const updated = await crm.opportunities.update(opportunity.id, { stage: 'negotiation', probability: 60 });

    expect(ada.account_name).toBe('Acme Ltd');
    expect(updated).toMatchObject({
      id: opportunity.id,
      stage: 'negotiation',
      probability: 60,
      amount: 12_000,
      expectedCloseDate: '2027-01-31T00:00:00.000Z',
      account: 'Acme Ltd',
      contact: 'Ada Lovelace',
      activitiesCount: 2,
    });
    const contacts = await crm.contacts.list();
    expect(contacts.data.map((c) => c.firstName)).toEqual(['Ada', 'Grace']);
    expect(fake.store.activities.size).toBe(2);
    expect(endpointsCalled(fake)).toEqual([
      'apiKeyStatus 200',
      'generateApiKey 201',
      'createAccount 201',
      'createContact 201',
      'createContact 201',
      'createOpportunity 201',
      'createActivity 201',
      'createActivity 201',
      'updateOpportunity 200',
      'listContacts 200',
    ]);
  });

  test('for await pages through 450 activities with three requests of 200', async () => {
    const harness = await start({ seed: generateFakeData({ seed: 3, opportunities: 1, activities: 450 }) });
    const crm = clientOf(harness);
    const seen: string[] = [];
    for await (const activity of crm.activities.list({ opportunityId: 'tenant_demo_g3_opp_0', limit: 200 }))
      seen.push(activity.id);
    expect(seen).toHaveLength(450);
    expect(new Set(seen).size).toBe(450);
    expect(seen[0]).toBe('tenant_demo_g3_act_0');
    expect(seen.at(-1)).toBe('tenant_demo_g3_act_449');
    const pages = harness.fake.requests.filter((r) => r.endpoint === 'listActivities');
    expect(pages.map((r) => [r.query.page, r.query.limit, r.status])).toEqual([
      [undefined, '200', 200],
      ['2', '200', 200],
      ['3', '200', 200],
    ]);
  });

  test("the default grant 'grant_demo' is resolved", async () => {
    const harness = await start();
    const grant = await clientOf(harness).grants.resolve('grant_demo');
    expect(grant).toMatchObject({ grantId: 'grant_demo', tenantId: harness.fake.tenantId, status: 'active' });
  });

  test("an unknown id surfaces as CrmNotFoundError carrying the fake's error body", async () => {
    const harness = await start();
    const error = await clientOf(harness)
      .opportunities.get('opp_missing')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toMatchObject({
      status: 404,
      body: { success: false, error: { code: 'NOT_FOUND' } },
    });
  });

  test('an opportunity whose id must be percent-encoded is read by the client', async () => {
    const harness = await start({
      seed: {
        accounts: [{ id: 'acc_1', tenantId: 'tenant_demo', name: 'Acme' }],
        opportunities: [{ id: 'Q3 deal/EMEA', tenantId: 'tenant_demo', name: 'Awkward', accountId: 'acc_1' }],
      },
    });
    const opportunity = await clientOf(harness).opportunities.get('Q3 deal/EMEA');
    expect(opportunity).toMatchObject({ id: 'Q3 deal/EMEA', name: 'Awkward' });
  });

  test('a request the client refuses is refused by the fake too, with 400 naming the same fields', async () => {
    const harness = await start({ seed: generateFakeData({ seed: 5, opportunities: 1, activities: 0 }) });
    const { fake, baseUrl } = harness;
    const input = { opportunityId: 'tenant_demo_g5_opp_0', type: 'call' as const, subject: 'x'.repeat(256) };

    const refused = await clientOf(harness)
      .activities.create(input)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(CrmValidationError);
    expect((refused as CrmValidationError).issues.map((i) => i.field)).toEqual(['subject']);
    expect(fake.requests).toEqual([]);

    const response = await fetch(`${baseUrl}/integrations/v1/activities`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': String(fake.credentials.apiKey) },
      body: JSON.stringify({ tenantId: fake.tenantId, ...input }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      success: false,
      error: { code: 'VALIDATION_ERROR', details: [{ field: 'subject' }] },
    });
    expect(fake.store.activities.size).toBe(0);
  });

  test('a GET answered 503 with Retry-After: 0 is retried by the client and succeeds', async () => {
    const harness = await start({ seed: generateFakeData({ seed: 2, opportunities: 1, activities: 0 }) });
    harness.fake.failNext({ endpoint: 'getOpportunity', status: 503, retryAfter: 0, times: 2 });
    const opportunity = await clientOf(harness).opportunities.get('tenant_demo_g2_opp_0');
    expect(opportunity.id).toBe('tenant_demo_g2_opp_0');
    expect(endpointsCalled(harness.fake)).toEqual(['getOpportunity 503', 'getOpportunity 503', 'getOpportunity 200']);
  });

  test('a POST answered 500 is not repeated, and the error surfaces as CrmServerError', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', status: 500 });
    const error = await clientOf(harness)
      .accounts.create({ name: 'Acme' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CrmServerError);
    expect(error).toMatchObject({ status: 500 });
    expect(endpointsCalled(harness.fake)).toEqual(['createAccount 500']);
    expect(harness.fake.store.accounts.size).toBe(0);
  });

  test('a dropped connection surfaces as CrmConnectionError', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', drop: true });
    const error = await clientOf(harness)
      .accounts.create({ name: 'Acme' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(endpointsCalled(harness.fake)).toEqual(['createAccount 0']);
  });
});

describe('the fake server over real sockets', () => {
  test('a CORS preflight is answered 204 and allows the x-api-key header', async () => {
    const srv = await startedServer();
    const response = await fetch(`${srv.url}/integrations/v1/contacts`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key, x-tenant-id',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const allowed = (response.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'x-tenant-id', 'content-type']));
    expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
  });

  test('answers carry the CORS headers too, errors included', async () => {
    const srv = await startedServer();
    const response = await fetch(`${srv.url}/integrations/v1/contacts?tenantId=${srv.fake.tenantId}`, {
      headers: { origin: 'https://app.example' },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toContain('retry-after');
  });

  test('where the runtime has no HTTP server (a browser), starting one rejects, naming the runtimes it needs', async () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);

    await expect(startFakeCrmServer()).rejects.toThrow(
      /^startFakeCrmServer\(\) needs Node \(22\.3 or later\), Bun or Deno.*use createFakeCrm\(\) with msw's setupWorker\.$/,
    );
  });

  test('the server listens on loopback and its url is what the client needs', async () => {
    const srv = await startedServer({ tenantId: 'acme' });
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const crm = new CrmClient({ ...srv.fake.credentials, baseUrl: srv.url });
    const page = await crm.contacts.list();
    expect(page.pagination).toEqual({ page: 1, limit: 20, total: 0, pages: 0 });
    expect(srv.fake.requests[0]?.headers['x-tenant-id']).toBe('acme');
  });
});
