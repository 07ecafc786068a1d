import { delay, HttpResponse, http } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CrmAbortError,
  CrmClient,
  CrmError,
  CrmNotFoundError,
  CrmPromise,
  CrmServerError,
  CrmTimeoutError,
  CrmValidationError,
  Page,
} from '../../src/index';
import {
  ADMIN_TOKEN,
  API_KEY,
  BASE_URL,
  type Captured,
  capture,
  captureAll,
  makeClient,
  ok,
  TENANT,
} from '../support/capture';
import { server } from '../support/msw-server';

const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';
const OPPORTUNITIES = '/integrations/v1/opportunities';
const KEY_STATUS = '/integrations/api-key';
const KEY_GENERATE = '/integrations/api-key/generate';

const opportunity = { id: 'opp_1', name: 'Renewal 2027', amount: 12000 };

/** What a call rejected with; fails the test when it resolved. */
async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('Expected the call to reject');
}

/** What a function threw; fails the test when it returned. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('Expected a throw');
}

/** The integration call carried the client's API key and tenant only; the admin call, its token only. */
function expectOwnCredentialsOnly(integration: Captured | undefined, admin: Captured | undefined): void {
  expect(integration?.headers.get('x-api-key')).toBe(API_KEY);
  expect(integration?.headers.get('x-tenant-id')).toBe(TENANT);
  expect(integration?.headers.has('authorization')).toBe(false);
  expect(admin?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  expect(admin?.headers.has('x-api-key')).toBe(false);
  expect(admin?.headers.has('x-tenant-id')).toBe(false);
}

const fields = (error: unknown) => (error as CrmValidationError).issues.map((issue) => issue.field);

beforeEach(() => {
  // Whatever the machine's environment holds, each test starts without CRM_* variables.
  vi.stubEnv('CRM_BASE_URL', undefined);
  vi.stubEnv('CRM_API_KEY', undefined);
  vi.stubEnv('CRM_TENANT_ID', undefined);
  vi.stubEnv('CRM_ADMIN_TOKEN', undefined);
});

describe('options and environment variables', () => {
  it('reads baseUrl, apiKey, tenantId and adminToken from CRM_* environment variables', async () => {
    vi.stubEnv('CRM_BASE_URL', BASE_URL);
    vi.stubEnv('CRM_API_KEY', 'env_key_123');
    vi.stubEnv('CRM_TENANT_ID', 'env_tenant');
    vi.stubEnv('CRM_ADMIN_TOKEN', 'env_admin_token');
    const integration = capture('get', OPPORTUNITY, ok(opportunity));
    const admin = capture('get', KEY_STATUS, ok({ active: true }));

    const crm = new CrmClient();
    await crm.opportunities.get('opp_1');
    await crm.apiKey.status();

    expect(crm.tenantId).toBe('env_tenant');
    expect(integration).toHaveLength(1);
    expect(integration[0]?.headers.get('x-api-key')).toBe('env_key_123');
    expect(integration[0]?.headers.get('x-tenant-id')).toBe('env_tenant');
    expect(integration[0]?.url.searchParams.get('tenantId')).toBe('env_tenant');
    expect(admin[0]?.headers.get('authorization')).toBe('Bearer env_admin_token');
  });

  it('trims spaces and line breaks around CRM_BASE_URL, as around the baseUrl option', async () => {
    vi.stubEnv('CRM_BASE_URL', ` ${BASE_URL}/\n`);
    const seen = capture('get', OPPORTUNITY, ok(opportunity));

    const crm = new CrmClient({ apiKey: API_KEY, tenantId: TENANT });
    await crm.opportunities.get('opp_1');

    expect(seen[0]?.url.origin).toBe(new URL(BASE_URL).origin);
    expect(crm.toJSON().baseUrl).toBe(`${BASE_URL}/`);
  });

  it('prefers explicit options over the environment variables', async () => {
    vi.stubEnv('CRM_BASE_URL', 'https://env.example.com');
    vi.stubEnv('CRM_API_KEY', 'env_key_123');
    vi.stubEnv('CRM_TENANT_ID', 'env_tenant');
    vi.stubEnv('CRM_ADMIN_TOKEN', 'env_admin_token');
    const integration = capture('get', OPPORTUNITY, ok(opportunity));
    const admin = capture('get', KEY_STATUS, ok({ active: true }));

    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT, adminToken: ADMIN_TOKEN });
    await crm.opportunities.get('opp_1');
    await crm.apiKey.status();

    // An MSW handler only exists on BASE_URL, so a request to the env URL would fail the call.
    expect(integration).toHaveLength(1);
    expect(integration[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(integration[0]?.headers.get('x-tenant-id')).toBe(TENANT);
    expect(integration[0]?.url.searchParams.get('tenantId')).toBe(TENANT);
    expect(admin[0]?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  });

  it('throws CrmValidationError at construction when neither baseUrl nor CRM_BASE_URL is set', () => {
    const error = thrown(() => new CrmClient({ apiKey: API_KEY, tenantId: TENANT }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(['baseUrl']);
    expect((error as Error).message).toContain('CRM_BASE_URL');
  });

  it.each([
    ['not a URL', 'crm.example.com'],
    ['a non-http scheme', 'ftp://crm.example.com'],
    ['an empty string', ''],
    ['a scheme without //', 'https:crm.example.com'],
    ['a URL without a host', 'https:///integrations'],
    ['a host with a space', 'https://crm example.com'],
  ])('throws CrmValidationError naming baseUrl when baseUrl is %s', (_, baseUrl) => {
    const error = thrown(() => new CrmClient({ baseUrl, apiKey: API_KEY, tenantId: TENANT }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toContain('baseUrl');
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'throws CrmValidationError naming timeout when timeout is %s',
    (timeout) => {
      const error = thrown(() => makeClient({ timeout }));

      expect(error).toBeInstanceOf(CrmValidationError);
      expect(fields(error)).toEqual(['timeout']);
    },
  );

  it.each([-1, 0.5, Number.NaN])('throws CrmValidationError naming maxRetries when maxRetries is %s', (maxRetries) => {
    const error = thrown(() => makeClient({ maxRetries }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(['maxRetries']);
  });

  it('throws CrmValidationError, not a TypeError, for an apiKey object whose length cannot be compared', () => {
    const error = thrown(() => makeClient({ apiKey: { length: Object.create(null) } as unknown as string }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues).toEqual([
      { field: 'apiKey', path: ['apiKey'], message: 'Expected string, received object' },
    ]);
  });

  it('names every invalid option in one error', () => {
    const error = thrown(() => new CrmClient({ baseUrl: 'nope', timeout: -5, maxRetries: -1 }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(expect.arrayContaining(['baseUrl', 'timeout', 'maxRetries']));
  });
});

describe('missing credentials', () => {
  it('builds a client without apiKey, and rejects its first integration call with CrmValidationError before sending', async () => {
    const seen = captureAll();
    const crm = new CrmClient({ baseUrl: BASE_URL, tenantId: TENANT });

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(['apiKey']);
    expect((error as Error).message).toContain('CRM_API_KEY');
    expect(seen).toHaveLength(0);
  });

  it('builds a client without tenantId, and rejects its first integration call with CrmValidationError before sending', async () => {
    const seen = captureAll();
    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY });

    const error = await rejection(crm.contacts.create({ firstName: 'Ada' }));
    const listError = await rejection(crm.contacts.list());

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(['tenantId']);
    expect((error as Error).message).toContain('CRM_TENANT_ID');
    expect(listError).toBeInstanceOf(CrmValidationError);
    expect(fields(listError)).toEqual(['tenantId']);
    expect(seen).toHaveLength(0);
  });

  it('lets an admin-only client (baseUrl and adminToken) call apiKey.status() with only the bearer token', async () => {
    const seen = capture('get', KEY_STATUS, ok({ active: true, lastRotatedAt: '2026-01-01T00:00:00Z' }));
    const admin = new CrmClient({ baseUrl: BASE_URL, adminToken: ADMIN_TOKEN });

    const status = await admin.apiKey.status();

    expect(status).toEqual({ active: true, lastRotatedAt: '2026-01-01T00:00:00Z' });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(seen[0]?.headers.has('x-api-key')).toBe(false);
    expect(seen[0]?.headers.has('x-tenant-id')).toBe(false);
  });

  it('rejects the first key-management call of a client without adminToken with CrmValidationError, sending nothing', async () => {
    const seen = captureAll();
    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT });

    const statusError = await rejection(crm.apiKey.status());
    const generateError = await rejection(crm.apiKey.generate());

    for (const error of [statusError, generateError]) {
      expect(error).toBeInstanceOf(CrmValidationError);
      expect(fields(error)).toEqual(['adminToken']);
      expect((error as Error).message).toContain('CRM_ADMIN_TOKEN');
    }
    expect(seen).toHaveLength(0);
  });
});

describe('withTenant()', () => {
  it('sends the other tenant in the query, the body and x-tenant-id, with the same key and client headers', async () => {
    const gets = capture('get', OPPORTUNITY, ok(opportunity));
    const posts = capture('post', OPPORTUNITIES, ok(opportunity));
    const crm = makeClient({ headers: { 'x-app': 'sync-job' } });

    const other = crm.withTenant('tenant_2');
    await other.opportunities.get('opp_1');
    await other.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' });

    expect(other.tenantId).toBe('tenant_2');
    expect(gets[0]?.url.searchParams.get('tenantId')).toBe('tenant_2');
    expect(gets[0]?.headers.get('x-tenant-id')).toBe('tenant_2');
    expect(gets[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(gets[0]?.headers.get('x-app')).toBe('sync-job');
    expect(posts[0]?.body).toEqual({ tenantId: 'tenant_2', name: 'Renewal 2027', accountId: 'acc_1' });
    expect(posts[0]?.headers.get('x-tenant-id')).toBe('tenant_2');
    expect(posts[0]?.headers.get('x-app')).toBe('sync-job');
  });

  it('leaves the original client on its own tenant', async () => {
    const gets = capture('get', OPPORTUNITY, ok(opportunity));
    const crm = makeClient();

    crm.withTenant('tenant_2');
    await crm.opportunities.get('opp_1');

    expect(crm.tenantId).toBe(TENANT);
    expect(gets[0]?.url.searchParams.get('tenantId')).toBe(TENANT);
    expect(gets[0]?.headers.get('x-tenant-id')).toBe(TENANT);
  });

  it('shares the custom fetch of the client it came from', async () => {
    const seen = capture('get', OPPORTUNITY, ok(opportunity));
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return globalThis.fetch(input, init);
    };
    const crm = makeClient({ fetch });

    await crm.withTenant('tenant_2').opportunities.get('opp_1');
    await crm.withTenant('tenant_3').opportunities.get('opp_1');

    expect(urls).toHaveLength(2);
    expect(seen.map((r) => r.url.searchParams.get('tenantId'))).toEqual(['tenant_2', 'tenant_3']);
  });

  it('shares the admin token of the client it came from', async () => {
    const seen = capture('get', KEY_STATUS, ok({ active: true }));

    await makeClient().withTenant('tenant_2').apiKey.status();

    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  });

  it('throws CrmValidationError for an empty tenant id, and later clients keep their own options', async () => {
    const crm = makeClient();

    const error = thrown(() => crm.withTenant(''));
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(['tenantId']);

    const seen = capture('get', OPPORTUNITY, ok(opportunity));
    await new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: 'fresh_tenant' }).opportunities.get('opp_1');
    expect(seen[0]?.url.searchParams.get('tenantId')).toBe('fresh_tenant');
  });
});

describe('custom fetch', () => {
  it('sends every request through the fetch option instead of the global fetch', async () => {
    // No MSW handler is registered: a request through the global fetch would be an unhandled request.
    const requests: Request[] = [];
    const fetch = vi.fn<typeof globalThis.fetch>(async (input, init) => {
      requests.push(new Request(input, init));
      return Response.json({ success: true, data: opportunity });
    });
    const crm = makeClient({ fetch });

    const first = await crm.opportunities.get('opp_1');
    await crm.opportunities.get('opp_1');

    expect(first).toEqual(opportunity);
    expect(fetch).toHaveBeenCalledTimes(2);
    const url = new URL(requests[0]?.url ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE_URL}${OPPORTUNITY}`);
    expect(requests[0]?.headers.get('x-api-key')).toBe(API_KEY);
  });
});

describe('headers', () => {
  it('sends each call the credentials of its own tenant when calls of two tenants run interleaved', async () => {
    const seen = capture('get', OPPORTUNITY, ok(opportunity));
    const crm = makeClient();
    const other = crm.withTenant('tenant_2');

    await Promise.all([crm, other, crm, other, crm].map((client) => client.opportunities.get('opp_1')));

    const sent = seen.map((r) => [r.headers.get('x-tenant-id'), r.url.searchParams.get('tenantId')]);
    expect(sent.filter(([header, query]) => header !== query)).toEqual([]);
    expect(sent.map(([header]) => header).sort()).toEqual([TENANT, TENANT, TENANT, 'tenant_2', 'tenant_2']);
  });

  it('sends a GET after a create without the create’s content-type, and an admin call without x-api-key', async () => {
    const gets = capture('get', OPPORTUNITY, ok(opportunity));
    capture('post', OPPORTUNITIES, ok(opportunity));
    const admin = capture('get', KEY_STATUS, ok({ active: true }));
    const crm = makeClient();

    await crm.opportunities.get('opp_1');
    await crm.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' });
    await crm.opportunities.get('opp_1');
    await crm.apiKey.status();
    await crm.opportunities.get('opp_1');

    expect(gets.map((r) => r.headers.get('content-type'))).toEqual([null, null, null]);
    expect(gets.map((r) => r.headers.has('authorization'))).toEqual([false, false, false]);
    expect(admin[0]?.headers.has('x-api-key')).toBe(false);
    expect(admin[0]?.headers.has('x-tenant-id')).toBe(false);
  });

  it('sends the client headers and the per-call headers', async () => {
    const seen = capture('get', OPPORTUNITY, ok(opportunity));
    const crm = makeClient({ headers: { 'x-app': 'sync-job', 'user-agent-extra': 'etl/1.0' } });

    await crm.opportunities.get('opp_1', { headers: { 'x-trace-id': 'trace-1' } });
    await crm.opportunities.get('opp_1');

    expect(seen[0]?.headers.get('x-app')).toBe('sync-job');
    expect(seen[0]?.headers.get('user-agent-extra')).toBe('etl/1.0');
    expect(seen[0]?.headers.get('x-trace-id')).toBe('trace-1');
    expect(seen[1]?.headers.get('x-app')).toBe('sync-job');
    expect(seen[1]?.headers.has('x-trace-id')).toBe(false);
  });

  it('does not let client headers replace x-api-key, x-tenant-id or Authorization', async () => {
    const integration = capture('get', OPPORTUNITY, ok(opportunity));
    const admin = capture('get', KEY_STATUS, ok({ active: true }));
    const crm = makeClient({
      headers: { 'X-Api-Key': 'forged_key', 'x-tenant-id': 'evil_tenant', Authorization: 'Bearer forged' },
    });

    await crm.opportunities.get('opp_1');
    await crm.apiKey.status();

    expectOwnCredentialsOnly(integration[0], admin[0]);
  });

  it('does not let per-call headers replace the credentials, nor add Authorization to integration calls', async () => {
    const integration = capture('get', OPPORTUNITY, ok(opportunity));
    const admin = capture('get', KEY_STATUS, ok({ active: true }));
    const crm = makeClient();
    const headers = { 'x-api-key': 'forged_key', 'X-Tenant-Id': 'evil_tenant', authorization: 'Bearer forged' };

    await crm.opportunities.get('opp_1', { headers });
    await crm.apiKey.status({ headers });

    expectOwnCredentialsOnly(integration[0], admin[0]);
  });
});

describe('per-call options', () => {
  it('aborts an in-flight call with CrmAbortError when its signal is aborted', async () => {
    const controller = new AbortController();
    const seen = capture('get', OPPORTUNITY, async () => {
      controller.abort(new Error('caller gave up'));
      await delay(10_000);
      return ok(opportunity);
    });

    const started = Date.now();
    const error = await rejection(makeClient().opportunities.get('opp_1', { signal: controller.signal }));

    expect(error).toBeInstanceOf(CrmAbortError);
    // The answer comes after 10 s: seconds tell the two apart on a busy machine too.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
  });

  it('rejects with CrmAbortError, sending nothing, when the signal is already aborted', async () => {
    const seen = captureAll();
    const controller = new AbortController();
    controller.abort();

    const error = await rejection(makeClient().opportunities.get('opp_1', { signal: controller.signal }));

    expect(error).toBeInstanceOf(CrmAbortError);
    expect(seen).toHaveLength(0);
  });

  it('ends a slow call with CrmTimeoutError after the per-call timeout', async () => {
    const seen = capture('get', OPPORTUNITY, async () => {
      await delay(10_000);
      return ok(opportunity);
    });

    const started = Date.now();
    const error = await rejection(makeClient().opportunities.get('opp_1', { timeout: 50, maxRetries: 0 }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect((error as Error).message).toContain('50 ms');
    // The answer comes after 10 s: seconds tell the two apart on a busy machine too.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
  });

  it('does not retry a failing GET when the call passes maxRetries: 0', async () => {
    const seen = capture('get', OPPORTUNITY, () => HttpResponse.json({ message: 'down' }, { status: 503 }));

    const error = await rejection(makeClient().opportunities.get('opp_1', { maxRetries: 0 }));

    expect(error).toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(1);
  });

  it('retries up to the per-call maxRetries when the client allows none', async () => {
    const seen = capture('get', OPPORTUNITY, (_, index) =>
      index < 2
        ? HttpResponse.json({ message: 'slow down' }, { status: 429, headers: { 'retry-after': '0' } })
        : ok(opportunity),
    );

    const result = await makeClient({ maxRetries: 0 }).opportunities.get('opp_1', { maxRetries: 2 });

    expect(result).toEqual(opportunity);
    expect(seen).toHaveLength(3);
  });

  it('keeps a POST unretried on a 500 even when the call raises maxRetries', async () => {
    const seen = capture('post', OPPORTUNITIES, () => HttpResponse.json({ message: 'boom' }, { status: 500 }));

    const error = await rejection(
      makeClient().opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' }, { maxRetries: 3 }),
    );

    expect(error).toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(1);
  });

  it('rejects invalid per-call options with CrmValidationError, sending nothing', async () => {
    const seen = captureAll();

    const error = await rejection(makeClient().opportunities.get('opp_1', { timeout: -5, maxRetries: 1.5 }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(fields(error)).toEqual(expect.arrayContaining(['timeout', 'maxRetries']));
    expect(seen).toHaveLength(0);
  });
});

describe('returned promises', () => {
  it('returns from every method a real Promise that resolves to the unwrapped data', async () => {
    const v1 = `${BASE_URL}/integrations/v1`;
    server.use(
      http.get(`${v1}/opportunities/:id`, () => ok(opportunity)),
      http.post(`${v1}/opportunities`, () => ok(opportunity)),
      http.put(`${v1}/opportunities/:id`, () => ok(opportunity)),
      http.get(`${v1}/activities`, () => ok([{ id: 'act_1' }], { pagination: { page: 1, limit: 20, pages: 1 } })),
      http.post(`${v1}/activities`, () => ok({ id: 'act_1' })),
      http.post(`${v1}/accounts`, () => ok({ id: 'acc_1' })),
      http.put(`${v1}/accounts/:id`, () => ok({ id: 'acc_1' })),
      http.post(`${v1}/contacts`, () => ok({ id: 'con_1' })),
      http.put(`${v1}/contacts/:id`, () => ok({ id: 'con_1' })),
      http.get(`${v1}/contacts`, () => ok([{ id: 'con_1' }], { pagination: { page: 1, limit: 20, pages: 1 } })),
      http.get(`${v1}/grants/resolve`, () => ok({ grantId: 'g_1' })),
      http.get(`${BASE_URL}${KEY_STATUS}`, () => ok({ active: true })),
      http.post(`${BASE_URL}${KEY_GENERATE}`, () => ok({ key: 'new_key' })),
    );
    const crm = makeClient();

    const calls: [string, PromiseLike<unknown>, (value: unknown) => void][] = [
      ['opportunities.get', crm.opportunities.get('opp_1'), (v) => expect(v).toEqual(opportunity)],
      [
        'opportunities.create',
        crm.opportunities.create({ name: 'n', accountId: 'acc_1' }),
        (v) => expect(v).toEqual(opportunity),
      ],
      [
        'opportunities.update',
        crm.opportunities.update('opp_1', { stage: 'won' }),
        (v) => expect(v).toEqual(opportunity),
      ],
      ['activities.list', crm.activities.list({ opportunityId: 'opp_1' }), (v) => expect(v).toBeInstanceOf(Page)],
      [
        'activities.create',
        crm.activities.create({ opportunityId: 'opp_1', type: 'call', subject: 's' }),
        (v) => expect(v).toEqual({ id: 'act_1' }),
      ],
      ['accounts.create', crm.accounts.create({ name: 'Acme' }), (v) => expect(v).toEqual({ id: 'acc_1' })],
      ['accounts.update', crm.accounts.update('acc_1', { city: 'Paris' }), (v) => expect(v).toEqual({ id: 'acc_1' })],
      ['contacts.create', crm.contacts.create({ firstName: 'Ada' }), (v) => expect(v).toEqual({ id: 'con_1' })],
      ['contacts.update', crm.contacts.update('con_1', { lastName: 'L' }), (v) => expect(v).toEqual({ id: 'con_1' })],
      ['contacts.list', crm.contacts.list(), (v) => expect(v).toBeInstanceOf(Page)],
      ['grants.resolve', crm.grants.resolve('g_1'), (v) => expect(v).toEqual({ grantId: 'g_1' })],
      ['apiKey.status', crm.apiKey.status(), (v) => expect(v).toEqual({ active: true })],
      ['apiKey.generate', crm.apiKey.generate(), (v) => expect(v).toEqual({ key: 'new_key' })],
    ];

    for (const [name, promise, check] of calls) {
      expect(promise, name).toBeInstanceOf(Promise);
      expect(promise, name).toBeInstanceOf(CrmPromise);
      check(await promise);
    }
  });

  it('gives the data and the raw Response through withResponse(), from the same single request', async () => {
    const seen = capture('get', OPPORTUNITY, ok(opportunity, {}, { headers: { 'x-request-id': 'req_42' } }));
    const crm = makeClient();

    const call = crm.opportunities.get('opp_1');
    const { data, response } = await call.withResponse();
    const awaited = await call;

    expect(data).toEqual(opportunity);
    expect(awaited).toEqual(opportunity);
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req_42');
    expect(seen).toHaveLength(1);
  });

  it('gives the first page and the raw Response through withResponse() on a list', async () => {
    capture('get', '/integrations/v1/contacts', () =>
      ok(
        [{ id: 'con_1' }],
        { pagination: { page: 1, limit: 20, total: 1, pages: 1 } },
        { headers: { 'x-ratelimit-remaining': '99' } },
      ),
    );

    const { data, response } = await makeClient().contacts.list().withResponse();

    expect(data).toBeInstanceOf(Page);
    expect(data.data).toEqual([{ id: 'con_1' }]);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('rejects withResponse() with the same CrmError as the call', async () => {
    capture('get', OPPORTUNITY, () => HttpResponse.json({ message: 'No such opportunity' }, { status: 404 }));

    const error = await rejection(makeClient().opportunities.get('opp_1').withResponse());

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toBeInstanceOf(CrmError);
    expect((error as CrmNotFoundError).status).toBe(404);
  });

  it('passes the data through then() without a fulfilment handler, catch() and finally()', async () => {
    capture('get', OPPORTUNITY, ok(opportunity));
    const crm = makeClient();
    let settled = false;

    await expect(crm.opportunities.get('opp_1').then(undefined, () => 'failed')).resolves.toEqual(opportunity);
    await expect(crm.opportunities.get('opp_1').catch(() => 'failed')).resolves.toEqual(opportunity);
    await expect(
      crm.opportunities.get('opp_1').finally(() => {
        settled = true;
      }),
    ).resolves.toEqual(opportunity);
    expect(settled).toBe(true);
  });

  it("hands a failed call's CrmError to the rejection handler of then(), to catch() and through finally()", async () => {
    capture('get', OPPORTUNITY, () => HttpResponse.json({ message: 'No such opportunity' }, { status: 404 }));
    const crm = makeClient();

    const viaThen = await crm.opportunities.get('opp_1').then(
      () => 'fulfilled',
      (error: unknown) => error,
    );
    const viaCatch = await crm.opportunities.get('opp_1').catch((error: unknown) => error);
    const viaFinally = await rejection(crm.opportunities.get('opp_1').finally(() => {}));

    for (const error of [viaThen, viaCatch, viaFinally]) expect(error).toBeInstanceOf(CrmNotFoundError);
  });

  it('lets then() chains and Promise.all treat the result as an ordinary promise', async () => {
    capture('get', OPPORTUNITY, ok(opportunity));
    const crm = makeClient();

    const [name, both] = await Promise.all([
      crm.opportunities.get('opp_1').then((o) => o.name),
      Promise.all([crm.opportunities.get('opp_1'), crm.opportunities.get('opp_1')]),
    ]);

    expect(name).toBe('Renewal 2027');
    expect(both).toEqual([opportunity, opportunity]);
  });
});
