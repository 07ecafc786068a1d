import type { LiteralUnion } from 'type-fest';
import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod/mini';
import type {
  Account,
  AccountCreateInput,
  AccountSchema,
  AccountUpdateResult,
  Activity,
  ActivityCreateInput,
  ActivityListParams,
  ActivitySchema,
  ActivityType,
  ApiKeyGenerateResult,
  ApiKeyProvider,
  ApiKeyStatus,
  ClientDefaults,
  Contact,
  ContactListParams,
  ContactSchema,
  CrmClient,
  CrmPromise,
  GrantResolution,
  ListOptions,
  Opportunity,
  OpportunityCreateInput,
  OpportunitySchema,
  OpportunityUpdateInput,
  Page,
  PagePromise,
  Pagination,
  PaginationSchema,
  RequestOptions,
  TenantOptions,
  WithResponse,
  WithUnknownFields,
} from '../../src/index';

declare const crm: CrmClient;
declare const CrmClientValue: typeof CrmClient;

describe('public signatures', () => {
  it('types opportunities.get(id) as CrmPromise<Opportunity>', () => {
    expectTypeOf(crm.opportunities.get).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(crm.opportunities.get('opp_1')).toEqualTypeOf<CrmPromise<Opportunity>>();
    expectTypeOf(crm.opportunities.get('opp_1')).resolves.toEqualTypeOf<Opportunity>();
    expectTypeOf(crm.opportunities.get('opp_1')).toExtend<Promise<Opportunity>>();
    expectTypeOf(crm.opportunities.get('opp_1').withResponse()).resolves.toEqualTypeOf<WithResponse<Opportunity>>();
    expectTypeOf<WithResponse<Opportunity>['response']>().toEqualTypeOf<Response>();
  });

  it('types the result of every other method', () => {
    expectTypeOf(crm.opportunities.create).returns.toEqualTypeOf<CrmPromise<Opportunity>>();
    expectTypeOf(crm.opportunities.update).returns.toEqualTypeOf<CrmPromise<Opportunity>>();
    expectTypeOf(crm.activities.create).returns.toEqualTypeOf<CrmPromise<Activity>>();
    expectTypeOf(crm.activities.list).returns.toEqualTypeOf<PagePromise<Activity>>();
    expectTypeOf(crm.accounts.create).returns.toEqualTypeOf<CrmPromise<Account>>();
    expectTypeOf(crm.accounts.update).returns.toEqualTypeOf<CrmPromise<AccountUpdateResult>>();
    expectTypeOf(crm.contacts.create).returns.toEqualTypeOf<CrmPromise<Contact>>();
    expectTypeOf(crm.contacts.update).returns.toEqualTypeOf<CrmPromise<Contact>>();
    expectTypeOf(crm.contacts.list).returns.toEqualTypeOf<PagePromise<Contact>>();
    expectTypeOf(crm.grants.resolve).returns.toEqualTypeOf<CrmPromise<GrantResolution>>();
    expectTypeOf(crm.apiKey.status).returns.toEqualTypeOf<CrmPromise<ApiKeyStatus>>();
    expectTypeOf(crm.apiKey.generate).returns.toEqualTypeOf<CrmPromise<ApiKeyGenerateResult>>();
    expectTypeOf(crm.withTenant).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(crm.withTenant).parameter(1).toEqualTypeOf<TenantOptions | undefined>();
    expectTypeOf(crm.withTenant('t2')).toEqualTypeOf<CrmClient>();
    expectTypeOf(crm.withTenant('t2', { apiKey: 'k' })).toEqualTypeOf<CrmClient>();
    expectTypeOf(crm.withOptions).parameter(0).toEqualTypeOf<ClientDefaults>();
    expectTypeOf(crm.withOptions({ timeout: 1 })).toEqualTypeOf<CrmClient>();
  });

  it('types Opportunity.id as a required string', () => {
    expectTypeOf<Opportunity['id']>().toEqualTypeOf<string>();
    expectTypeOf<Activity['id']>().toEqualTypeOf<string>();
    expectTypeOf<Contact['id']>().toEqualTypeOf<string>();
    expectTypeOf<Account['id']>().toEqualTypeOf<string>();
  });
});

describe('response enums are open', () => {
  type ResponseActivityType = NonNullable<Activity['type']>;

  it('accepts an undocumented value such as "sms" as a string', () => {
    expectTypeOf<'sms'>().toExtend<ResponseActivityType>();
    expectTypeOf<string>().toExtend<ResponseActivityType>();
    expectTypeOf<'call'>().toExtend<ResponseActivityType>();
    const fromServer: Activity = { id: 'act_1', type: 'sms' };
    expectTypeOf(fromServer.type).toExtend<string | null | undefined>();
  });

  it('keeps the documented union for autocompletion instead of collapsing to string', () => {
    expectTypeOf<ResponseActivityType>().toEqualTypeOf<LiteralUnion<ActivityType, string>>();
    expectTypeOf<ResponseActivityType>().not.toEqualTypeOf<string>();
    expectTypeOf<ActivityType>().toEqualTypeOf<'call' | 'meeting' | 'email' | 'task' | 'note' | 'whatsapp'>();
    expectTypeOf<NonNullable<Contact['status']>>().toEqualTypeOf<LiteralUnion<'active' | 'inactive', string>>();
    expectTypeOf<NonNullable<Opportunity['type']>>().toEqualTypeOf<
      LiteralUnion<'new_business' | 'existing_business' | 'upsell' | 'renewal', string>
    >();
  });
});

describe('inputs', () => {
  it('rejects tenantId in every input', () => {
    // @ts-expect-error the client supplies the tenant
    crm.opportunities.create({ tenantId: 't', name: 'n', accountId: 'a' });
    // @ts-expect-error the client supplies the tenant
    crm.opportunities.update('opp_1', { tenantId: 't' });
    // @ts-expect-error the client supplies the tenant
    crm.activities.create({ tenantId: 't', opportunityId: 'o', type: 'call', subject: 's' });
    // @ts-expect-error the client supplies the tenant
    crm.activities.list({ tenantId: 't', opportunityId: 'o' });
    // @ts-expect-error the client supplies the tenant
    crm.accounts.create({ tenantId: 't', name: 'Acme' });
    // @ts-expect-error the client supplies the tenant
    crm.accounts.update('acc_1', { tenantId: 't' });
    // @ts-expect-error the client supplies the tenant
    crm.contacts.create({ tenantId: 't', firstName: 'Ada' });
    // @ts-expect-error the client supplies the tenant
    crm.contacts.update('con_1', { tenantId: 't' });
    // @ts-expect-error the client supplies the tenant
    crm.contacts.list({ tenantId: 't' });
    expectTypeOf<OpportunityCreateInput>().not.toHaveProperty('tenantId');
    expectTypeOf<ActivityListParams>().not.toHaveProperty('tenantId');
  });

  it('rejects an enum value the spec does not list', () => {
    // @ts-expect-error request enums are strict
    crm.activities.create({ opportunityId: 'o', type: 'sms', subject: 's' });
    // @ts-expect-error request enums are strict
    crm.activities.list({ opportunityId: 'o', type: 'sms' });
    // @ts-expect-error request enums are strict
    crm.opportunities.create({ name: 'n', accountId: 'a', type: 'cross_sell' });
    // @ts-expect-error request enums are strict
    crm.accounts.create({ name: 'Acme', status: 'archived' });
    // @ts-expect-error request enums are strict
    crm.contacts.list({ status: 'deleted' });
    expectTypeOf<ActivityCreateInput['type']>().toEqualTypeOf<ActivityType>();
  });

  it('requires the fields the spec requires', () => {
    // @ts-expect-error name is required
    crm.opportunities.create({ accountId: 'a' });
    // @ts-expect-error accountId is required
    crm.opportunities.create({ name: 'n' });
    // @ts-expect-error subject is required
    crm.activities.create({ opportunityId: 'o', type: 'call' });
    // @ts-expect-error type is required
    crm.activities.create({ opportunityId: 'o', subject: 's' });
    // @ts-expect-error name is required
    crm.accounts.create({ city: 'Paris' });
    expectTypeOf<OpportunityCreateInput['name']>().toEqualTypeOf<string>();
    expectTypeOf<AccountCreateInput['name']>().toEqualTypeOf<string>();
  });

  it('accepts an activity for opportunityId or for relatedToType + relatedToId, but not both', () => {
    crm.activities.create({ opportunityId: 'opp_1', type: 'call', subject: 'Discovery call' });
    crm.activities.create({ relatedToType: 'opportunity', relatedToId: 'opp_1', type: 'note', subject: 'Notes' });
    const both = { opportunityId: 'opp_1', relatedToType: 'opportunity', relatedToId: 'opp_1' } as const;
    // @ts-expect-error either opportunityId or relatedToType + relatedToId
    crm.activities.create({ ...both, type: 'call', subject: 's' });
    // @ts-expect-error relatedToId must come with relatedToType
    crm.activities.create({ relatedToType: 'opportunity', type: 'call', subject: 's' });
    // @ts-expect-error relatedToType must come with relatedToId
    crm.activities.create({ relatedToId: 'opp_1', type: 'call', subject: 's' });
    // @ts-expect-error the activity must name what it belongs to
    crm.activities.create({ type: 'call', subject: 's' });
    // @ts-expect-error relatedToType is a strict enum
    crm.activities.create({ relatedToType: 'deal', relatedToId: 'd_1', type: 'call', subject: 's' });
  });

  it('accepts a Date or an ISO string for date-time inputs', () => {
    crm.opportunities.create({
      name: 'n',
      accountId: 'a',
      expectedCloseDate: new Date(),
      closeDate: '2027-01-31T00:00:00Z',
    });
    crm.opportunities.update('opp_1', { closeDate: new Date() });
    crm.activities.create({ opportunityId: 'o', type: 'call', subject: 's', activityDate: new Date() });
    crm.activities.list({ opportunityId: 'o', fromDate: new Date(), toDate: '2027-01-31T00:00:00Z' });
    expectTypeOf<Date>().toExtend<NonNullable<OpportunityUpdateInput['expectedCloseDate']>>();
    expectTypeOf<Date>().toExtend<NonNullable<ActivityListParams['fromDate']>>();
    // @ts-expect-error a number is not a date-time
    crm.activities.list({ opportunityId: 'o', fromDate: 1_700_000_000_000 });
  });

  it('lets contacts.list() be called without arguments, while activities.list() needs opportunityId', () => {
    crm.contacts.list();
    crm.contacts.list({ limit: 50, page: 2, status: 'active' });
    expectTypeOf<ContactListParams>().toEqualTypeOf<{
      page?: number | undefined;
      limit?: number | undefined;
      status?: 'active' | 'inactive' | undefined;
    }>();
    crm.activities.list({ opportunityId: 'opp_1' });
    // @ts-expect-error activities.list() needs its parameters
    crm.activities.list();
    // @ts-expect-error opportunityId is required
    crm.activities.list({ type: 'call' });
    expectTypeOf<ActivityListParams['opportunityId']>().toEqualTypeOf<string>();
  });

  it('rejects a wrong type for scalar inputs', () => {
    // @ts-expect-error amount is a number
    crm.opportunities.create({ name: 'n', accountId: 'a', amount: '12000' });
    // @ts-expect-error limit is a number
    crm.contacts.list({ limit: '50' });
    // @ts-expect-error isPrimary is a boolean
    crm.contacts.create({ isPrimary: 'yes' });
    // @ts-expect-error an id is a string
    crm.opportunities.get(42);
  });
});

describe('lists', () => {
  it('types list results as PagePromise and as AsyncIterable of the item', () => {
    expectTypeOf(crm.contacts.list()).toEqualTypeOf<PagePromise<Contact>>();
    expectTypeOf(crm.contacts.list()).toExtend<AsyncIterable<Contact>>();
    expectTypeOf(crm.contacts.list()).toExtend<PromiseLike<Page<Contact>>>();
    expectTypeOf(crm.contacts.list()).resolves.toEqualTypeOf<Page<Contact>>();
    expectTypeOf(crm.activities.list({ opportunityId: 'o' })).toEqualTypeOf<PagePromise<Activity>>();
    expectTypeOf(crm.activities.list({ opportunityId: 'o' })).toExtend<AsyncIterable<Activity>>();
    expectTypeOf(crm.contacts.list().pages()).toExtend<AsyncIterable<Page<Contact>>>();
  });

  it('types a page as data, pagination, hasNextPage() and nextPage()', () => {
    expectTypeOf<Page<Contact>['data']>().toEqualTypeOf<Contact[]>();
    expectTypeOf<Page<Contact>['pagination']>().toEqualTypeOf<Pagination>();
    expectTypeOf<Page<Contact>['hasNextPage']>().toEqualTypeOf<() => boolean>();
    expectTypeOf<Page<Contact>['nextPage']>().returns.toEqualTypeOf<PagePromise<Contact>>();
    expectTypeOf<NonNullable<Pagination['pages']>>().toEqualTypeOf<number>();
  });

  it('yields typed items from for await', async () => {
    for await (const contact of crm.contacts.list()) {
      expectTypeOf(contact).toEqualTypeOf<Contact>();
    }
    for await (const page of crm.activities.list({ opportunityId: 'o' }).pages()) {
      expectTypeOf(page).toEqualTypeOf<Page<Activity>>();
    }
  });
});

describe('per-call options', () => {
  const options = {
    signal: new AbortController().signal,
    timeout: 5_000,
    maxRetries: 1,
    headers: { 'x-trace-id': 't' },
  };

  it('accepts { signal, timeout, maxRetries, headers } as the last argument of every method', () => {
    crm.opportunities.get('opp_1', options);
    crm.opportunities.create({ name: 'n', accountId: 'a' }, options);
    crm.opportunities.update('opp_1', {}, options);
    crm.activities.list({ opportunityId: 'o' }, options);
    crm.activities.create({ opportunityId: 'o', type: 'call', subject: 's' }, options);
    crm.accounts.create({ name: 'Acme' }, options);
    crm.accounts.update('acc_1', {}, options);
    crm.contacts.create({}, options);
    crm.contacts.update('con_1', {}, options);
    crm.contacts.list({}, options);
    crm.contacts.list(undefined, options);
    crm.grants.resolve('g_1', options);
    crm.apiKey.status(options);
    crm.apiKey.generate(options);
    expectTypeOf(options).toExtend<RequestOptions>();
  });

  it('types the options argument as optional RequestOptions', () => {
    expectTypeOf(crm.opportunities.get).parameter(1).toEqualTypeOf<RequestOptions | undefined>();
    expectTypeOf(crm.activities.list).parameter(1).toEqualTypeOf<ListOptions | undefined>();
    expectTypeOf<ListOptions>().toExtend<RequestOptions>();
    expectTypeOf(crm.contacts.update).parameter(2).toEqualTypeOf<RequestOptions | undefined>();
    expectTypeOf(crm.apiKey.generate).parameter(0).toEqualTypeOf<RequestOptions | undefined>();
    expectTypeOf<RequestOptions>().toEqualTypeOf<{
      signal?: AbortSignal | undefined;
      timeout?: number | undefined;
      maxRetries?: number | undefined;
      headers?: Record<string, string> | undefined;
      totalTimeout?: number | undefined;
      extraQuery?: Record<string, unknown> | undefined;
      extraBody?: Record<string, unknown> | undefined;
    }>();
  });

  it('rejects an unknown option or a wrong option type', () => {
    // @ts-expect-error no such option
    crm.opportunities.get('opp_1', { retries: 1 });
    // @ts-expect-error timeout is a number of milliseconds
    crm.opportunities.get('opp_1', { timeout: '5s' });
  });
});

describe('scopes', () => {
  it('accepts an apiKey function of the tenant, sync or async, in the client and in withTenant()', () => {
    expectTypeOf<ApiKeyProvider>().parameters.toEqualTypeOf<[context: { readonly tenantId: string }]>();
    new CrmClientValue({ baseUrl: 'https://crm.example.com', apiKey: ({ tenantId }) => `key-${tenantId}` });
    new CrmClientValue({ baseUrl: 'https://crm.example.com', apiKey: async ({ tenantId }) => `key-${tenantId}` });
    crm.withTenant('t2', { apiKey: async () => 'k' });
    // @ts-expect-error a key is a string
    new CrmClientValue({ baseUrl: 'https://crm.example.com', apiKey: () => 42 });
    // @ts-expect-error withTenant() takes only apiKey and signal
    crm.withTenant('t2', { timeout: 5 });
  });

  it('lets withOptions() change the call defaults, and nothing that is shared or per call', () => {
    crm.withOptions({ timeout: 1, totalTimeout: 2, maxRetries: 0, maxRetryAfter: 3, headers: { a: 'b' }, prefetch: 2 });
    // @ts-expect-error the tenant is changed with withTenant()
    crm.withOptions({ tenantId: 't2' });
    // A signal of the derived client's own, beside the parent's.
    crm.withOptions({ signal: new AbortController().signal });
    crm.withTenant('t2', { signal: new AbortController().signal });
    // @ts-expect-error the connection pool is shared
    crm.withOptions({ maxConcurrency: 2 });
  });
});

describe('schemas and inferred types', () => {
  it('infers the exported types from the exported zod schemas', () => {
    expectTypeOf<z.infer<typeof OpportunitySchema>>().toEqualTypeOf<Opportunity>();
    expectTypeOf<z.infer<typeof ActivitySchema>>().toEqualTypeOf<Activity>();
    expectTypeOf<z.infer<typeof ContactSchema>>().toEqualTypeOf<Contact>();
    expectTypeOf<z.infer<typeof AccountSchema>>().toEqualTypeOf<Account>();
    expectTypeOf<z.infer<typeof PaginationSchema>>().toEqualTypeOf<Pagination>();
  });
});

describe('no any', () => {
  it('types no result, and no field of a result, as any', () => {
    expectTypeOf<Opportunity>().not.toBeAny();
    expectTypeOf<Activity>().not.toBeAny();
    expectTypeOf<Contact>().not.toBeAny();
    expectTypeOf<Account>().not.toBeAny();
    expectTypeOf<AccountUpdateResult>().not.toBeAny();
    expectTypeOf<GrantResolution>().not.toBeAny();
    expectTypeOf<ApiKeyStatus>().not.toBeAny();
    expectTypeOf<ApiKeyGenerateResult>().not.toBeAny();
    expectTypeOf<Pagination>().not.toBeAny();

    // Open objects: unknown fields are unknown, never any.
    expectTypeOf<AccountUpdateResult[string]>().toBeUnknown();
    expectTypeOf<GrantResolution[string]>().toBeUnknown();
    expectTypeOf<ApiKeyStatus[string]>().toBeUnknown();
    expectTypeOf<ApiKeyGenerateResult[string]>().toBeUnknown();
    // Records: fields the SDK does not know are read through WithUnknownFields, as unknown.
    expectTypeOf<WithUnknownFields<Opportunity>['newField']>().toBeUnknown();
    expectTypeOf<WithUnknownFields<Contact>['newField']>().toBeUnknown();

    expectTypeOf<Opportunity['amount']>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf<NonNullable<Opportunity['primaryContact']>>().not.toBeAny();
    expectTypeOf<NonNullable<Opportunity['associatedContacts']>[number]>().not.toBeAny();
    expectTypeOf<NonNullable<Opportunity['associatedContacts']>[number][string]>().toBeUnknown();
    expectTypeOf<Activity['subject']>().toEqualTypeOf<string | null | undefined>();

    expectTypeOf(crm.opportunities.get('o')).resolves.not.toBeAny();
    expectTypeOf(crm.grants.resolve('g')).resolves.not.toBeAny();
    expectTypeOf(crm.apiKey.generate()).resolves.not.toBeAny();
    expectTypeOf(crm.contacts.list()).resolves.not.toBeAny();
    expectTypeOf<Awaited<ReturnType<typeof crm.contacts.list>>['data'][number]>().not.toBeAny();
  });
});
