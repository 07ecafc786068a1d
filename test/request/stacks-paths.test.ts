import { describe, expect, test } from 'vitest';
import {
  CrmAbortError,
  CrmApiError,
  CrmConflictError,
  CrmError,
  CrmNotFoundError,
  CrmServerError,
  CrmTimeoutError,
  CrmUnprocessableEntityError,
  CrmValidationError,
} from '../../src/index';
import {
  CONTACTS_PATH,
  clientFor,
  OPP_ID,
  OPP_PATH,
  OPPS_PATH,
  rejectionOf,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

type Crm = ReturnType<typeof clientFor>;

async function callerGetsOpportunity(crm: Crm, options?: object) {
  return await crm.opportunities.get(OPP_ID, options);
}
async function callerUpdatesOpportunity(crm: Crm) {
  return await crm.opportunities.update(OPP_ID, { name: 'x' });
}
async function callerCreatesOpportunity(crm: Crm) {
  return await crm.opportunities.create({ name: 'x', accountId: 'acc_1' });
}
async function callerLoopsContacts(crm: Crm, options?: object) {
  const ids: string[] = [];
  for await (const c of crm.contacts.list({ limit: 1 }, options)) ids.push(c.id);
  return ids;
}
async function callerWithResponse(crm: Crm) {
  return await crm.opportunities.get(OPP_ID).withResponse();
}

const page = (n: number, pages = 3) =>
  reply.ok([{ id: `con_${n}` }], { extra: { pagination: { page: n, limit: 1, total: pages, pages } } });

describe("the caller's frame in more call paths", () => {
  test('a success:false envelope with 200', async () => {
    fault().otherwise('GET', OPP_PATH, reply.with(200, { success: false, error: { message: 'nope' } }));
    const error = await rejectionOf(() => callerGetsOpportunity(clientFor(fault())));
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('a PUT retried (503, 503) then 404', async () => {
    fault().script('PUT', OPP_PATH, reply.jsonError(503, 'a'), reply.jsonError(503, 'b'), reply.jsonError(404, 'c'));
    const error = await rejectionOf(() => callerUpdatesOpportunity(clientFor(fault(), { maxRetries: 3 })));
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(fault().received('PUT', OPP_PATH)).toHaveLength(3);
    expect(error.stack).toContain('callerUpdatesOpportunity');
  });

  test('a create answered 429 (retry-after 0) then 422', async () => {
    fault().script(
      'POST',
      OPPS_PATH,
      reply.jsonError(429, 'slow', { 'retry-after': '0' }),
      reply.jsonError(422, 'bad'),
    );
    const error = await rejectionOf(() => callerCreatesOpportunity(clientFor(fault())));
    expect(error).toBeInstanceOf(CrmUnprocessableEntityError);
    expect(error.stack).toContain('callerCreatesOpportunity');
  });

  test('a create 409 with a key function and maxConcurrency', async () => {
    fault().otherwise('POST', OPPS_PATH, reply.jsonError(409, 'dup'));
    const crm = clientFor(fault(), { apiKey: async () => 'key_fn_1234', maxConcurrency: 1 });
    const error = await rejectionOf(() => callerCreatesOpportunity(crm));
    expect(error).toBeInstanceOf(CrmConflictError);
    expect(error.stack).toContain('callerCreatesOpportunity');
  });

  test('queued for a maxConcurrency slot past totalTimeout (CrmTimeoutError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());
    const crm = clientFor(fault(), { maxConcurrency: 1, maxRetries: 0 });
    const blocker = crm.opportunities.get(OPP_ID, { timeout: 500 }).then(
      () => undefined,
      () => undefined,
    );
    const error = await rejectionOf(() => callerGetsOpportunity(crm, { totalTimeout: 50 }));
    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.message).toContain('queued');
    expect(error.stack).toContain('callerGetsOpportunity');
    await blocker;
  });

  test('a for await loop failing on page 2 (no prefetch)', async () => {
    fault().script('GET', CONTACTS_PATH, page(1), reply.jsonError(500, 'down'));
    const error = await rejectionOf(() => callerLoopsContacts(clientFor(fault(), { maxRetries: 0 })));
    expect(error).toBeInstanceOf(CrmServerError);
    expect(error.stack).toContain('callerLoopsContacts');
  });

  test('a for await loop failing on page 2, fetched ahead (prefetch: 1)', async () => {
    fault().script('GET', CONTACTS_PATH, page(1), reply.jsonError(500, 'down'));
    const error = await rejectionOf(() => callerLoopsContacts(clientFor(fault(), { maxRetries: 0 }), { prefetch: 1 }));
    expect(error).toBeInstanceOf(CrmServerError);
    expect(error.stack).toContain('callerLoopsContacts');
  });

  test('a for await loop failing on page 2 with an apiKey function', async () => {
    fault().script('GET', CONTACTS_PATH, page(1), reply.jsonError(404, 'gone'));
    const crm = clientFor(fault(), { maxRetries: 0, apiKey: ({ tenantId }) => `key_${tenantId}_1` });
    const error = await rejectionOf(() => callerLoopsContacts(crm.withTenant('globex')));
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error.stack).toContain('callerLoopsContacts');
  });

  test("withResponse() of a 404 rejects with the caller's frame", async () => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(404, 'gone'));
    const error = await rejectionOf(() => callerWithResponse(clientFor(fault())));
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error.stack).toContain('callerWithResponse');
  });

  test('an apiKey function that throws synchronously', async () => {
    const crm = clientFor(fault(), {
      apiKey: () => {
        throw new Error('vault sealed');
      },
    });
    const error = await rejectionOf(() => callerGetsOpportunity(crm));
    expect(error).toBeInstanceOf(CrmError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('an apiKey function that throws synchronously, with maxConcurrency preloaded', async () => {
    const crm = clientFor(fault(), {
      maxConcurrency: 4,
      apiKey: () => {
        throw new Error('vault sealed');
      },
    });
    await new Promise((r) => setTimeout(r, 20));
    const error = await rejectionOf(() => callerGetsOpportunity(crm));
    expect(error).toBeInstanceOf(CrmError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('an apiKey function returning an unusable key, synchronously (CrmValidationError)', async () => {
    const crm = clientFor(fault(), { apiKey: () => ' bad' });
    const error = await rejectionOf(() => callerGetsOpportunity(crm));
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('an apiKey function, second call (chunk already loaded), that throws synchronously', async () => {
    const crm = clientFor(fault(), {
      apiKey: () => {
        throw new Error('vault sealed');
      },
    });
    await rejectionOf(() => callerGetsOpportunity(crm));
    const error = await rejectionOf(() => callerGetsOpportunity(crm));
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('an apiKey function with a signal aborted before the call (CrmAbortError)', async () => {
    const crm = clientFor(fault(), { apiKey: () => 'key_fn_abcd' });
    await rejectionOf(() => callerGetsOpportunity(crm, { signal: AbortSignal.abort() }));
    const error = await rejectionOf(() => callerGetsOpportunity(crm, { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(CrmAbortError);
    expect(error.stack).toContain('callerGetsOpportunity');
    expect(fault().requests).toHaveLength(0);
  });

  test('maxConcurrency with a signal aborted before the call (CrmAbortError)', async () => {
    const crm = clientFor(fault(), { maxConcurrency: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const error = await rejectionOf(() => callerGetsOpportunity(crm, { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(CrmAbortError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('bad input through withTenant+withOptions (CrmValidationError)', async () => {
    const crm = clientFor(fault()).withTenant('globex', { apiKey: 'key_g_1234' }).withOptions({ timeout: 1000 });
    const error = await rejectionOf(() => callerGetsOpportunity(crm, { timout: 5 }));
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });

  test('a key function whose look-up outlasts totalTimeout (CrmTimeoutError)', async () => {
    const crm = clientFor(fault(), { apiKey: () => new Promise<string>(() => {}) });
    const error = await rejectionOf(() => callerGetsOpportunity(crm, { totalTimeout: 30 }));
    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.stack).toContain('callerGetsOpportunity');
  });
});
