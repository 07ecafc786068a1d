import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { makeClient, rejection, TENANT } from '../support/capture';
import { captureEverything, tenantsOf } from '../support/capture-everything';

/*
 * Attacks on the promise that extraQuery, extraBody and crm.request()'s query and body can never
 * set or override tenantId. Each test asserts the refusal (CrmValidationError, nothing sent), or,
 * where the SDK may send, that what was sent carries the client's tenant and no other.
 */

/** Refused with CrmValidationError and nothing sent, or sent with the client's tenant only. */
async function expectNoOtherTenant(call: (crm: ReturnType<typeof makeClient>) => PromiseLike<unknown>): Promise<void> {
  const seen = captureEverything();
  const crm = makeClient();
  let error: unknown;
  try {
    await call(crm);
  } catch (caught) {
    error = caught;
  }
  if (error !== undefined) {
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
    return;
  }
  expect(tenantsOf(seen).filter((tenant) => tenant !== TENANT)).toEqual([]);
}

describe('extraBody cannot override tenantId', () => {
  test('with a toJSON field, which JSON.stringify calls on the merged body', async () => {
    await expectNoOtherTenant((crm) =>
      crm.contacts.create(
        { email: 'a@x.io' },
        { extraBody: { toJSON: () => ({ tenantId: 'other', email: 'a@x.io' }) } as Record<string, unknown> },
      ),
    );
  });

  test('with a getter that adds tenantId to the object while the check reads it', async () => {
    const extraBody: Record<string, unknown> = {
      get note() {
        extraBody.tenantId = 'other';
        return 'n';
      },
    };
    await expectNoOtherTenant((crm) => crm.contacts.create({ email: 'a@x.io' }, { extraBody }));
  });

  test('with a Proxy whose keys change between the check and the merge', async () => {
    let reads = 0;
    const extraBody = new Proxy({ note: 'n', tenantId: 'other' } as Record<string, unknown>, {
      ownKeys: (target) => (reads++ === 0 ? ['note'] : Reflect.ownKeys(target)),
    });
    await expectNoOtherTenant((crm) => crm.contacts.create({ email: 'a@x.io' }, { extraBody }));
  });
});

describe('extraQuery cannot override tenantId', () => {
  test('with a getter that adds tenantId to the object while the check reads it', async () => {
    const extraQuery: Record<string, unknown> = {
      get view() {
        extraQuery.tenantId = 'other';
        return 'full';
      },
    };
    await expectNoOtherTenant((crm) => crm.contacts.list({}, { extraQuery }));
  });

  test('with a Proxy whose keys change between the check and the merge', async () => {
    let reads = 0;
    const extraQuery = new Proxy({ view: 'full', tenantId: 'other' } as Record<string, unknown>, {
      ownKeys: (target) => (reads++ === 0 ? ['view'] : Reflect.ownKeys(target)),
    });
    await expectNoOtherTenant((crm) => crm.opportunities.get('opp_1', { extraQuery }));
  });
});

describe("crm.request()'s body cannot carry another tenantId", () => {
  test.each(['body', 'query', 'none'] as const)('with a toJSON field (tenantIn %s)', async (tenantIn) => {
    await expectNoOtherTenant((crm) =>
      crm.request({
        method: 'POST',
        path: 'integrations/v1/widgets',
        tenantIn,
        body: { toJSON: () => ({ tenantId: 'other' }) },
      }),
    );
  });

  test("with a getter that adds tenantId while the check reads it (tenantIn 'body')", async () => {
    const body: Record<string, unknown> = {
      get name() {
        body.tenantId = 'other';
        return 'W';
      },
    };
    await expectNoOtherTenant((crm) =>
      crm.request({ method: 'POST', path: 'integrations/v1/widgets', tenantIn: 'body', body }),
    );
  });
});

describe('spellings of tenantId a server may read as tenantId are refused too', () => {
  // ASP.NET binds parameters and JSON fields without regard to case; qs (Express) reads
  // tenantId[]=x and tenantId[0]=x as tenantId. The SDK cannot know the server's parser.
  const spellings = ['TenantId', 'tenantid', 'TENANTID', 'tenantId[]', 'tenantId[0]'];

  test.each(spellings)('extraQuery with %s is refused before sending', async (name) => {
    const seen = captureEverything();
    const error = await rejection(makeClient().contacts.list({}, { extraQuery: { [name]: 'other' } }));
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
  });

  test.each(spellings)('extraBody with %s is refused before sending', async (name) => {
    const seen = captureEverything();
    const error = await rejection(
      makeClient().contacts.create({ email: 'a@x.io' }, { extraBody: { [name]: 'other' } }),
    );
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
  });
});

describe('what is refused today and must stay so', () => {
  test('a JSON-parsed __proto__ in extraBody neither sets tenantId nor pollutes Object.prototype', async () => {
    const seen = captureEverything();
    const crm = makeClient();
    const extraBody = JSON.parse('{"__proto__": {"tenantId": "other", "polluted": true}, "note": "n"}');

    await crm.contacts.create({ email: 'a@x.io' }, { extraBody });

    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(tenantsOf(seen)).toEqual([TENANT]);
    expect(seen).toHaveLength(1);
  });

  test('an extraBody whose prototype is not Object.prototype (a literal __proto__) is refused', async () => {
    const seen = captureEverything();
    const extraBody = { __proto__: { tenantId: 'other' }, note: 'n' } as Record<string, unknown>;

    const error = await rejection(makeClient().contacts.create({ email: 'a@x.io' }, { extraBody }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
  });

  test('a getter named tenantId, and a tenantId with a null prototype, are refused', async () => {
    const seen = captureEverything();
    const getter = {
      get tenantId() {
        return 'other';
      },
    };
    const bare = Object.assign(Object.create(null), { tenantId: 'other' });

    for (const options of [{ extraBody: getter }, { extraBody: bare }, { extraQuery: getter }, { extraQuery: bare }]) {
      const error = await rejection(makeClient().contacts.create({ email: 'a@x.io' }, options));
      expect(error).toBeInstanceOf(CrmValidationError);
    }
    expect(seen).toEqual([]);
  });

  test('a non-enumerable tenantId in extraBody is not sent', async () => {
    const seen = captureEverything();
    const crm = makeClient();
    const extraBody = Object.defineProperty({ note: 'n' }, 'tenantId', { value: 'other', enumerable: false });

    await crm.contacts.create({ email: 'a@x.io' }, { extraBody });

    expect(tenantsOf(seen)).toEqual([TENANT]);
  });

  test('credential headers in the headers option never replace the client’s, on crm.request() too', async () => {
    const seen = captureEverything();

    await makeClient().request(
      { method: 'GET', path: 'integrations/v1/widgets', tenantIn: 'none' },
      { headers: { 'X-Api-Key': 'evil', 'X-TENANT-ID': 'other', Authorization: 'Bearer evil' } },
    );

    expect(seen[0]?.headers.get('x-api-key')).not.toBe('evil');
    expect(seen[0]?.headers.get('x-tenant-id')).toBe(TENANT);
    expect(seen[0]?.headers.get('authorization')).toBeNull();
  });

  test('a query name that carries its own = and & stays one parameter', async () => {
    const seen = captureEverything();

    await makeClient().contacts.list({}, { extraQuery: { 'a=1&tenantId': 'other', b: 'x&tenantId=other' } });

    expect(seen[0]?.url.searchParams.getAll('tenantId')).toEqual([TENANT]);
  });
});
