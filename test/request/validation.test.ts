import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { endpoints } from '../../src/endpoints';
import {
  type AccountCreateInput,
  type AccountUpdateInput,
  type ActivityCreateInput,
  type ActivityListParams,
  type ContactCreateInput,
  type ContactListParams,
  CrmClient,
  CrmValidationError,
  type OpportunityCreateInput,
  type OpportunityUpdateInput,
  type RequestOptions,
} from '../../src/index';
import { parseContext } from '../../src/internal/endpoint/parse-context';
import { ContactInputSchema } from '../../src/schemas/contact';
import { BASE_URL, type Captured, capture, captureAll, makeClient, ok } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

/** Builds an input the types would refuse, to check that the runtime refuses it too. */
const invalid = <T>(value: Record<string, unknown>): T => value as T;

/**
 * Asserts that `call` rejects with a `CrmValidationError` whose issues name exactly `fields`
 * (each at least once), and returns the error for further checks.
 */
async function expectInvalid(call: PromiseLike<unknown>, fields: readonly string[]): Promise<CrmValidationError> {
  const error: unknown = await Promise.resolve(call).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(CrmValidationError);
  if (!(error instanceof CrmValidationError)) throw new Error('expected a CrmValidationError');
  expect([...new Set(error.issues.map((issue) => issue.field))].sort()).toEqual([...fields].sort());
  for (const field of fields) expect(error.message).toContain(field);
  return error;
}

/** A valid activity, to which each test adds one fault. */
const activity = { opportunityId: 'opp_1', type: 'call', subject: 'Discovery call' } as const;
/** A valid opportunity. */
const opportunity = { name: 'Renewal', accountId: 'acc_1' } as const;

describe('refused before sending: opportunities', () => {
  let seen: Captured[];
  const crm = () => {
    seen = captureAll();
    return makeClient();
  };

  it('names name and accountId when both required fields of create are missing, and sends nothing', async () => {
    const client = crm();
    await expectInvalid(client.opportunities.create(invalid<OpportunityCreateInput>({})), ['name', 'accountId']);
    expect(seen).toEqual([]);
  });

  it('refuses objects with a length where strings belong, with one type issue each and no TypeError', async () => {
    const client = crm();
    // zod's length checks compare `length` even after the type check failed; one without a prototype cannot be compared.
    const lengthy = { length: Object.create(null) };
    const errors = [
      await expectInvalid(client.opportunities.get(invalid<string>(lengthy)), ['id']),
      await expectInvalid(
        client.opportunities.create(invalid<OpportunityCreateInput>({ ...opportunity, name: lengthy })),
        ['name'],
      ),
      await expectInvalid(
        client.activities.create(invalid<ActivityCreateInput>({ ...activity, subject: lengthy, description: [1, 2] })),
        ['subject', 'description'],
      ),
    ];
    expect(errors.flatMap((error) => error.issues.map((issue) => issue.message))).toEqual([
      'Expected string, received object',
      'Expected string, received object',
      'Expected string, received object',
      'Expected string, received array',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses an empty name and an empty accountId on create (min length 1)', async () => {
    const client = crm();
    await expectInvalid(client.opportunities.create({ name: '', accountId: '' }), ['name', 'accountId']);
    expect(seen).toEqual([]);
  });

  it('refuses an opportunity type outside the enum', async () => {
    const client = crm();
    await expectInvalid(
      client.opportunities.create(invalid<OpportunityCreateInput>({ ...opportunity, type: 'partnership' })),
      ['type'],
    );
    expect(seen).toEqual([]);
  });

  it('names every offending field at once: name, type, amount and closeDate', async () => {
    const client = crm();
    await expectInvalid(
      client.opportunities.create(
        invalid<OpportunityCreateInput>({
          name: '',
          accountId: 'acc_1',
          type: 'other',
          amount: '12',
          closeDate: '2024-13-01T00:00:00Z',
        }),
      ),
      ['name', 'type', 'amount', 'closeDate'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses a month 13 date, a date-only string, a date-time without zone and an invalid Date', async () => {
    const client = crm();
    for (const value of ['2024-13-01', '2024-13-01T10:00:00Z', '2024-01-31', '2024-01-31T10:00:00', 'tomorrow']) {
      await expectInvalid(client.opportunities.create({ ...opportunity, expectedCloseDate: value }), [
        'expectedCloseDate',
      ]);
    }
    await expectInvalid(client.opportunities.create({ ...opportunity, closeDate: new Date('not a date') }), [
      'closeDate',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses tenantId inside the create input: the client supplies it', async () => {
    const client = crm();
    const error = await expectInvalid(
      client.opportunities.create(invalid<OpportunityCreateInput>({ ...opportunity, tenantId: 'tenant_evil' })),
      ['tenantId'],
    );
    expect(error.issues[0]?.message).toMatch(/tenant/i);
    expect(seen).toEqual([]);
  });

  it('refuses tenantId inside the update input', async () => {
    const client = crm();
    await expectInvalid(
      client.opportunities.update('opp_1', invalid<OpportunityUpdateInput>({ stage: 'won', tenantId: 'x' })),
      ['tenantId'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses unknown fields, naming each one', async () => {
    const client = crm();
    await expectInvalid(
      client.opportunities.create(invalid<OpportunityCreateInput>({ ...opportunity, colour: 'red', stageName: 'x' })),
      ['colour', 'stageName'],
    );
    expect(seen).toEqual([]);
  });

  it.each(['', '.', '..'])('refuses %j as the id of opportunities.get', async (id) => {
    const client = crm();
    await expectInvalid(client.opportunities.get(id), ['id']);
    expect(seen).toEqual([]);
  });

  it('names both the empty id and the invalid field of an update', async () => {
    const client = crm();
    await expectInvalid(
      client.opportunities.update('', invalid<OpportunityUpdateInput>({ type: 'nope', probability: 'high' })),
      ['id', 'type', 'probability'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses a date-only expectedCloseDate on update', async () => {
    const client = crm();
    await expectInvalid(client.opportunities.update('opp_1', { expectedCloseDate: '2026-01-31' }), [
      'expectedCloseDate',
    ]);
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: activities.create', () => {
  let seen: Captured[];
  const crm = () => {
    seen = captureAll();
    return makeClient();
  };

  it('names type and subject when both required fields are missing', async () => {
    const client = crm();
    await expectInvalid(client.activities.create(invalid<ActivityCreateInput>({ opportunityId: 'opp_1' })), [
      'type',
      'subject',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses an activity type outside the enum', async () => {
    const client = crm();
    await expectInvalid(client.activities.create(invalid<ActivityCreateInput>({ ...activity, type: 'fax' })), ['type']);
    expect(seen).toEqual([]);
  });

  it('refuses an empty subject', async () => {
    const client = crm();
    await expectInvalid(client.activities.create({ ...activity, subject: '' }), ['subject']);
    expect(seen).toEqual([]);
  });

  it('refuses a subject of 256 characters', async () => {
    const client = crm();
    await expectInvalid(client.activities.create({ ...activity, subject: 's'.repeat(256) }), ['subject']);
    expect(seen).toEqual([]);
  });

  it('refuses a description of 2001 characters', async () => {
    const client = crm();
    await expectInvalid(client.activities.create({ ...activity, description: 'd'.repeat(2001) }), ['description']);
    expect(seen).toEqual([]);
  });

  it('refuses an empty ownerId and an invalid activityDate together', async () => {
    const client = crm();
    await expectInvalid(client.activities.create({ ...activity, ownerId: '', activityDate: '2024-02-30' }), [
      'ownerId',
      'activityDate',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses an activity with both opportunityId and relatedToId', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.create(
        invalid<ActivityCreateInput>({ ...activity, relatedToType: 'opportunity', relatedToId: 'opp_2' }),
      ),
      ['opportunityId'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses an activity with neither opportunityId nor relatedToType + relatedToId', async () => {
    const client = crm();
    await expectInvalid(client.activities.create(invalid<ActivityCreateInput>({ type: 'call', subject: 'S' })), [
      'opportunityId',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses relatedToType without relatedToId', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.create(invalid<ActivityCreateInput>({ type: 'call', subject: 'S', relatedToType: 'account' })),
      ['relatedToId'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses a relatedToType outside account, contact and opportunity', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.create(
        invalid<ActivityCreateInput>({ type: 'call', subject: 'S', relatedToType: 'lead', relatedToId: 'l_1' }),
      ),
      ['relatedToType'],
    );
    expect(seen).toEqual([]);
  });

  it('names the relation fault and a field fault together (both opportunityId and relatedToId, empty subject)', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.create(
        invalid<ActivityCreateInput>({ ...activity, subject: '', relatedToType: 'opportunity', relatedToId: 'opp_2' }),
      ),
      ['opportunityId', 'subject'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses tenantId and unknown fields inside the input', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.create(invalid<ActivityCreateInput>({ ...activity, tenantId: 't', priority: 'high' })),
      ['tenantId', 'priority'],
    );
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: activities.list', () => {
  let seen: Captured[];
  const crm = () => {
    seen = captureAll();
    return makeClient();
  };

  it.each([0, 201, -5, 1.5])('refuses limit %d', async (limit) => {
    const client = crm();
    await expectInvalid(client.activities.list({ opportunityId: 'opp_1', limit }), ['limit']);
    expect(seen).toEqual([]);
  });

  it.each([0, -1, 2.5])('refuses page %d', async (page) => {
    const client = crm();
    await expectInvalid(client.activities.list({ opportunityId: 'opp_1', page }), ['page']);
    expect(seen).toEqual([]);
  });

  it('refuses a missing opportunityId and an empty one', async () => {
    const client = crm();
    await expectInvalid(client.activities.list(invalid<ActivityListParams>({})), ['opportunityId']);
    await expectInvalid(client.activities.list({ opportunityId: '' }), ['opportunityId']);
    expect(seen).toEqual([]);
  });

  it('names page, limit, type, fromDate and toDate together', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.list(
        invalid<ActivityListParams>({
          opportunityId: 'opp_1',
          page: 0,
          limit: 500,
          type: 'sms',
          fromDate: '2024-01-01',
          toDate: new Date(Number.NaN),
        }),
      ),
      ['page', 'limit', 'type', 'fromDate', 'toDate'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses tenantId in the list parameters', async () => {
    const client = crm();
    await expectInvalid(
      client.activities.list(invalid<ActivityListParams>({ opportunityId: 'opp_1', tenantId: 'tenant_2' })),
      ['tenantId'],
    );
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: accounts', () => {
  let seen: Captured[];
  const crm = () => {
    seen = captureAll();
    return makeClient();
  };

  it('refuses a create without name and one with an empty name', async () => {
    const client = crm();
    await expectInvalid(client.accounts.create(invalid<AccountCreateInput>({ status: 'active' })), ['name']);
    await expectInvalid(client.accounts.create({ name: '' }), ['name']);
    expect(seen).toEqual([]);
  });

  it('refuses an account status outside active, inactive and prospect, and an empty type', async () => {
    const client = crm();
    await expectInvalid(
      client.accounts.create(invalid<AccountCreateInput>({ name: 'A', status: 'closed', type: '' })),
      ['status', 'type'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses a non-number annualRevenue', async () => {
    const client = crm();
    await expectInvalid(client.accounts.create(invalid<AccountCreateInput>({ name: 'A', annualRevenue: '1M' })), [
      'annualRevenue',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses tenantId and unknown fields in the create input', async () => {
    const client = crm();
    await expectInvalid(client.accounts.create(invalid<AccountCreateInput>({ name: 'A', tenantId: 't', vat: '1' })), [
      'tenantId',
      'vat',
    ]);
    expect(seen).toEqual([]);
  });

  it.each(['', '.', '..'])('refuses %j as the id of accounts.update', async (id) => {
    const client = crm();
    await expectInvalid(client.accounts.update(id, { city: 'Lyon' }), ['id']);
    expect(seen).toEqual([]);
  });

  it('refuses an invalid status and tenantId in the update input', async () => {
    const client = crm();
    await expectInvalid(
      client.accounts.update('acc_1', invalid<AccountUpdateInput>({ status: 'deleted', tenantId: 't' })),
      ['status', 'tenantId'],
    );
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: contacts', () => {
  let seen: Captured[];
  const crm = () => {
    seen = captureAll();
    return makeClient();
  };

  it.each(['not-an-email', 'ada@', '@example.com', 'ada example.com'])('refuses the email %j', async (email) => {
    const client = crm();
    await expectInvalid(client.contacts.create({ email }), ['email']);
    expect(seen).toEqual([]);
  });

  it('accepts exactly the emails that zod’s z.email() accepts, with its message', () => {
    const email = fc.oneof(
      fc.emailAddress(),
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', '@', '-', '_', '+', "'", ' ', 'é'), maxLength: 16 }),
      fc.constantFrom('ada@example.com', 'a.b@c.io', '.a@b.io', 'a..b@c.io', 'a@b.c', 'a@b', 'a@-b.io'),
    );
    fc.assert(
      fc.property(email, (value) => {
        const ours = ContactInputSchema.safeParse({ email: value }, parseContext);
        const zods = z.email().safeParse(value, { error: z.locales.en().localeError });
        expect(ours.success).toBe(zods.success);
        expect(ours.error?.issues.map((issue) => issue.message)).toEqual(zods.error?.issues.map((i) => i.message));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a contact status outside active and inactive, and a non-boolean isPrimary', async () => {
    const client = crm();
    await expectInvalid(client.contacts.create(invalid<ContactCreateInput>({ status: 'prospect', isPrimary: 'yes' })), [
      'status',
      'isPrimary',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses tenantId and unknown fields in the create input', async () => {
    const client = crm();
    await expectInvalid(client.contacts.create(invalid<ContactCreateInput>({ tenantId: 't', twitter: '@a' })), [
      'tenantId',
      'twitter',
    ]);
    expect(seen).toEqual([]);
  });

  it.each(['', '.', '..'])('refuses %j as the id of contacts.update', async (id) => {
    const client = crm();
    await expectInvalid(client.contacts.update(id, { position: 'CTO' }), ['id']);
    expect(seen).toEqual([]);
  });

  it('refuses tenantId in the body of contacts.update and a bad email, together', async () => {
    const client = crm();
    await expectInvalid(
      client.contacts.update('con_1', invalid<ContactCreateInput>({ tenantId: 'tenant_2', email: 'nope' })),
      ['tenantId', 'email'],
    );
    expect(seen).toEqual([]);
  });

  it('refuses limit 0, limit 201, page 0, a fractional page and a status outside the enum in contacts.list', async () => {
    const client = crm();
    await expectInvalid(client.contacts.list({ limit: 0 }), ['limit']);
    await expectInvalid(client.contacts.list({ limit: 201 }), ['limit']);
    await expectInvalid(client.contacts.list({ page: 0 }), ['page']);
    await expectInvalid(client.contacts.list({ page: 1.5 }), ['page']);
    await expectInvalid(client.contacts.list(invalid<ContactListParams>({ status: 'archived' })), ['status']);
    await expectInvalid(client.contacts.list(invalid<ContactListParams>({ page: 0, limit: 0, tenantId: 't' })), [
      'page',
      'limit',
      'tenantId',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses a contacts.list iteration with an invalid limit without sending anything', async () => {
    const client = crm();
    const items: unknown[] = [];
    const iterate = async () => {
      for await (const contact of client.contacts.list({ limit: 1000 })) items.push(contact);
    };
    await expectInvalid(iterate(), ['limit']);
    expect(items).toEqual([]);
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: grants.resolve', () => {
  it('refuses an empty grantId', async () => {
    const seen = captureAll();
    await expectInvalid(makeClient().grants.resolve(''), ['grantId']);
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: per-call options', () => {
  it('refuses maxRetries -1 on an integration call', async () => {
    const seen = captureAll();
    await expectInvalid(makeClient().opportunities.get('opp_1', { maxRetries: -1 }), ['maxRetries']);
    expect(seen).toEqual([]);
  });

  it('refuses maxRetries -1 on a key-management call', async () => {
    const seen = captureAll();
    await expectInvalid(makeClient().apiKey.generate({ maxRetries: -1 }), ['maxRetries']);
    expect(seen).toEqual([]);
  });

  it.each(['a\r\nx-injected: 1', 'a\nb', 'a\rb'])('refuses the header value %j', async (value) => {
    const seen = captureAll();
    const error = await expectInvalid(
      makeClient().contacts.create({ firstName: 'Ada' }, { headers: { 'x-trace': value } }),
      ['headers.x-trace'],
    );
    expect(error.message).not.toContain('x-injected');
    expect(seen).toEqual([]);
  });

  it('refuses a zero timeout and a fractional maxRetries together', async () => {
    const seen = captureAll();
    await expectInvalid(makeClient().contacts.list({}, invalid<RequestOptions>({ timeout: 0, maxRetries: 1.5 })), [
      'timeout',
      'maxRetries',
    ]);
    expect(seen).toEqual([]);
  });
});

describe('refused before sending: missing credentials', () => {
  it('names apiKey when an integration call is made without one', async () => {
    vi.stubEnv('CRM_API_KEY', '');
    const seen = captureAll();
    const crm = new CrmClient({ baseUrl: BASE_URL, tenantId: 'tenant_1', apiKey: undefined });
    await expectInvalid(crm.opportunities.get('opp_1'), ['apiKey']);
    expect(seen).toEqual([]);
  });

  it('names adminToken when a key-management call is made without one', async () => {
    vi.stubEnv('CRM_ADMIN_TOKEN', '');
    const seen = captureAll();
    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: 'k', tenantId: 't', adminToken: undefined });
    await expectInvalid(crm.apiKey.status(), ['adminToken']);
    expect(seen).toEqual([]);
  });
});

describe('valid values at the boundaries are sent', () => {
  it('sends a valid call through the same catch-all the refusals are checked with', async () => {
    const seen = captureAll();
    await makeClient().accounts.update('acc_1', { city: 'Lyon' });

    expect(seen.map((request) => `${request.method} ${request.url.pathname}`)).toEqual([
      'PUT /integrations/v1/accounts/acc_1',
    ]);
  });

  it('sends a subject of exactly 255 characters and a description of exactly 2000', async () => {
    const seen = capture('post', mswPath(endpoints.createActivity), ok({ id: 'act_1' }));
    const subject = 's'.repeat(255);
    const description = 'd'.repeat(2000);
    await makeClient().activities.create({ ...activity, subject, description });

    expect(seen).toHaveLength(1);
    expect(seen[0]?.body).toMatchObject({ subject, description });
  });

  it('sends a subject of exactly 1 character', async () => {
    const seen = capture('post', mswPath(endpoints.createActivity), ok({ id: 'act_1' }));
    await makeClient().activities.create({ ...activity, subject: 'x' });

    expect(seen[0]?.body).toMatchObject({ subject: 'x' });
  });

  it('sends limit 200 and limit 1 with page 1', async () => {
    const seen = capture('get', mswPath(endpoints.listActivities), ok([], { pagination: { page: 1, pages: 1 } }));
    const crm = makeClient();
    await crm.activities.list({ opportunityId: 'opp_1', limit: 200 });
    await crm.activities.list({ opportunityId: 'opp_1', limit: 1, page: 1 });

    expect(seen.map((request) => request.url.searchParams.get('limit'))).toEqual(['200', '1']);
    expect(seen[1]?.url.searchParams.get('page')).toBe('1');
  });

  it('sends contacts.list with limit 200 and limit 1', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), ok([], { pagination: { page: 1, pages: 1 } }));
    const crm = makeClient();
    await crm.contacts.list({ limit: 200 });
    await crm.contacts.list({ limit: 1 });

    expect(seen.map((request) => request.url.searchParams.get('limit'))).toEqual(['200', '1']);
  });

  it('accepts a Date, an ISO date-time with Z and one with an offset', async () => {
    const seen = capture('post', mswPath(endpoints.createOpportunity), ok({ id: 'opp_1' }));
    const crm = makeClient();
    await crm.opportunities.create({ ...opportunity, expectedCloseDate: new Date(Date.UTC(2026, 0, 31, 9)) });
    await crm.opportunities.create({ ...opportunity, expectedCloseDate: '2026-01-31T09:00:00Z' });
    await crm.opportunities.create({ ...opportunity, expectedCloseDate: '2026-01-31T10:00:00.250+01:00' });

    expect(seen.map((request) => (request.body as { expectedCloseDate?: unknown }).expectedCloseDate)).toEqual([
      '2026-01-31T09:00:00.000Z',
      '2026-01-31T09:00:00Z',
      '2026-01-31T10:00:00.250+01:00',
    ]);
  });

  it('accepts an id that is neither empty, "." nor "..", such as "..." or ".a"', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'x' }));
    const crm = makeClient();
    await crm.opportunities.get('...');
    await crm.opportunities.get('.a');

    expect(seen.map((request) => request.url.pathname)).toEqual([
      '/integrations/v1/opportunities/...',
      '/integrations/v1/opportunities/.a',
    ]);
  });

  it('accepts per-call maxRetries 0 and a header value with a tab', async () => {
    const seen = capture('get', mswPath(endpoints.getOpportunity), ok({ id: 'opp_1' }));
    await makeClient().opportunities.get('opp_1', { maxRetries: 0, headers: { 'x-trace': 'a\tb' } });

    expect(seen[0]?.headers.get('x-trace')).toBe('a\tb');
  });
});
