import fc from 'fast-check';
import { HttpResponse, http } from 'msw';
import { describe, expect, test } from 'vitest';
import type * as z from 'zod/mini';
import {
  AccountCreateInputSchema,
  AccountUpdateInputSchema,
  ActivityCreateInputSchema,
  ActivityListParamsSchema,
  ContactInputSchema,
  ContactListParamsSchema,
  type CrmClient,
  CrmValidationError,
  OpportunityCreateInputSchema,
  OpportunityUpdateInputSchema,
} from '../../src/index';
import { BASE_URL, makeClient, TENANT } from '../support/capture';
import { server } from '../support/msw-server';

/** What the server saw of one request. */
interface Seen {
  method: string;
  pathname: string;
  query: Record<string, string>;
  /** The JSON body as parsed, or undefined when there was none. */
  body: unknown;
}

const LIST_PATHS = ['/integrations/v1/activities', '/integrations/v1/contacts'];

/** Records every request to the base URL and answers a valid envelope: a page for a list, a record otherwise. */
function recordAll(): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const text = await request.text();
      seen.push({
        method: request.method,
        pathname: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body: text ? JSON.parse(text) : undefined,
      });
      return request.method === 'GET' && LIST_PATHS.includes(url.pathname)
        ? HttpResponse.json({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } })
        : HttpResponse.json({ success: true, data: { id: 'rec_1' } });
    }),
  );
  return seen;
}

/** Passes a value the types would refuse, as a caller without TypeScript (or with a cast) can. */
const untyped = <T>(value: unknown): T => value as T;

interface Target {
  name: string;
  call: (crm: CrmClient, input: unknown) => PromiseLike<unknown>;
  method: 'GET' | 'POST' | 'PUT';
  pathname: string;
  /** The schema the sent body (without tenantId) or query (without tenantId) must pass. */
  schema: z.ZodMiniType;
  /** Where the request carries it: the JSON body, or the query string. */
  sends: 'body' | 'query';
  tenantIn: 'body' | 'query';
  /** A valid input, the starting point of the mutations. */
  valid: Record<string, unknown>;
  /** Its fields, and a few it must not accept. */
  keys: readonly string[];
}

const v1 = '/integrations/v1';

const TARGETS: readonly Target[] = [
  {
    name: 'opportunities.create',
    call: (crm, input) => crm.opportunities.create(untyped(input)),
    method: 'POST',
    pathname: `${v1}/opportunities`,
    schema: OpportunityCreateInputSchema,
    sends: 'body',
    tenantIn: 'body',
    valid: { name: 'Renewal', accountId: 'acc_1', amount: 1200, expectedCloseDate: '2027-01-31T00:00:00Z' },
    keys: Object.keys(OpportunityCreateInputSchema.shape),
  },
  {
    name: 'opportunities.update',
    call: (crm, input) => crm.opportunities.update('opp_1', untyped(input)),
    method: 'PUT',
    pathname: `${v1}/opportunities/opp_1`,
    schema: OpportunityUpdateInputSchema,
    sends: 'body',
    tenantIn: 'query',
    valid: { stage: 'won', probability: 90, closeDate: new Date('2027-02-01T10:00:00Z') },
    keys: Object.keys(OpportunityUpdateInputSchema.shape),
  },
  {
    name: 'activities.create',
    call: (crm, input) => crm.activities.create(untyped(input)),
    method: 'POST',
    pathname: `${v1}/activities`,
    // On the wire the activity names its opportunity with the explicit pair, which the schema accepts too.
    schema: ActivityCreateInputSchema,
    sends: 'body',
    tenantIn: 'body',
    valid: { opportunityId: 'opp_1', type: 'call', subject: 'Discovery', activityDate: '2027-01-31T09:00:00+01:00' },
    keys: [
      'opportunityId',
      'relatedToType',
      'relatedToId',
      'type',
      'subject',
      'ownerId',
      'description',
      'activityDate',
    ],
  },
  {
    name: 'activities.list',
    call: (crm, input) => crm.activities.list(untyped(input)),
    method: 'GET',
    pathname: `${v1}/activities`,
    schema: ActivityListParamsSchema,
    sends: 'query',
    tenantIn: 'query',
    valid: { opportunityId: 'opp_1', page: 2, limit: 50, type: 'email', fromDate: '2027-01-01T00:00:00Z' },
    keys: Object.keys(ActivityListParamsSchema.shape),
  },
  {
    name: 'accounts.create',
    call: (crm, input) => crm.accounts.create(untyped(input)),
    method: 'POST',
    pathname: `${v1}/accounts`,
    schema: AccountCreateInputSchema,
    sends: 'body',
    tenantIn: 'body',
    valid: { name: 'Acme', status: 'prospect', annualRevenue: 1e6, type: 'customer' },
    keys: Object.keys(AccountCreateInputSchema.shape),
  },
  {
    name: 'accounts.update',
    call: (crm, input) => crm.accounts.update('acc_1', untyped(input)),
    method: 'PUT',
    pathname: `${v1}/accounts/acc_1`,
    schema: AccountUpdateInputSchema,
    sends: 'body',
    tenantIn: 'query',
    valid: { status: 'active', employees: '50' },
    keys: Object.keys(AccountUpdateInputSchema.shape),
  },
  {
    name: 'contacts.create',
    call: (crm, input) => crm.contacts.create(untyped(input)),
    method: 'POST',
    pathname: `${v1}/contacts`,
    schema: ContactInputSchema,
    sends: 'body',
    tenantIn: 'body',
    valid: { accountId: 'acc_1', firstName: 'Ada', email: 'ada@example.com', isPrimary: true },
    keys: Object.keys(ContactInputSchema.shape),
  },
  {
    name: 'contacts.update',
    call: (crm, input) => crm.contacts.update('con_1', untyped(input)),
    method: 'PUT',
    pathname: `${v1}/contacts/con_1`,
    schema: ContactInputSchema,
    sends: 'body',
    tenantIn: 'query',
    valid: { position: 'CTO', status: 'inactive' },
    keys: Object.keys(ContactInputSchema.shape),
  },
  {
    name: 'contacts.list',
    call: (crm, input) => crm.contacts.list(untyped(input)),
    method: 'GET',
    pathname: `${v1}/contacts`,
    schema: ContactListParamsSchema,
    sends: 'query',
    tenantIn: 'query',
    valid: { page: 1, limit: 200, status: 'active' },
    keys: Object.keys(ContactListParamsSchema.shape),
  },
];

/** Values that are wrong, odd or at the edge for fields of every type. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    '',
    ' ',
    0,
    -0,
    1,
    -1,
    0.5,
    200,
    201,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.MAX_SAFE_INTEGER + 2,
    true,
    false,
    [],
    {},
    'opportunity',
    'call',
    'active',
    'new_business',
    'a@b.co',
    'not an email',
    '2027-01-31',
    '2027-01-31T09:00:00',
    '2027-01-31T09:00:00Z',
    '2027-01-31T09:00:00.123456+05:30',
    '+010000-01-01T00:00:00.000Z',
    'x'.repeat(256),
    'x'.repeat(2001),
    '\u0000\r\n',
    '\ud800',
    '__proto__',
    10n,
    Symbol('field'),
    () => 'a function',
    new Date(Number.NaN),
    new Date(0),
    new Date('9999-12-31T23:59:59.999Z'),
    new Date('0000-01-01T00:00:00.000Z'),
    new Map([['name', 'x']]),
    new Set(['x']),
    Object.create(null),
    new String('boxed'),
    new Number(5),
    /regex/,
  ),
  // Years 0000 to 9999 only: dates beyond are the subject of their own test below, so that its
  // failure does not hide others here.
  fc.date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z') }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.double(),
  fc.integer(),
  fc.anything({ maxDepth: 2 }),
);

/** Keys a caller might add by mistake, or on purpose. */
const ODD_KEYS = ['tenantId', '__proto__', 'constructor', 'toString', 'toJSON', 'id', 'extra', ''] as const;

/** A valid input with fields set to odd values, removed, or added. */
const mutation = (target: Target): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      fc.subarray(Object.keys(target.valid)),
      fc.dictionary(fc.constantFrom(...target.keys, ...ODD_KEYS), oddValue, { maxKeys: 3 }),
    )
    .map(([removed, changes]) => {
      const input: Record<string, unknown> = { ...target.valid };
      for (const key of removed) delete input[key];
      for (const [key, value] of Object.entries(changes)) {
        Object.defineProperty(input, key, { value, enumerable: true, configurable: true, writable: true });
      }
      return input;
    });

const anythingAtAll = fc.anything({
  maxDepth: 3,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withBigInt: true,
  withDate: true,
  withTypedArray: true,
  withSparseArray: true,
  stringUnit: 'binary',
});

/** The sources of inputs, with how many runs each gets per method. */
const SOURCES: readonly { source: string; arbitrary: (target: Target) => fc.Arbitrary<unknown>; numRuns: number }[] = [
  { source: 'fc.anything()', arbitrary: () => anythingAtAll, numRuns: 60 },
  { source: 'fc.jsonValue()', arbitrary: () => fc.jsonValue({ maxDepth: 3 }), numRuns: 40 },
  {
    source: 'fc.object() over its own keys',
    arbitrary: (target) =>
      fc.object({ key: fc.constantFrom(...target.keys, ...ODD_KEYS), maxDepth: 2, values: [oddValue] }),
    numRuns: 60,
  },
  { source: 'mutations of a valid input', arbitrary: mutation, numRuns: 120 },
];

/** A stable seed per target, so that its mutations are the same on every run. */
const seedOf = (name: string): number => [...name].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) | 0, 7);

/** A query as the schema reads it: the numeric parameters back to numbers. */
const typedQuery = (query: Record<string, string>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(query).map(([key, value]) => [key, key === 'page' || key === 'limit' ? Number(value) : value]),
  );

/** The input, sent and answered: resolves with what the call settled to. Fails on a synchronous throw. */
async function settle(call: () => PromiseLike<unknown>): Promise<{ ok: true } | { ok: false; error: unknown }> {
  let pending: PromiseLike<unknown>;
  try {
    pending = call();
  } catch (error) {
    throw new Error(`The method threw synchronously instead of rejecting: ${String(error)}`);
  }
  return Promise.resolve(pending).then(
    () => ({ ok: true as const }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** Checks the one property for one call: validated, or refused with CrmValidationError and nothing sent. */
async function check(target: Target, crm: CrmClient, seen: Seen[], input: unknown): Promise<'sent' | 'refused'> {
  seen.length = 0;
  const outcome = await settle(() => target.call(crm, input));
  if (!outcome.ok) {
    if (!(outcome.error instanceof CrmValidationError)) throw outcome.error;
    expect(seen).toEqual([]);
    return 'refused';
  }
  expect(seen).toHaveLength(1);
  const [request] = seen as [Seen];
  expect({ method: request.method, pathname: request.pathname }).toEqual({
    method: target.method,
    pathname: target.pathname,
  });

  const { tenantId: queryTenant, ...query } = request.query;
  let sent: unknown;
  if (target.sends === 'body') {
    expect(request.body).toBeTypeOf('object');
    const { tenantId: bodyTenant, ...body } = request.body as Record<string, unknown>;
    expect(target.tenantIn === 'body' ? bodyTenant : queryTenant).toBe(TENANT);
    expect(target.tenantIn === 'body' ? queryTenant : bodyTenant).toBeUndefined();
    expect(query).toEqual({});
    sent = body;
  } else {
    expect(queryTenant).toBe(TENANT);
    expect(request.body).toBeUndefined();
    sent = typedQuery(query);
  }
  const reparsed = target.schema.safeParse(sent);
  if (!reparsed.success) {
    throw new Error(`Sent ${JSON.stringify(sent)}, which the schema rejects: ${reparsed.error.message}`);
  }
  return 'sent';
}

describe('arbitrary values passed to every create, update and list method', () => {
  for (const target of TARGETS) {
    for (const { source, arbitrary, numRuns } of SOURCES) {
      test(`${target.name} given ${source} either sends a request the schema accepts or rejects with CrmValidationError`, async () => {
        const seen = recordAll();
        const crm = makeClient({ maxRetries: 0 });
        const outcomes = { sent: 0, refused: 0 };
        await fc.assert(
          fc.asyncProperty(arbitrary(target), async (input) => {
            outcomes[await check(target, crm, seen, input)] += 1;
          }),
          // Mutations run from a fixed seed: their share of valid inputs varies from seed to seed, and the
          // balance check below must not depend on luck (one random run in about 15 sent only 3).
          source.startsWith('mutations') ? { numRuns, seed: seedOf(target.name) } : { numRuns },
        );
        // Mutations of a valid input must exercise both sides, or the property says little.
        if (source.startsWith('mutations')) expect(Math.min(outcomes.sent, outcomes.refused)).toBeGreaterThan(5);
      });
    }
  }
});

describe('inputs the schemas accept are sent as they were validated', () => {
  test.each(TARGETS)(
    '$name sends the valid input, with the tenant where the endpoint takes it, and the body parses again',
    async (target) => {
      const seen = recordAll();
      await check(target, makeClient({ maxRetries: 0 }), seen, target.valid);
      // The valid starting point really is sent: the mutations above start from a request, not a refusal.
      expect(seen).toHaveLength(1);
    },
  );

  test('a Date outside years 0000 to 9999 is refused, or sent as an ISO string the date-time schema accepts', async () => {
    const seen = recordAll();
    const crm = makeClient({ maxRetries: 0 });
    const farDate = fc.oneof(
      fc.date({ min: new Date('+010000-01-01T00:00:00Z'), noInvalidDate: true }),
      fc.date({ max: new Date('-000001-12-31T23:59:59Z'), noInvalidDate: true }),
    );
    const uses = [
      (date: Date) => crm.opportunities.create({ name: 'N', accountId: 'acc_1', expectedCloseDate: date }),
      (date: Date) => crm.opportunities.update('opp_1', { closeDate: date }),
      (date: Date) => crm.activities.create({ opportunityId: 'opp_1', type: 'call', subject: 'S', activityDate: date }),
      (date: Date) => crm.activities.list({ opportunityId: 'opp_1', fromDate: date }),
    ];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: uses.length - 1 }), farDate, async (index, date) => {
        seen.length = 0;
        const use = uses[index] as (date: Date) => PromiseLike<unknown>;
        const outcome = await settle(() => use(date));
        if (!outcome.ok) {
          expect(outcome.error).toBeInstanceOf(CrmValidationError);
          return;
        }
        const [request] = seen as [Seen];
        const sent = JSON.stringify({ ...request.query, ...(request.body as object) });
        const iso = date.toISOString();
        expect({
          sent: sent.includes(iso),
          iso,
          accepted: OpportunityCreateInputSchema.shape.closeDate.safeParse(iso).success,
        }).toEqual({
          sent: true,
          iso,
          accepted: true,
        });
      }),
      { numRuns: 40 },
    );
  });
});

describe('arbitrary values in the other arguments', () => {
  test('any value as an id either is refused with CrmValidationError or is sent, never another error', async () => {
    const seen = recordAll();
    const crm = makeClient({ maxRetries: 0 });
    await fc.assert(
      fc.asyncProperty(anythingAtAll, fc.constantFrom('get', 'opp', 'acc', 'con'), async (id, which) => {
        seen.length = 0;
        const outcome = await settle(() => {
          if (which === 'get') return crm.opportunities.get(untyped(id));
          if (which === 'opp') return crm.opportunities.update(untyped(id), {});
          if (which === 'acc') return crm.accounts.update(untyped(id), {});
          return crm.contacts.update(untyped(id), {});
        });
        if (outcome.ok) {
          expect(typeof id).toBe('string');
          expect(seen).toHaveLength(1);
        } else {
          expect(outcome.error).toBeInstanceOf(CrmValidationError);
          expect(seen).toEqual([]);
        }
      }),
      { numRuns: 100 },
    );
  });

  test('any value as the per-call options either is accepted or rejected with CrmValidationError, never another error', async () => {
    const seen = recordAll();
    const crm = makeClient({ maxRetries: 0 });
    // A valid timeout short enough to expire against MSW would make the outcome a timeout, by design.
    const noShortTimeout = oddValue.filter((v) => !(typeof v === 'number' && v >= 1 && v <= 10_000));
    const options = fc.oneof(
      anythingAtAll,
      fc.record(
        {
          timeout: noShortTimeout,
          maxRetries: oddValue,
          headers: fc.oneof(oddValue, fc.dictionary(fc.string({ maxLength: 6 }), oddValue, { maxKeys: 2 })),
          signal: oddValue,
          totalTimeout: noShortTimeout,
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(options, fc.boolean(), async (value, list) => {
        seen.length = 0;
        const outcome = await settle(() =>
          list ? crm.contacts.list({}, untyped(value)) : crm.opportunities.get('opp_1', untyped(value)),
        );
        if (!outcome.ok) {
          expect(outcome.error).toBeInstanceOf(CrmValidationError);
          expect(seen).toEqual([]);
        }
      }),
      { numRuns: 100 },
    );
  });
});
