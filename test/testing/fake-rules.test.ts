import { describe, expect, test } from 'vitest';
import {
  createFakeCrm,
  type FakeCrm,
  type FakeCrmOptions,
  type FakeSeed,
  generateFakeData,
} from '../../src/testing/index';
import { server } from '../support/msw-server';

/*
 * The fake, rule by rule. Most requests are sent raw with `fetch`, so that rules the SDK client
 * never breaks (a missing key, a tenant in the wrong place, out-of-range paging) are exercised.
 */

const V1 = '/integrations/v1';
const TENANT = 'tenant_demo';

interface Issue {
  field: string;
  message: string;
}

interface Body {
  success: boolean;
  data?: unknown;
  pagination?: { page: number; limit: number; total: number; pages: number };
  error?: { code: string; message: string; details?: Issue[] };
}

interface Reply {
  status: number;
  headers: Headers;
  body: Body;
  /** `body.data` as a record (empty when it is not one). */
  data: Record<string, unknown>;
  /** `body.data` as a list (empty when it is not one). */
  list: Record<string, unknown>[];
}

interface SendOptions {
  query?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is, instead of `body`. */
  raw?: string;
  /** The `x-api-key` to send: the fake's current key by default, none when null. */
  key?: string | null;
  headers?: Record<string, string>;
}

/** A fake with the given options, its handlers installed for this test. */
function startFake(options: FakeCrmOptions = {}): FakeCrm {
  const fake = createFakeCrm(options);
  server.use(...fake.handlers);
  return fake;
}

/** Sends one raw request to the fake and reads its JSON answer. */
async function send(fake: FakeCrm, method: string, path: string, options: SendOptions = {}): Promise<Reply> {
  const url = new URL(fake.baseUrl + path);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const headers = new Headers(options.headers);
  const key = options.key === undefined ? fake.credentials.apiKey : options.key;
  if (typeof key === 'string') headers.set('x-api-key', key);
  let body: string | null = null;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== null) headers.set('content-type', 'application/json');
  const response = await fetch(url, { method, headers, body });
  const parsed = (await response.json()) as Body;
  return {
    status: response.status,
    headers: response.headers,
    body: parsed,
    data: typeof parsed.data === 'object' && parsed.data !== null ? (parsed.data as Record<string, unknown>) : {},
    list: Array.isArray(parsed.data) ? (parsed.data as Record<string, unknown>[]) : [],
  };
}

const ids = (reply: Reply): unknown[] => reply.list.map((item) => item.id);
const fields = (reply: Reply): string[] => (reply.body.error?.details ?? []).map((issue) => issue.field);
const admin = (fake: FakeCrm) => ({ key: null, headers: { authorization: `Bearer ${fake.adminToken}` } });

/** A small tenant: an owner, an account, a contact and an opportunity linking them. */
const SEED = {
  users: [{ id: 'usr_ada', tenantId: TENANT, name: 'Ada Lovelace' }],
  accounts: [{ id: 'acc_1', tenantId: TENANT, name: 'Acme Ltd', ownerId: 'usr_ada' }],
  contacts: [
    {
      id: 'con_1',
      tenantId: TENANT,
      accountId: 'acc_1',
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@acme.test',
    },
  ],
  opportunities: [
    {
      id: 'opp_1',
      tenantId: TENANT,
      name: 'Acme renewal',
      accountId: 'acc_1',
      contactId: 'con_1',
      ownerId: 'usr_ada',
    },
  ],
} satisfies FakeSeed;

/** The same, plus a second tenant `t2` (key `k2`) with records of its own. */
const TWO_TENANTS = {
  tenants: [{ id: 't2', apiKey: 'k2' }],
  users: SEED.users,
  accounts: [...SEED.accounts, { id: 'acc_t2', tenantId: 't2', name: 'Other Co' }],
  contacts: [...SEED.contacts, { id: 'con_t2', tenantId: 't2', firstName: 'Olga', lastName: 'Other' }],
  opportunities: [...SEED.opportunities, { id: 'opp_t2', tenantId: 't2', name: 'Other deal', accountId: 'acc_t2' }],
  grants: [{ id: 'grant_t2', tenantId: 't2', status: 'active' }],
} satisfies FakeSeed;

describe('authentication with x-api-key', () => {
  test('a request without x-api-key is answered 401 UNAUTHORIZED', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT }, key: null });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    expect(reply.body.error?.message).toEqual(expect.any(String));
  });

  test('a wrong x-api-key is answered 401', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT }, key: 'nope' });
    expect(reply.status).toBe(401);
    expect(reply.body.error?.code).toBe('UNAUTHORIZED');
  });

  test("another tenant's key is refused with 401, though it opens that tenant's own records", async () => {
    const fake = startFake({ tenantId: TENANT, seed: TWO_TENANTS });
    const refused = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT }, key: 'k2' });
    expect(refused.status).toBe(401);
    const own = await send(fake, 'GET', `${V1}/opportunities/opp_t2`, { query: { tenantId: 't2' }, key: 'k2' });
    expect(own.status).toBe(200);
    expect(own.data.name).toBe('Other deal');
  });

  test('the key of the default tenant opens its records', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } });
    expect(reply.status).toBe(200);
    expect(reply.body.success).toBe(true);
    expect(reply.data).toMatchObject({ id: 'opp_1', name: 'Acme renewal' });
  });
});

describe('tenant resolution', () => {
  test('GET and PUT endpoints read tenantId from the query', async () => {
    const fake = startFake({ seed: SEED });
    const read = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } });
    expect(read.status).toBe(200);
    const update = await send(fake, 'PUT', `${V1}/contacts/con_1`, {
      query: { tenantId: TENANT },
      body: { position: 'CTO' },
    });
    expect(update.status).toBe(200);
    expect(update.data.position).toBe('CTO');
  });

  test('POST endpoints read tenantId from the body and store the record under that tenant', async () => {
    const fake = startFake();
    const reply = await send(fake, 'POST', `${V1}/accounts`, { body: { tenantId: TENANT, name: 'Globex' } });
    expect(reply.status).toBe(201);
    expect(fake.store.accounts.get(String(reply.data.id))?.tenantId).toBe(TENANT);
  });

  test('a POST endpoint ignores a tenantId sent in the query: 400 VALIDATION_ERROR naming tenantId', async () => {
    const fake = startFake();
    const reply = await send(fake, 'POST', `${V1}/accounts`, { query: { tenantId: TENANT }, body: { name: 'Globex' } });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe('VALIDATION_ERROR');
    expect(fields(reply)).toEqual(['tenantId']);
    expect(fake.store.accounts.size).toBe(0);
  });

  test('a PUT endpoint reads tenantId from the query only: one sent in the body leaves the call without a tenant', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'PUT', `${V1}/accounts/acc_1`, { body: { tenantId: TENANT, city: 'Leeds' } });
    expect(reply.status).toBe(400);
    expect(fields(reply)).toEqual(['tenantId']);
    expect(fake.store.accounts.get('acc_1')?.city).toBeUndefined();
  });

  test('x-tenant-id names the tenant when tenantId is absent, in the query and in the body', async () => {
    const fake = startFake({ seed: SEED });
    const read = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { headers: { 'x-tenant-id': TENANT } });
    expect(read.status).toBe(200);
    expect(read.data.id).toBe('opp_1');
    const created = await send(fake, 'POST', `${V1}/accounts`, {
      headers: { 'x-tenant-id': TENANT },
      body: { name: 'Initech' },
    });
    expect(created.status).toBe(201);
    expect(fake.store.accounts.get(String(created.data.id))).toMatchObject({ tenantId: TENANT, name: 'Initech' });
  });

  test('a request naming no tenant at all is answered 400 VALIDATION_ERROR', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`);
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe('VALIDATION_ERROR');
    expect(fields(reply)).toEqual(['tenantId']);
  });

  test('tenantId and x-tenant-id naming different tenants is 400 TENANT_MISMATCH', async () => {
    const fake = startFake({ tenantId: TENANT, seed: TWO_TENANTS });
    const inQuery = await send(fake, 'GET', `${V1}/opportunities/opp_1`, {
      query: { tenantId: TENANT },
      headers: { 'x-tenant-id': 't2' },
    });
    expect(inQuery.status).toBe(400);
    expect(inQuery.body).toMatchObject({ success: false, error: { code: 'TENANT_MISMATCH' } });
    const inBody = await send(fake, 'POST', `${V1}/accounts`, {
      body: { tenantId: TENANT, name: 'Globex' },
      headers: { 'x-tenant-id': 't2' },
    });
    expect(inBody.status).toBe(400);
    expect(inBody.body.error?.code).toBe('TENANT_MISMATCH');
    expect(fake.store.accounts.size).toBe(2);
  });

  test('tenantId and x-tenant-id naming the same tenant are accepted', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`, {
      query: { tenantId: TENANT },
      headers: { 'x-tenant-id': TENANT },
    });
    expect(reply.status).toBe(200);
  });

  test('records of another tenant are invisible: reads and updates answer 404, lists leave them out', async () => {
    const fake = startFake({ tenantId: TENANT, seed: TWO_TENANTS });
    const query = { tenantId: TENANT };
    const read = await send(fake, 'GET', `${V1}/opportunities/opp_t2`, { query });
    expect(read.status).toBe(404);
    expect(read.body.error?.code).toBe('NOT_FOUND');
    expect((await send(fake, 'PUT', `${V1}/opportunities/opp_t2`, { query, body: { stage: 'won' } })).status).toBe(404);
    expect((await send(fake, 'PUT', `${V1}/accounts/acc_t2`, { query, body: { city: 'Oslo' } })).status).toBe(404);
    expect((await send(fake, 'PUT', `${V1}/contacts/con_t2`, { query, body: { position: 'x' } })).status).toBe(404);
    const activities = await send(fake, 'GET', `${V1}/activities`, { query: { ...query, opportunityId: 'opp_t2' } });
    expect(activities.status).toBe(404);
    const grant = await send(fake, 'GET', `${V1}/grants/resolve`, { query: { ...query, grantId: 'grant_t2' } });
    expect(grant.status).toBe(404);
    const contacts = await send(fake, 'GET', `${V1}/contacts`, { query });
    expect(ids(contacts)).toEqual(['con_1']);
    expect(fake.store.opportunities.get('opp_t2')?.stage).toBeUndefined();
    expect(fake.store.accounts.get('acc_t2')?.city).toBeUndefined();
  });

  test("another tenant's account cannot be referenced: 400 INVALID_REFERENCE naming accountId", async () => {
    const fake = startFake({ tenantId: TENANT, seed: TWO_TENANTS });
    const reply = await send(fake, 'POST', `${V1}/opportunities`, {
      body: { tenantId: TENANT, name: 'Poach', accountId: 'acc_t2' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe('INVALID_REFERENCE');
    expect(fields(reply)).toEqual(['accountId']);
    expect(fake.store.opportunities.size).toBe(2);
  });
});

describe('key management', () => {
  test('key management without a bearer token, or with a wrong one, is answered 401', async () => {
    const fake = startFake();
    const none = await send(fake, 'GET', '/integrations/api-key', { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error?.code).toBe('UNAUTHORIZED');
    const wrong = await send(fake, 'POST', '/integrations/api-key/generate', {
      key: null,
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(wrong.status).toBe(401);
    // The integration key is not an administrator's credential.
    const apiKeyOnly = await send(fake, 'POST', '/integrations/api-key/generate');
    expect(apiKeyOnly.status).toBe(401);
    expect(fake.credentials.apiKey).toBe('fake-api-key-tenant_demo');
  });

  test("a user whose role is 'user' is refused with 403 FORBIDDEN", async () => {
    const fake = startFake({
      seed: { users: [{ id: 'usr_bob', tenantId: TENANT, name: 'Bob', token: 'bob-token', role: 'user' }] },
    });
    const options = { key: null, headers: { authorization: 'Bearer bob-token' } };
    const status = await send(fake, 'GET', '/integrations/api-key', options);
    expect(status.status).toBe(403);
    expect(status.body).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    const generate = await send(fake, 'POST', '/integrations/api-key/generate', options);
    expect(generate.status).toBe(403);
    expect(fake.credentials.apiKey).toBe('fake-api-key-tenant_demo');
  });

  test('the administrator reads the state of the key', async () => {
    const fake = startFake();
    const reply = await send(fake, 'GET', '/integrations/api-key', admin(fake));
    expect(reply.status).toBe(200);
    expect(reply.data).toMatchObject({ tenantId: TENANT, hasKey: true });
  });

  test('generating a key rotates it: the old key is refused with 401 and the new one works', async () => {
    const fake = startFake({ seed: SEED });
    const oldKey = fake.credentials.apiKey;
    const generated = await send(fake, 'POST', '/integrations/api-key/generate', admin(fake));
    expect(generated.status).toBe(201);
    const newKey = generated.data.apiKey;
    expect(newKey).toEqual(expect.any(String));
    expect(newKey).not.toBe(oldKey);
    expect(fake.credentials.apiKey).toBe(newKey);

    const path = `${V1}/opportunities/opp_1`;
    const query = { tenantId: TENANT };
    const withOld = await send(fake, 'GET', path, { query, key: oldKey ?? null });
    expect(withOld.status).toBe(401);
    const withNew = await send(fake, 'GET', path, { query, key: String(newKey) });
    expect(withNew.status).toBe(200);
  });

  test('a tenant created without a key refuses every call until the administrator generates one', async () => {
    const fake = startFake({ apiKey: null, seed: SEED });
    expect(fake.credentials.apiKey).toBeUndefined();
    const before = await send(fake, 'GET', '/integrations/api-key', admin(fake));
    expect(before.data.hasKey).toBe(false);
    const refused = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT }, key: 'x' });
    expect(refused.status).toBe(401);

    const generated = await send(fake, 'POST', '/integrations/api-key/generate', admin(fake));
    const accepted = await send(fake, 'GET', `${V1}/opportunities/opp_1`, {
      query: { tenantId: TENANT },
      key: String(generated.data.apiKey),
    });
    expect(accepted.status).toBe(200);
    const after = await send(fake, 'GET', '/integrations/api-key', admin(fake));
    expect(after.data.hasKey).toBe(true);
  });
});

describe('generated ids, timestamps and derived fields', () => {
  test('a created record gets a generated id and createdAt/updatedAt from the fake clock', async () => {
    const fake = startFake({ now: () => new Date('2026-03-01T09:00:00.000Z') });
    const first = await send(fake, 'POST', `${V1}/accounts`, { body: { tenantId: TENANT, name: 'Globex' } });
    const second = await send(fake, 'POST', `${V1}/accounts`, { body: { tenantId: TENANT, name: 'Hooli' } });
    expect(first.data).toMatchObject({
      id: expect.stringMatching(/^acc_/),
      name: 'Globex',
      createdAt: '2026-03-01T09:00:00.000Z',
      updatedAt: '2026-03-01T09:00:00.000Z',
    });
    expect(second.data.id).not.toBe(first.data.id);
    expect(fake.store.accounts.get(String(first.data.id))?.name).toBe('Globex');
  });

  test('an update changes updatedAt and the field, and keeps createdAt', async () => {
    let now = new Date('2026-03-01T09:00:00.000Z');
    const fake = startFake({ now: () => now, seed: { accounts: [{ id: 'acc_1', tenantId: TENANT, name: 'Acme' }] } });
    const opportunity = await send(fake, 'POST', `${V1}/opportunities`, {
      body: { tenantId: TENANT, name: 'Deal', accountId: 'acc_1' },
    });
    now = new Date('2026-03-02T10:30:00.000Z');
    const updated = await send(fake, 'PUT', `${V1}/opportunities/${String(opportunity.data.id)}`, {
      query: { tenantId: TENANT },
      body: { stage: 'negotiation', amount: 1200 },
    });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({
      id: opportunity.data.id,
      name: 'Deal',
      stage: 'negotiation',
      amount: 1200,
      createdAt: '2026-03-01T09:00:00.000Z',
      updatedAt: '2026-03-02T10:30:00.000Z',
    });
    expect(fake.store.opportunities.get(String(opportunity.data.id))?.stage).toBe('negotiation');
  });

  test('an opportunity shows the names of its account, contact and owner, read from the stored records', async () => {
    const fake = startFake({ seed: SEED });
    const query = { tenantId: TENANT };
    const before = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query });
    expect(before.data).toMatchObject({ account: 'Acme Ltd', contact: 'Grace Hopper', owner: 'Ada Lovelace' });
    await send(fake, 'PUT', `${V1}/accounts/acc_1`, { query, body: { name: 'Acme Group' } });
    const after = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query });
    expect(after.data.account).toBe('Acme Group');
  });

  test('activitiesCount and lastActivityDate follow the activities of the opportunity', async () => {
    const fake = startFake({ seed: SEED });
    const query = { tenantId: TENANT };
    const before = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query });
    expect(before.data).toMatchObject({ activitiesCount: 0, lastActivityDate: null });
    for (const activityDate of ['2026-02-10T09:00:00.000Z', '2026-02-12T09:00:00.000Z', '2026-02-11T09:00:00.000Z']) {
      const created = await send(fake, 'POST', `${V1}/activities`, {
        body: {
          tenantId: TENANT,
          relatedToType: 'opportunity',
          relatedToId: 'opp_1',
          type: 'call',
          subject: 'Call',
          activityDate,
        },
      });
      expect(created.status).toBe(201);
    }
    const after = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query });
    expect(after.data).toMatchObject({ activitiesCount: 3, lastActivityDate: '2026-02-12T09:00:00.000Z' });
  });

  test('lastActivityDate is the latest activity even when the dates carry different UTC offsets', async () => {
    const fake = startFake({ seed: SEED });
    const latest = '2026-03-01T09:00:00Z';
    // 10:00 at +05:00 is 05:00Z: earlier than `latest`, though it sorts after it as text.
    const earlier = '2026-03-01T10:00:00+05:00';
    for (const activityDate of [latest, earlier]) {
      await send(fake, 'POST', `${V1}/activities`, {
        body: {
          tenantId: TENANT,
          relatedToType: 'opportunity',
          relatedToId: 'opp_1',
          type: 'call',
          subject: 'Call',
          activityDate,
        },
      });
    }
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } });
    expect(reply.data.activitiesCount).toBe(2);
    expect(Date.parse(String(reply.data.lastActivityDate))).toBe(Date.parse(latest));
  });

  test("a contact shows its account's name as account_name, and null without an account", async () => {
    const fake = startFake({ seed: SEED });
    const linked = await send(fake, 'POST', `${V1}/contacts`, {
      body: { tenantId: TENANT, accountId: 'acc_1', firstName: 'Alan', email: 'alan@acme.test' },
    });
    expect(linked.status).toBe(201);
    expect(linked.data).toMatchObject({ accountId: 'acc_1', firstName: 'Alan', account_name: 'Acme Ltd' });
    const loose = await send(fake, 'POST', `${V1}/contacts`, { body: { tenantId: TENANT, firstName: 'Linus' } });
    expect(loose.data.account_name).toBeNull();
  });

  test("an activity shows its opportunity's name as relatedEntityName and its owner's name as ownerName", async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'POST', `${V1}/activities`, {
      body: {
        tenantId: TENANT,
        relatedToType: 'opportunity',
        relatedToId: 'opp_1',
        type: 'meeting',
        subject: 'Kick-off',
        ownerId: 'usr_ada',
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.data).toMatchObject({
      id: expect.stringMatching(/^act_/),
      tenantId: TENANT,
      relatedToType: 'opportunity',
      relatedToId: 'opp_1',
      relatedEntityName: 'Acme renewal',
      ownerName: 'Ada Lovelace',
      subject: 'Kick-off',
    });
  });

  test('an activity on an opportunity that does not exist is refused with 400 INVALID_REFERENCE', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'POST', `${V1}/activities`, {
      body: { tenantId: TENANT, relatedToType: 'opportunity', relatedToId: 'opp_404', type: 'call', subject: 'x' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe('INVALID_REFERENCE');
    expect(fields(reply)).toEqual(['relatedToId']);
    expect(fake.store.activities.size).toBe(0);
  });
});

describe('lists and their filters', () => {
  /** opp_1 has act_a (call, Ada, Jan), act_b (meeting, Bob, Feb), act_c (call, Bob, Mar); opp_2 has act_d. */
  const ACTIVITY_SEED = {
    ...SEED,
    users: [...SEED.users, { id: 'usr_bob', tenantId: TENANT, name: 'Bob Builder' }],
    opportunities: [...SEED.opportunities, { id: 'opp_2', tenantId: TENANT, name: 'Acme pilot', accountId: 'acc_1' }],
    activities: [
      { id: 'act_a', type: 'call', ownerId: 'usr_ada', activityDate: '2026-01-10T10:00:00.000Z' },
      { id: 'act_b', type: 'meeting', ownerId: 'usr_bob', activityDate: '2026-02-10T10:00:00.000Z' },
      { id: 'act_c', type: 'call', ownerId: 'usr_bob', activityDate: '2026-03-10T10:00:00.000Z' },
      { id: 'act_d', type: 'call', ownerId: 'usr_ada', activityDate: '2026-02-15T10:00:00.000Z', opp: 'opp_2' },
    ].map(({ opp, ...activity }) => ({
      ...activity,
      tenantId: TENANT,
      relatedToType: 'opportunity' as const,
      relatedToId: opp ?? 'opp_1',
      subject: `Activity ${activity.id}`,
    })),
  } satisfies FakeSeed;

  const listActivities = (fake: FakeCrm, query: Record<string, string>) =>
    send(fake, 'GET', `${V1}/activities`, { query: { tenantId: TENANT, opportunityId: 'opp_1', ...query } });

  test('activities are listed for the requested opportunity only, in the order they were logged', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const reply = await listActivities(fake, {});
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual(['act_a', 'act_b', 'act_c']);
    expect(reply.body.pagination?.total).toBe(3);
    expect(ids(await listActivities(fake, { opportunityId: 'opp_2' }))).toEqual(['act_d']);
  });

  test('activities are filtered by ownerId', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const reply = await listActivities(fake, { ownerId: 'usr_bob' });
    expect(ids(reply)).toEqual(['act_b', 'act_c']);
    expect(reply.list[0]?.ownerName).toBe('Bob Builder');
  });

  test('activities are filtered by type', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    expect(ids(await listActivities(fake, { type: 'call' }))).toEqual(['act_a', 'act_c']);
    expect(ids(await listActivities(fake, { type: 'email' }))).toEqual([]);
  });

  test('activities are filtered by fromDate and toDate, alone or together', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    expect(ids(await listActivities(fake, { fromDate: '2026-02-01T00:00:00Z' }))).toEqual(['act_b', 'act_c']);
    expect(ids(await listActivities(fake, { toDate: '2026-02-28T00:00:00Z' }))).toEqual(['act_a', 'act_b']);
    const between = await listActivities(fake, { fromDate: '2026-02-01T00:00:00Z', toDate: '2026-02-28T00:00:00Z' });
    expect(ids(between)).toEqual(['act_b']);
    expect(between.body.pagination?.total).toBe(1);
  });

  test('activity filters combine', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const reply = await listActivities(fake, { type: 'call', ownerId: 'usr_bob', fromDate: '2026-01-01T00:00:00Z' });
    expect(ids(reply)).toEqual(['act_c']);
  });

  test('listing activities without opportunityId is 400 VALIDATION_ERROR naming it, in English', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const reply = await send(fake, 'GET', `${V1}/activities`, { query: { tenantId: TENANT } });
    expect(reply.status).toBe(400);
    expect(fields(reply)).toEqual(['opportunityId']);
    expect(reply.body.error?.message).toBe('opportunityId: Required');
  });

  test('contacts are filtered by status', async () => {
    const fake = startFake({
      seed: {
        contacts: [
          { id: 'con_a', tenantId: TENANT, firstName: 'A', status: 'active' },
          { id: 'con_b', tenantId: TENANT, firstName: 'B', status: 'inactive' },
          { id: 'con_c', tenantId: TENANT, firstName: 'C', status: 'active' },
        ],
      },
    });
    const query = { tenantId: TENANT };
    expect(ids(await send(fake, 'GET', `${V1}/contacts`, { query: { ...query, status: 'inactive' } }))).toEqual([
      'con_b',
    ]);
    expect(ids(await send(fake, 'GET', `${V1}/contacts`, { query: { ...query, status: 'active' } }))).toEqual([
      'con_a',
      'con_c',
    ]);
    expect(ids(await send(fake, 'GET', `${V1}/contacts`, { query }))).toEqual(['con_a', 'con_b', 'con_c']);
  });

  test('a page holds limit records and pagination reports page, limit, total and pages', async () => {
    const contacts = Array.from({ length: 45 }, (_, i) => ({ id: `con_${i}`, tenantId: TENANT, firstName: `N${i}` }));
    const fake = startFake({ seed: { contacts } });
    const query = { tenantId: TENANT };
    const second = await send(fake, 'GET', `${V1}/contacts`, { query: { ...query, page: '2', limit: '20' } });
    expect(second.body.pagination).toEqual({ page: 2, limit: 20, total: 45, pages: 3 });
    expect(ids(second)).toEqual(contacts.slice(20, 40).map((c) => c.id));
    const last = await send(fake, 'GET', `${V1}/contacts`, { query: { ...query, page: '3', limit: '20' } });
    expect(ids(last)).toEqual(['con_40', 'con_41', 'con_42', 'con_43', 'con_44']);
    const beyond = await send(fake, 'GET', `${V1}/contacts`, { query: { ...query, page: '4', limit: '20' } });
    expect(beyond.list).toEqual([]);
    expect(beyond.body.pagination).toEqual({ page: 4, limit: 20, total: 45, pages: 3 });
  });

  test('without page and limit a list answers page 1 with the default limit of 20', async () => {
    const contacts = Array.from({ length: 25 }, (_, i) => ({ tenantId: TENANT, firstName: `N${i}` }));
    const fake = startFake({ seed: { contacts } });
    const reply = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });
    expect(reply.list).toHaveLength(20);
    expect(reply.body.pagination).toEqual({ page: 1, limit: 20, total: 25, pages: 2 });
  });

  test('limit 1 and limit 200 are accepted', async () => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const one = await listActivities(fake, { limit: '1' });
    expect(one.status).toBe(200);
    expect(one.body.pagination).toEqual({ page: 1, limit: 1, total: 3, pages: 3 });
    const most = await listActivities(fake, { limit: '200' });
    expect(most.status).toBe(200);
    expect(most.body.pagination).toEqual({ page: 1, limit: 200, total: 3, pages: 1 });
  });

  test.each([
    ['activities', 'limit', '0'],
    ['activities', 'limit', '201'],
    ['activities', 'page', '0'],
    ['activities', 'page', 'two'],
    ['contacts', 'limit', '0'],
    ['contacts', 'limit', '201'],
    ['contacts', 'page', '0'],
    ['contacts', 'limit', '2.5'],
  ])('listing %s with %s=%s is answered 400 VALIDATION_ERROR naming that field', async (list, field, value) => {
    const fake = startFake({ seed: ACTIVITY_SEED });
    const reply = await send(fake, 'GET', `${V1}/${list}`, {
      query: { tenantId: TENANT, ...(list === 'activities' ? { opportunityId: 'opp_1' } : {}), [field]: value },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    expect(fields(reply)).toEqual([field]);
    expect(reply.body.error?.message).toContain(field);
  });
});

describe('errors', () => {
  test('invalid input is answered 400 { success: false, error: { code, message, details } } naming every field', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'POST', `${V1}/activities`, {
      body: { tenantId: TENANT, relatedToType: 'opportunity', relatedToId: 'opp_1', type: 'fax', subject: '' },
    });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({
      success: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: expect.stringContaining('subject'),
        details: [
          { field: 'type', message: expect.any(String) },
          { field: 'subject', message: expect.any(String) },
        ],
      },
    });
    expect(fake.store.activities.size).toBe(0);
  });

  test('a field the endpoint does not know is accepted and ignored, as extraBody sends one', async () => {
    const fake = startFake();
    const reply = await send(fake, 'POST', `${V1}/accounts`, {
      body: { tenantId: TENANT, name: 'Acme', colour: 'red' },
    });
    expect(reply.status).toBe(201);
    expect([...fake.store.accounts.values()].at(-1)).toMatchObject({ name: 'Acme' });
    expect([...fake.store.accounts.values()].at(-1)).not.toHaveProperty('colour');
  });

  test('a query parameter the endpoint does not know is accepted and ignored, as extraQuery sends one', async () => {
    const fake = startFake();
    const reply = await send(fake, 'GET', `${V1}/contacts`, {
      query: { tenantId: TENANT, updatedSince: 'x', limit: '2' },
    });
    expect(reply.status).toBe(200);
  });

  test('a required field missing on create is refused with 400 naming it', async () => {
    const fake = startFake({ seed: SEED });
    const reply = await send(fake, 'POST', `${V1}/opportunities`, { body: { tenantId: TENANT, name: 'No account' } });
    expect(reply.status).toBe(400);
    expect(fields(reply)).toEqual(['accountId']);
  });

  test('unknown ids are answered 404 NOT_FOUND on every endpoint that takes one', async () => {
    const fake = startFake({ seed: SEED });
    const query = { tenantId: TENANT };
    const replies = [
      await send(fake, 'GET', `${V1}/opportunities/opp_404`, { query }),
      await send(fake, 'PUT', `${V1}/opportunities/opp_404`, { query, body: { stage: 'x' } }),
      await send(fake, 'PUT', `${V1}/accounts/acc_404`, { query, body: { city: 'x' } }),
      await send(fake, 'PUT', `${V1}/contacts/con_404`, { query, body: { position: 'x' } }),
      await send(fake, 'GET', `${V1}/activities`, { query: { ...query, opportunityId: 'opp_404' } }),
      await send(fake, 'GET', `${V1}/grants/resolve`, { query: { ...query, grantId: 'grant_404' } }),
    ];
    expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(replies.map((r) => r.body.error?.code)).toEqual(Array(6).fill('NOT_FOUND'));
  });

  test('an id that needs percent-encoding in the path is found', async () => {
    const fake = startFake({
      seed: { ...SEED, opportunities: [{ id: 'opp 1/2', tenantId: TENANT, name: 'Awkward', accountId: 'acc_1' }] },
    });
    const reply = await send(fake, 'GET', `${V1}/opportunities/${encodeURIComponent('opp 1/2')}`, {
      query: { tenantId: TENANT },
    });
    expect(reply.status).toBe(200);
    expect(reply.data.name).toBe('Awkward');
  });

  test('an unknown route, or a known path with another method, is answered 404 and logged without an endpoint', async () => {
    const fake = startFake({ seed: SEED });
    const route = await send(fake, 'GET', `${V1}/leads`, { query: { tenantId: TENANT } });
    expect(route.status).toBe(404);
    expect(route.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    const method = await send(fake, 'DELETE', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } });
    expect(method.status).toBe(404);
    expect(fake.requests.map((r) => [r.endpoint, r.method, r.status])).toEqual([
      [null, 'GET', 404],
      [null, 'DELETE', 404],
    ]);
    expect(fake.store.opportunities.has('opp_1')).toBe(true);
  });

  test('a body that is not JSON is answered 400 INVALID_JSON', async () => {
    const fake = startFake();
    const reply = await send(fake, 'POST', `${V1}/accounts`, { raw: '{"tenantId":"tenant_demo","name":' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ success: false, error: { code: 'INVALID_JSON' } });
    expect(fake.store.accounts.size).toBe(0);
    expect(fake.requests[0]?.body).toBe('{"tenantId":"tenant_demo","name":');
  });
});

describe('the request log', () => {
  test('fake.requests records the endpoint, method, path, query, headers, body, status, request id and arrival time of each call', async () => {
    let clock = Date.parse('2026-03-01T10:00:00.000Z');
    const fake = startFake({ seed: SEED, now: () => new Date(clock) });
    const created = await send(fake, 'POST', `${V1}/accounts`, {
      body: { tenantId: TENANT, name: 'Globex' },
      headers: { 'X-Trace': 'abc' },
    });
    clock += 250;
    const missing = await send(fake, 'GET', `${V1}/opportunities/opp_404`, { query: { tenantId: TENANT } });
    expect(fake.requests).toEqual([
      {
        endpoint: 'createAccount',
        method: 'POST',
        path: '/integrations/v1/accounts',
        query: {},
        headers: expect.objectContaining({
          'x-api-key': 'fake-api-key-tenant_demo',
          'content-type': 'application/json',
          'x-trace': 'abc',
        }),
        body: { tenantId: TENANT, name: 'Globex' },
        status: 201,
        requestId: created.headers.get('x-request-id'),
        receivedAt: Date.parse('2026-03-01T10:00:00.000Z'),
      },
      {
        endpoint: 'getOpportunity',
        method: 'GET',
        path: '/integrations/v1/opportunities/opp_404',
        query: { tenantId: TENANT },
        headers: expect.objectContaining({ 'x-api-key': 'fake-api-key-tenant_demo' }),
        body: undefined,
        status: 404,
        requestId: missing.headers.get('x-request-id'),
        receivedAt: Date.parse('2026-03-01T10:00:00.250Z'),
      },
    ]);
  });

  test('fake.reset() forgets the log and pending faults', async () => {
    const fake = startFake({ seed: SEED });
    await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });
    fake.failNext({ status: 500 });
    fake.reset();
    expect(fake.requests).toEqual([]);
    const reply = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });
    expect(reply.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('fault injection with failNext()', () => {
  const contacts = (fake: FakeCrm) => send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });

  test('the next call answers the given status with Retry-After, then the fake recovers', async () => {
    const fake = startFake({ seed: SEED });
    fake.failNext({ status: 503, retryAfter: 7 });
    const failed = await contacts(fake);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('7');
    expect(failed.body).toMatchObject({ success: false, error: { code: 'INJECTED_FAULT' } });
    const next = await contacts(fake);
    expect(next.status).toBe(200);
    expect(fake.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  test('a fault given a string body answers it as HTML', async () => {
    const fake = startFake();
    fake.failNext({ status: 502, body: '<h1>Bad gateway</h1>' });
    const response = await fetch(`${fake.baseUrl}${V1}/contacts?tenantId=${TENANT}`);
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toBe('text/html');
    expect(await response.text()).toBe('<h1>Bad gateway</h1>');
  });

  test('a fault with delayMs answers normally, after the delay', async () => {
    const fake = startFake({ seed: SEED });
    fake.failNext({ delayMs: 40 });
    const started = performance.now();
    const reply = await contacts(fake);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual(['con_1']);
  });

  test('a fault with drop makes fetch reject, and is logged with status 0', async () => {
    const fake = startFake({ seed: SEED });
    fake.failNext({ drop: true });
    await expect(fetch(`${fake.baseUrl}${V1}/contacts?tenantId=${TENANT}`)).rejects.toThrow(TypeError);
    expect(fake.requests.map((r) => [r.endpoint, r.status])).toEqual([['listContacts', 0]]);
    expect((await contacts(fake)).status).toBe(200);
  });

  test('a fault limited to one endpoint leaves the other endpoints alone', async () => {
    const fake = startFake({ seed: SEED });
    fake.failNext({ endpoint: 'listContacts', status: 500 });
    const other = await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } });
    expect(other.status).toBe(200);
    expect((await contacts(fake)).status).toBe(500);
    expect((await contacts(fake)).status).toBe(200);
  });

  test('a fault with times: N fails exactly the next N matching calls', async () => {
    const fake = startFake({ seed: SEED });
    fake.failNext({ endpoint: 'listContacts', status: 429, times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await contacts(fake)).status);
    expect(statuses).toEqual([429, 429, 200]);
  });

  test('a fault is answered before authentication, even to a call without a key', async () => {
    const fake = startFake();
    fake.failNext({ status: 503 });
    const reply = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT }, key: null });
    expect(reply.status).toBe(503);
  });
});

describe('seeding', () => {
  test('records seeded through createFakeCrm({ seed }) are served with their ids and timestamps', async () => {
    const fake = startFake({
      seed: {
        accounts: [{ id: 'acc_x', tenantId: TENANT, name: 'Seeded', createdAt: '2025-01-01T00:00:00.000Z' }],
        opportunities: [{ id: 'opp_x', tenantId: TENANT, name: 'Seeded deal', accountId: 'acc_x', amount: 10 }],
      },
    });
    const reply = await send(fake, 'GET', `${V1}/opportunities/opp_x`, { query: { tenantId: TENANT } });
    expect(reply.data).toMatchObject({ id: 'opp_x', name: 'Seeded deal', amount: 10, account: 'Seeded' });
    expect(fake.store.accounts.get('acc_x')).toMatchObject({
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
    });
  });

  test('records seeded through fake.store.seed() after creation are served, with ids generated where missing', async () => {
    const fake = startFake({ now: () => new Date('2026-04-01T00:00:00.000Z') });
    fake.store.seed({ contacts: [{ tenantId: TENANT, firstName: 'Late', status: 'inactive' }] });
    const reply = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT, status: 'inactive' } });
    expect(reply.list).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^con_/),
        firstName: 'Late',
        createdAt: '2026-04-01T00:00:00.000Z',
      }),
    ]);
  });

  test("seeded records that name no tenant belong to the fake's own tenant", async () => {
    const fake = startFake({
      tenantId: 'acme',
      seed: {
        accounts: [{ id: 'acc_n', name: 'No tenant given' }],
        grants: [{ id: 'grant_n', scopes: ['crm.read'] }],
      },
    });
    const account = await send(fake, 'PUT', `${V1}/accounts/acc_n`, {
      query: { tenantId: 'acme' },
      body: { city: 'Oslo' },
    });
    expect(account.status).toBe(200);
    expect(fake.store.accounts.get('acc_n')).toMatchObject({ tenantId: 'acme', city: 'Oslo' });
    const grant = await send(fake, 'GET', `${V1}/grants/resolve`, { query: { tenantId: 'acme', grantId: 'grant_n' } });
    expect(grant.data).toMatchObject({ grantId: 'grant_n', tenantId: 'acme', scopes: ['crm.read'] });
  });

  test("the default grant 'grant_demo' resolves for the default tenant", async () => {
    const fake = startFake();
    const reply = await send(fake, 'GET', `${V1}/grants/resolve`, {
      query: { tenantId: TENANT, grantId: 'grant_demo' },
    });
    expect(reply.status).toBe(200);
    expect(reply.data).toMatchObject({ grantId: 'grant_demo', tenantId: TENANT });
  });
});

describe('generateFakeData()', () => {
  test('the same seed gives the same records', () => {
    expect(generateFakeData({ seed: 42 })).toEqual(generateFakeData({ seed: 42 }));
  });

  test('a different seed gives different records', () => {
    const a = generateFakeData({ seed: 42 });
    const b = generateFakeData({ seed: 43 });
    expect(b.accounts?.map((r) => r.name)).not.toEqual(a.accounts?.map((r) => r.name));
    expect(b.activities?.map((r) => r.type)).not.toEqual(a.activities?.map((r) => r.type));
  });

  test('it makes the requested number of each record, linked to one another', () => {
    const data = generateFakeData({ users: 3, accounts: 4, contacts: 7, opportunities: 5, activities: 23 });
    expect(data.users).toHaveLength(3);
    expect(data.accounts).toHaveLength(4);
    expect(data.contacts).toHaveLength(7);
    expect(data.opportunities).toHaveLength(5);
    expect(data.activities).toHaveLength(23);
    const accountIds = new Set(data.accounts?.map((r) => r.id));
    const opportunityIds = new Set(data.opportunities?.map((r) => r.id));
    expect(data.contacts?.every((r) => accountIds.has(String(r.accountId)))).toBe(true);
    expect(data.activities?.every((r) => opportunityIds.has(String(r.relatedToId)))).toBe(true);
    expect(data.activities?.every((r) => r.tenantId === TENANT)).toBe(true);
  });

  test('two fakes seeded from the same seed answer the same', async () => {
    const one = startFake({ seed: generateFakeData({ seed: 9, activities: 30 }) });
    const two = startFake({ baseUrl: 'https://other.fake', seed: generateFakeData({ seed: 9, activities: 30 }) });
    const query = { tenantId: TENANT, opportunityId: 'tenant_demo_g9_opp_3' };
    const fromOne = await send(one, 'GET', `${V1}/activities`, { query });
    const fromTwo = await send(two, 'GET', `${V1}/activities`, { query });
    expect(fromOne.list).toHaveLength(3);
    expect(fromTwo.body).toEqual(fromOne.body);
  });

  test('data generated for two tenants from the same seed keeps each tenant’s records apart', async () => {
    const fake = startFake({ seed: generateFakeData({ seed: 1, opportunities: 2, activities: 4 }) });
    fake.store.seed({ tenants: [{ id: 't2', apiKey: 'k2' }] });
    fake.store.seed(generateFakeData({ seed: 1, tenantId: 't2', opportunities: 2, activities: 4 }));
    const opportunity = await send(fake, 'GET', `${V1}/opportunities/tenant_demo_g1_opp_0`, {
      query: { tenantId: TENANT },
    });
    expect(opportunity.status).toBe(200);
    expect(opportunity.data.activitiesCount).toBe(2);
    const activities = await send(fake, 'GET', `${V1}/activities`, {
      query: { tenantId: TENANT, opportunityId: 'tenant_demo_g1_opp_0' },
    });
    expect(activities.list.every((a) => a.tenantId === TENANT)).toBe(true);
  });
});

describe('clear()', () => {
  test('removes every record consistently: lists are empty, old ids answer 404, and a seed with the same ids is taken again', async () => {
    const fake = startFake({
      seed: {
        ...SEED,
        activities: [
          {
            id: 'act_1',
            tenantId: TENANT,
            relatedToType: 'opportunity',
            relatedToId: 'opp_1',
            type: 'call',
            subject: 'Hi',
          },
        ],
      },
    });
    fake.clear();

    const contacts = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });
    expect(contacts.list).toEqual([]);
    expect(contacts.body.pagination).toMatchObject({ total: 0 });
    expect(contacts.status).toBe(200);
    const update = await send(fake, 'PUT', `${V1}/contacts/con_1`, {
      query: { tenantId: TENANT },
      body: { position: 'x' },
    });
    expect(update.status).toBe(404);
    expect((await send(fake, 'GET', `${V1}/opportunities/opp_1`, { query: { tenantId: TENANT } })).status).toBe(404);
    // The credentials and the users stay; the same ids can be seeded again.
    fake.store.seed(SEED);
    const again = await send(fake, 'GET', `${V1}/contacts`, { query: { tenantId: TENANT } });
    expect(ids(again)).toEqual(['con_1']);
    expect(
      (await send(fake, 'GET', `${V1}/activities`, { query: { tenantId: TENANT, opportunityId: 'opp_1' } })).list,
    ).toEqual([]);
  });
});
