import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { CrmClient } from '../../src/index';
import { ADMIN_TOKEN, API_KEY, BASE_URL, type Captured, capture, makeClient, ok, TENANT } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';
import { server } from '../support/msw-server';

/** The one request a handler received; fails the test when it got none or several. */
function only(seen: readonly Captured[]): Captured {
  expect(seen).toHaveLength(1);
  const [request] = seen;
  if (!request) throw new Error('no request was received');
  return request;
}

/** The query string as a plain object (every key appearing once). */
const queryOf = (request: Captured): Record<string, string> => Object.fromEntries(request.url.searchParams);

/** An integration call: `x-api-key` and `x-tenant-id`, never `Authorization`. */
function expectIntegrationHeaders(request: Captured, tenantId = TENANT): void {
  expect(request.headers.get('x-api-key')).toBe(API_KEY);
  expect(request.headers.get('x-tenant-id')).toBe(tenantId);
  expect(request.headers.has('authorization')).toBe(false);
}

/** A key-management call: `Authorization: Bearer <adminToken>`, neither `x-api-key` nor `x-tenant-id`. */
function expectAdminHeaders(request: Captured): void {
  expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  expect(request.headers.has('x-api-key')).toBe(false);
  expect(request.headers.has('x-tenant-id')).toBe(false);
}

function expectJsonContentType(request: Captured): void {
  expect(request.headers.get('content-type')).toMatch(/^application\/json/);
}

/** An id that must be percent-encoded as one path segment: a space, a slash and a question mark. */
const AWKWARD_ID = 'opp 1/2?x=y';
const AWKWARD_ID_ENCODED = 'opp%201%2F2%3Fx%3Dy';

describe('opportunities.get (GET /integrations/v1/opportunities/{id})', () => {
  it('sends GET to the opportunity path with tenantId in the query and the integration headers', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1', name: 'Renewal' }));
    await makeClient().opportunities.get('opp_1');

    const request = only(seen);
    expect(request.method).toBe('GET');
    expect(request.url.pathname).toBe('/integrations/v1/opportunities/opp_1');
    expect(queryOf(request)).toEqual({ tenantId: TENANT });
    expectIntegrationHeaders(request);
    expect(request.body).toBeUndefined();
  });

  it('percent-encodes an id holding a space, a slash and a question mark as one path segment', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: AWKWARD_ID }));
    await makeClient().opportunities.get(AWKWARD_ID);

    const request = only(seen);
    expect(request.url.pathname).toBe(`/integrations/v1/opportunities/${AWKWARD_ID_ENCODED}`);
    expect(queryOf(request)).toEqual({ tenantId: TENANT });
  });

  it('returns the envelope data, keeping fields the schema does not know', async () => {
    const data = {
      id: 'opp_1',
      name: 'Renewal',
      amount: 1200,
      type: 'renewal',
      primaryContact: { id: 'con_1', extra: true },
      futureField: { nested: [1, 2] },
    };
    capture('get', mswPath(endpoints.getOpportunity), ok(data));

    const opportunity = await makeClient().opportunities.get('opp_1');
    expect(opportunity).toEqual(data);
  });
});

describe('opportunities.create (POST /integrations/v1/opportunities)', () => {
  it('sends tenantId in the JSON body of POST /opportunities and nothing in the query', async () => {
    const seen = capture('post', mswPath(endpoints.createOpportunity), ok({ id: 'opp_9' }));
    await makeClient().opportunities.create({ name: 'Deal', accountId: 'acc_1', amount: 500, type: 'upsell' });

    const request = only(seen);
    expect(request.method).toBe('POST');
    expect(request.url.pathname).toBe('/integrations/v1/opportunities');
    expect(request.url.search).toBe('');
    expect(request.body).toEqual({ tenantId: TENANT, name: 'Deal', accountId: 'acc_1', amount: 500, type: 'upsell' });
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('sends Date values as ISO strings and keeps ISO strings with a zone as given', async () => {
    const seen = capture('post', mswPath(endpoints.createOpportunity), ok({ id: 'opp_9' }));
    await makeClient().opportunities.create({
      name: 'Deal',
      accountId: 'acc_1',
      expectedCloseDate: new Date('2027-01-31T09:30:00.000Z'),
      closeDate: '2027-02-01T10:00:00+01:00',
    });

    expect(only(seen).body).toEqual({
      tenantId: TENANT,
      name: 'Deal',
      accountId: 'acc_1',
      expectedCloseDate: '2027-01-31T09:30:00.000Z',
      closeDate: '2027-02-01T10:00:00+01:00',
    });
  });

  it('returns the created opportunity from the envelope, unknown fields kept', async () => {
    const data = { id: 'opp_9', name: 'Deal', isIntegration: true, serverOnly: 'kept' };
    capture('post', mswPath(endpoints.createOpportunity), ok(data));

    await expect(makeClient().opportunities.create({ name: 'Deal', accountId: 'acc_1' })).resolves.toEqual(data);
  });
});

describe('opportunities.update (PUT /integrations/v1/opportunities/{id})', () => {
  it('sends PUT with tenantId in the query and a body without tenantId', async () => {
    const seen = capture('put', mswPath(endpoints.updateOpportunity), ok({ id: 'opp_1', stage: 'won' }));
    await makeClient().opportunities.update('opp_1', { stage: 'won', probability: 100 });

    const request = only(seen);
    expect(request.method).toBe('PUT');
    expect(request.url.pathname).toBe('/integrations/v1/opportunities/opp_1');
    expect(queryOf(request)).toEqual({ tenantId: TENANT });
    expect(request.body).toEqual({ stage: 'won', probability: 100 });
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('percent-encodes the id and sends a Date as an ISO string', async () => {
    const seen = capture('put', mswPath(endpoints.updateOpportunity), ok({ id: AWKWARD_ID }));
    await makeClient().opportunities.update(AWKWARD_ID, { closeDate: new Date('2026-05-04T03:02:01.000Z') });

    const request = only(seen);
    expect(request.url.pathname).toBe(`/integrations/v1/opportunities/${AWKWARD_ID_ENCODED}`);
    expect(request.body).toEqual({ closeDate: '2026-05-04T03:02:01.000Z' });
  });

  it('returns the updated opportunity, unknown fields kept', async () => {
    const data = { id: 'opp_1', stage: 'won', dsa: 3, brandNew: [true] };
    capture('put', mswPath(endpoints.updateOpportunity), ok(data));

    await expect(makeClient().opportunities.update('opp_1', { stage: 'won' })).resolves.toEqual(data);
  });
});

describe('activities.list (GET /integrations/v1/activities)', () => {
  it('sends tenantId and every parameter in the query, dates as ISO strings', async () => {
    const seen = capture('get', mswPath(endpoints.listActivities), ok([], { pagination: { page: 2, limit: 10 } }));
    await makeClient().activities.list({
      opportunityId: 'opp_1',
      page: 2,
      limit: 10,
      ownerId: 'usr_1',
      type: 'call',
      fromDate: new Date('2026-01-01T00:00:00.000Z'),
      toDate: '2026-02-01T00:00:00Z',
    });

    const request = only(seen);
    expect(request.method).toBe('GET');
    expect(request.url.pathname).toBe('/integrations/v1/activities');
    expect(queryOf(request)).toEqual({
      tenantId: TENANT,
      opportunityId: 'opp_1',
      page: '2',
      limit: '10',
      ownerId: 'usr_1',
      type: 'call',
      fromDate: '2026-01-01T00:00:00.000Z',
      toDate: '2026-02-01T00:00:00Z',
    });
    expect(request.body).toBeUndefined();
    expectIntegrationHeaders(request);
  });

  it('sends only tenantId and opportunityId when no optional parameter is given', async () => {
    const seen = capture('get', mswPath(endpoints.listActivities), ok([], { pagination: { page: 1, pages: 1 } }));
    await makeClient().activities.list({ opportunityId: 'opp_1' });

    expect(queryOf(only(seen))).toEqual({ tenantId: TENANT, opportunityId: 'opp_1' });
  });

  it('returns a page with the items (unknown fields kept) and the pagination', async () => {
    const items = [
      { id: 'act_1', type: 'call', subject: 'Hello', mood: 'good' },
      { id: 'act_2', type: 'fax', subject: 'New type' },
    ];
    const pagination = { page: 1, limit: 2, total: 5, pages: 3 };
    capture('get', mswPath(endpoints.listActivities), ok(items, { pagination }));

    const page = await makeClient().activities.list({ opportunityId: 'opp_1', limit: 2 });
    expect(page.data).toEqual(items);
    expect(page.pagination).toEqual(pagination);
    expect(page.hasNextPage()).toBe(true);
  });
});

describe('activities.create (POST /integrations/v1/activities)', () => {
  it('sends relatedToType "opportunity" and relatedToId for opportunityId, with tenantId in the body', async () => {
    const seen = capture('post', mswPath(endpoints.createActivity), ok({ id: 'act_1' }));
    await makeClient().activities.create({
      opportunityId: 'opp_1',
      type: 'meeting',
      subject: 'Kick-off',
      description: 'Agenda',
      activityDate: new Date('2026-03-04T05:06:07.000Z'),
    });

    const request = only(seen);
    expect(request.method).toBe('POST');
    expect(request.url.pathname).toBe('/integrations/v1/activities');
    expect(request.url.search).toBe('');
    expect(request.body).toEqual({
      tenantId: TENANT,
      relatedToType: 'opportunity',
      relatedToId: 'opp_1',
      type: 'meeting',
      subject: 'Kick-off',
      description: 'Agenda',
      activityDate: '2026-03-04T05:06:07.000Z',
    });
    expect(request.body).not.toHaveProperty('opportunityId');
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('sends an explicit relatedToType and relatedToId as given', async () => {
    const seen = capture('post', mswPath(endpoints.createActivity), ok({ id: 'act_2' }));
    await makeClient().activities.create({
      relatedToType: 'account',
      relatedToId: 'acc_7',
      type: 'note',
      subject: 'N',
    });

    expect(only(seen).body).toEqual({
      tenantId: TENANT,
      relatedToType: 'account',
      relatedToId: 'acc_7',
      type: 'note',
      subject: 'N',
    });
  });

  it('returns the created activity, unknown fields kept', async () => {
    const data = { id: 'act_1', relatedToType: 'opportunity', relatedToId: 'opp_1', type: 'call', extra: 42 };
    capture('post', mswPath(endpoints.createActivity), ok(data));

    await expect(
      makeClient().activities.create({ opportunityId: 'opp_1', type: 'call', subject: 'S' }),
    ).resolves.toEqual(data);
  });
});

describe('accounts.create (POST /integrations/v1/accounts)', () => {
  it('sends tenantId in the JSON body of POST /accounts with the integration headers', async () => {
    const seen = capture('post', mswPath(endpoints.createAccount), ok({ id: 'acc_1' }));
    await makeClient().accounts.create({ name: 'Acme', status: 'prospect', annualRevenue: 1e6, type: 'customer' });

    const request = only(seen);
    expect(request.method).toBe('POST');
    expect(request.url.pathname).toBe('/integrations/v1/accounts');
    expect(request.url.search).toBe('');
    expect(request.body).toEqual({
      tenantId: TENANT,
      name: 'Acme',
      status: 'prospect',
      annualRevenue: 1e6,
      type: 'customer',
    });
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('returns the created account, owner_name and unknown fields kept', async () => {
    const data = { id: 'acc_1', name: 'Acme', owner_name: 'Ada', segment: 'smb' };
    capture('post', mswPath(endpoints.createAccount), ok(data));

    await expect(makeClient().accounts.create({ name: 'Acme' })).resolves.toEqual(data);
  });
});

describe('accounts.update (PUT /integrations/v1/accounts/{id})', () => {
  it('sends PUT with tenantId in the query, a body without tenantId and the integration headers', async () => {
    const seen = capture('put', mswPath(endpoints.updateAccount), ok({ id: 'acc_1' }));
    await makeClient().accounts.update('acc_1', { status: 'inactive', city: 'Lyon' });

    const request = only(seen);
    expect(request.method).toBe('PUT');
    expect(request.url.pathname).toBe('/integrations/v1/accounts/acc_1');
    expect(queryOf(request)).toEqual({ tenantId: TENANT });
    expect(request.body).toEqual({ status: 'inactive', city: 'Lyon' });
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('percent-encodes the account id', async () => {
    const seen = capture('put', mswPath(endpoints.updateAccount), ok({}));
    await makeClient().accounts.update('acc/1 ?', { city: 'Lyon' });

    expect(only(seen).url.pathname).toBe('/integrations/v1/accounts/acc%2F1%20%3F');
  });

  it('returns the open update result as sent by the server', async () => {
    const data = { updated: true, fields: ['status'], account: { id: 'acc_1' } };
    capture('put', mswPath(endpoints.updateAccount), ok(data));

    await expect(makeClient().accounts.update('acc_1', { status: 'active' })).resolves.toEqual(data);
  });
});

describe('contacts.create (POST /integrations/v1/contacts)', () => {
  it('sends tenantId in the JSON body of POST /contacts with the integration headers', async () => {
    const seen = capture('post', mswPath(endpoints.createContact), ok({ id: 'con_1' }));
    await makeClient().contacts.create({
      accountId: 'acc_1',
      firstName: 'Ada',
      email: 'ada@example.com',
      isPrimary: true,
      status: 'active',
    });

    const request = only(seen);
    expect(request.method).toBe('POST');
    expect(request.url.pathname).toBe('/integrations/v1/contacts');
    expect(request.url.search).toBe('');
    expect(request.body).toEqual({
      tenantId: TENANT,
      accountId: 'acc_1',
      firstName: 'Ada',
      email: 'ada@example.com',
      isPrimary: true,
      status: 'active',
    });
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('returns the created contact, account_name and unknown fields kept', async () => {
    const data = { id: 'con_1', firstName: 'Ada', account_name: 'Acme', linkedIn: 'ada' };
    capture('post', mswPath(endpoints.createContact), ok(data));

    await expect(makeClient().contacts.create({ firstName: 'Ada' })).resolves.toEqual(data);
  });
});

describe('contacts.update (PUT /integrations/v1/contacts/{id})', () => {
  it('puts tenantId in the query of PUT contacts/{id} and never in the body', async () => {
    const seen = capture('put', mswPath(endpoints.updateContact), ok({ id: 'con_1' }));
    await makeClient().contacts.update('con_1', { position: 'CTO', status: 'inactive' });

    const request = only(seen);
    expect(request.method).toBe('PUT');
    expect(request.url.pathname).toBe('/integrations/v1/contacts/con_1');
    expect(queryOf(request)).toEqual({ tenantId: TENANT });
    expect(request.body).toEqual({ position: 'CTO', status: 'inactive' });
    expect(request.body).not.toHaveProperty('tenantId');
    expectJsonContentType(request);
    expectIntegrationHeaders(request);
  });

  it('percent-encodes the contact id', async () => {
    const seen = capture('put', mswPath(endpoints.updateContact), ok({ id: 'con 1/a?b' }));
    await makeClient().contacts.update('con 1/a?b', { position: 'CTO' });

    expect(only(seen).url.pathname).toBe('/integrations/v1/contacts/con%201%2Fa%3Fb');
  });

  it('returns the updated contact, unknown fields kept', async () => {
    const data = { id: 'con_1', position: 'CTO', isIntegration: true, nickname: 'A' };
    capture('put', mswPath(endpoints.updateContact), ok(data));

    await expect(makeClient().contacts.update('con_1', { position: 'CTO' })).resolves.toEqual(data);
  });
});

describe('contacts.list (GET /integrations/v1/contacts)', () => {
  it('sends tenantId, page, limit and status in the query with the integration headers', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), ok([], { pagination: { page: 3, limit: 50 } }));
    await makeClient().contacts.list({ page: 3, limit: 50, status: 'active' });

    const request = only(seen);
    expect(request.method).toBe('GET');
    expect(request.url.pathname).toBe('/integrations/v1/contacts');
    expect(queryOf(request)).toEqual({ tenantId: TENANT, page: '3', limit: '50', status: 'active' });
    expect(request.body).toBeUndefined();
    expectIntegrationHeaders(request);
  });

  it('sends only tenantId when called without parameters', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), ok([], { pagination: { page: 1, pages: 1 } }));
    await makeClient().contacts.list();

    expect(queryOf(only(seen))).toEqual({ tenantId: TENANT });
  });

  it('returns a page with the contacts (unknown fields kept) and the pagination', async () => {
    const items = [
      { id: 'con_1', email: 'a@example.com', tag: 'x' },
      { id: 'con_2', status: 'archived' },
    ];
    const pagination = { page: 1, limit: 2, total: 2, pages: 1 };
    capture('get', mswPath(endpoints.listContacts), ok(items, { pagination }));

    const page = await makeClient().contacts.list({ limit: 2 });
    expect(page.data).toEqual(items);
    expect(page.pagination).toEqual(pagination);
    expect(page.hasNextPage()).toBe(false);
  });
});

describe('grants.resolve (GET /integrations/v1/grants/resolve)', () => {
  it('sends grantId and tenantId in the query with the integration headers', async () => {
    const seen = capture('get', mswPath(endpoints.resolveGrant), ok({ resolved: true }));
    await makeClient().grants.resolve('grant 42&x=1');

    const request = only(seen);
    expect(request.method).toBe('GET');
    expect(request.url.pathname).toBe('/integrations/v1/grants/resolve');
    expect(queryOf(request)).toEqual({ tenantId: TENANT, grantId: 'grant 42&x=1' });
    expect(request.body).toBeUndefined();
    expectIntegrationHeaders(request);
  });

  it('returns the open grant resolution as sent by the server', async () => {
    const data = { grantId: 'grant_42', scopes: ['read'], expiresAt: null };
    capture('get', mswPath(endpoints.resolveGrant), ok(data));

    await expect(makeClient().grants.resolve('grant_42')).resolves.toEqual(data);
  });
});

describe('apiKey.status (GET /integrations/api-key)', () => {
  it('sends GET /integrations/api-key with the bearer admin token and neither x-api-key nor x-tenant-id', async () => {
    const seen = capture('get', mswPath(endpoints.apiKeyStatus), ok({ exists: true }));
    await makeClient().apiKey.status();

    const request = only(seen);
    expect(request.method).toBe('GET');
    expect(request.url.pathname).toBe('/integrations/api-key');
    expect(request.url.search).toBe('');
    expect(request.body).toBeUndefined();
    expectAdminHeaders(request);
  });

  it('works from an admin-only client built from baseUrl and adminToken', async () => {
    const seen = capture('get', mswPath(endpoints.apiKeyStatus), ok({ exists: false }));
    const admin = new CrmClient({ baseUrl: BASE_URL, adminToken: ADMIN_TOKEN, apiKey: undefined, tenantId: undefined });

    await expect(admin.apiKey.status()).resolves.toEqual({ exists: false });
    expectAdminHeaders(only(seen));
  });

  it('returns the open key status as sent by the server', async () => {
    const data = { exists: true, createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null };
    capture('get', mswPath(endpoints.apiKeyStatus), ok(data));

    await expect(makeClient().apiKey.status()).resolves.toEqual(data);
  });
});

describe('apiKey.generate (POST /integrations/api-key/generate)', () => {
  it('sends POST /integrations/api-key/generate with the bearer admin token and no tenant anywhere', async () => {
    const seen = capture('post', mswPath(endpoints.generateApiKey), ok({ apiKey: 'key_new' }));
    await makeClient().apiKey.generate();

    const request = only(seen);
    expect(request.method).toBe('POST');
    expect(request.url.pathname).toBe('/integrations/api-key/generate');
    expect(request.url.search).toBe('');
    expect(request.body ?? {}).not.toHaveProperty('tenantId');
    expectAdminHeaders(request);
  });

  it('returns the new key to the caller', async () => {
    const data = { apiKey: 'key_new_123', rotated: true };
    capture('post', mswPath(endpoints.generateApiKey), ok(data));

    await expect(makeClient().apiKey.generate()).resolves.toEqual(data);
  });
});

describe('tenant and headers across calls', () => {
  it('sends the tenant of withTenant() in the query, the body and x-tenant-id', async () => {
    const get = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1' }));
    const post = capture('post', mswPath(endpoints.createContact), ok({ id: 'con_1' }));
    const other = makeClient().withTenant('tenant_2');

    await other.opportunities.get('opp_1');
    await other.contacts.create({ firstName: 'Ada' });

    const read = only(get);
    expect(queryOf(read)).toEqual({ tenantId: 'tenant_2' });
    expectIntegrationHeaders(read, 'tenant_2');
    const created = only(post);
    expect(created.body).toEqual({ tenantId: 'tenant_2', firstName: 'Ada' });
    expectIntegrationHeaders(created, 'tenant_2');
  });

  it('adds client and per-call headers but never lets them replace or add credential headers', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1' }));
    const crm = makeClient({ headers: { 'x-client': 'c', 'x-api-key': 'forged', Authorization: 'Bearer forged' } });

    await crm.opportunities.get('opp_1', {
      headers: { 'x-call': 'k', 'X-Tenant-Id': 'other', authorization: 'Bearer forged' },
    });

    const request = only(seen);
    expect(request.headers.get('x-client')).toBe('c');
    expect(request.headers.get('x-call')).toBe('k');
    expectIntegrationHeaders(request);
  });
});

describe('baseUrl', () => {
  it('hits the right URL when baseUrl ends with a slash', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1' }));
    await makeClient({ baseUrl: `${BASE_URL}/` }).opportunities.get('opp_1');

    expect(only(seen).url.href).toBe(`${BASE_URL}/integrations/v1/opportunities/opp_1?tenantId=${TENANT}`);
  });

  it('trims spaces and line breaks around baseUrl, as a value read from a file often has', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1' }));
    await makeClient({ baseUrl: ` ${BASE_URL}/\n` }).opportunities.get('opp_1');

    expect(only(seen).url.href).toBe(`${BASE_URL}/integrations/v1/opportunities/opp_1?tenantId=${TENANT}`);
  });

  it('keeps a path prefix with a trailing slash (https://crm.test/api/)', async () => {
    const seen = capture('get', '/api/integrations/v1/opportunities/:id', ok({ id: 'opp_1' }));
    await makeClient({ baseUrl: 'https://crm.test/api/' }).opportunities.get('opp_1');

    expect(only(seen).url.pathname).toBe('/api/integrations/v1/opportunities/opp_1');
  });

  it('keeps a path prefix without a trailing slash (https://crm.test/api)', async () => {
    const seen = capture('post', '/api/integrations/v1/accounts', ok({ id: 'acc_1' }));
    await makeClient({ baseUrl: 'https://crm.test/api' }).accounts.create({ name: 'Acme' });

    const request = only(seen);
    expect(request.url.pathname).toBe('/api/integrations/v1/accounts');
    expect(request.body).toEqual({ tenantId: TENANT, name: 'Acme' });
  });

  it('puts the key-management paths under the prefix too', async () => {
    const seen = capture('post', '/api/integrations/api-key/generate', ok({ apiKey: 'k' }));
    await makeClient({ baseUrl: 'https://crm.test/api' }).apiKey.generate();

    expect(only(seen).url.pathname).toBe('/api/integrations/api-key/generate');
  });

  it('works against another host with a prefix, matched by its full URL', async () => {
    const urls: string[] = [];
    server.use(
      http.get('https://other.test/crm/v2/integrations/v1/contacts', ({ request }) => {
        urls.push(request.url);
        return HttpResponse.json({ success: true, data: [], pagination: { page: 1, pages: 1 } });
      }),
    );

    await makeClient({ baseUrl: 'https://other.test/crm/v2/' }).contacts.list({ limit: 5 });
    expect(urls).toEqual([`https://other.test/crm/v2/integrations/v1/contacts?tenantId=${TENANT}&limit=5`]);
  });
});

describe('withResponse()', () => {
  it('returns { data, response } with the raw response headers readable', async () => {
    capture(
      'get',
      mswPath(endpoints.getOpportunity),
      ok({ id: 'opp_1', name: 'Deal' }, {}, { headers: { 'x-request-id': 'req_123', 'x-ratelimit-remaining': '9' } }),
    );

    const { data, response } = await makeClient().opportunities.get('opp_1').withResponse();
    expect(data).toEqual({ id: 'opp_1', name: 'Deal' });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req_123');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('works for a POST and for a key-management call', async () => {
    capture(
      'post',
      mswPath(endpoints.createContact),
      ok({ id: 'con_1' }, {}, { status: 201, headers: { etag: '"v1"' } }),
    );
    capture('post', mswPath(endpoints.generateApiKey), ok({ apiKey: 'k' }, {}, { headers: { 'x-request-id': 'r2' } }));
    const crm = makeClient();

    const created = await crm.contacts.create({ firstName: 'Ada' }).withResponse();
    expect(created.data).toEqual({ id: 'con_1' });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('etag')).toBe('"v1"');

    const generated = await crm.apiKey.generate().withResponse();
    expect(generated.data).toEqual({ apiKey: 'k' });
    expect(generated.response.headers.get('x-request-id')).toBe('r2');
  });

  it('gives the raw response of a list page beside the page', async () => {
    capture(
      'get',
      mswPath(endpoints.listContacts),
      ok(
        [{ id: 'con_1' }],
        { pagination: { page: 1, pages: 1 } },
        {
          headers: { 'x-total-count': '1' },
        },
      ),
    );

    const { data, response } = await makeClient().contacts.list().withResponse();
    expect(data.data).toEqual([{ id: 'con_1' }]);
    expect(response.headers.get('x-total-count')).toBe('1');
  });
});
