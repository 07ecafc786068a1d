import { describe, expect, test } from 'vitest';
import {
  CrmAbortError,
  CrmApiError,
  CrmAuthenticationError,
  CrmBadRequestError,
  CrmConflictError,
  CrmConnectionError,
  CrmError,
  type CrmLogger,
  CrmNotFoundError,
  CrmPermissionDeniedError,
  CrmRateLimitError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
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
  rejectionOf,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

/** The integrator's own code: the frame the stack must lead back to. */
async function syncOpportunityFromCrm(crm: ReturnType<typeof clientFor>, id = OPP_ID) {
  const opportunity = await crm.opportunities.get(id);
  return opportunity;
}

async function exportActiveContacts(crm: ReturnType<typeof clientFor>) {
  const emails: unknown[] = [];
  for await (const contact of crm.contacts.list({ status: 'active' })) emails.push(contact.email);
  return emails;
}

const logger: CrmLogger = () => {};

describe("every error a call rejects with carries the frame of the caller's function", () => {
  test.each([
    ['404 as CrmNotFoundError', 404, CrmNotFoundError],
    ['401 as CrmAuthenticationError', 401, CrmAuthenticationError],
    ['500 after its retries as CrmServerError', 500, CrmServerError],
  ])('an answer of %s', async (_, status, ErrorClass) => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(status, 'no'));

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault(), { maxRetries: 1 })));

    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a timeout (CrmTimeoutError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault(), { timeout: 50, maxRetries: 0 })));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a timeout after retries, through ky (CrmTimeoutError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault(), { timeout: 50, maxRetries: 1 })));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a connection reset (CrmConnectionError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.reset());

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault(), { maxRetries: 1 })));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a refused connection (CrmConnectionError)', async () => {
    const crm = clientFor(fault(), { baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });

    const error = await rejectionOf(() => syncOpportunityFromCrm(crm));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a body that is not an envelope (CrmResponseValidationError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.with(200, { records: [] }));

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault())));

    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a body over maxResponseBytes (CrmResponseTooLargeError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.stream(10_000, { contentLength: false }));

    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault(), { maxResponseBytes: 1_000 })));

    expect(error).toBeInstanceOf(CrmResponseTooLargeError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('bad input, refused before sending (CrmValidationError)', async () => {
    const error = await rejectionOf(() => syncOpportunityFromCrm(clientFor(fault()), ''));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
    expect(fault().requests).toHaveLength(0);
  });

  test('with a logger, maxConcurrency and an apiKey function on the way', async () => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(404, 'gone'));
    const crm = clientFor(fault(), { logger, maxConcurrency: 2, apiKey: async () => 'key_from_store_1' });

    const error = await rejectionOf(() => syncOpportunityFromCrm(crm));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('an apiKey function that rejects', async () => {
    const crm = clientFor(fault(), { apiKey: () => Promise.reject(new Error('vault sealed')) });

    const error = await rejectionOf(() => syncOpportunityFromCrm(crm));

    expect(error).toBeInstanceOf(CrmError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });

  test('a page of a for await loop', async () => {
    fault().otherwise('GET', CONTACTS_PATH, reply.jsonError(503, 'down'));

    const error = await rejectionOf(() => exportActiveContacts(clientFor(fault(), { maxRetries: 0 })));

    expect(error).toBeInstanceOf(CrmServerError);
    expect(error.stack).toContain('exportActiveContacts');
  });

  test('an aborted call (CrmAbortError)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());
    const controller = new AbortController();
    const crm = clientFor(fault());

    async function cancelledSync() {
      const pending = crm.opportunities.get(OPP_ID, { signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      return await pending;
    }
    const error = await rejectionOf(cancelledSync);

    expect(error).toBeInstanceOf(CrmAbortError);
    expect(error.stack).toContain('cancelledSync');
  });
});

test('every error class is a subclass of CrmError by its prototype, and of its parent', () => {
  const apiErrors = [
    CrmBadRequestError,
    CrmAuthenticationError,
    CrmPermissionDeniedError,
    CrmNotFoundError,
    CrmConflictError,
    CrmUnprocessableEntityError,
    CrmRateLimitError,
    CrmServerError,
  ];
  for (const ErrorClass of apiErrors) {
    expect(ErrorClass.prototype instanceof CrmApiError).toBe(true);
    expect(ErrorClass.prototype instanceof CrmError).toBe(true);
  }
  for (const ErrorClass of [
    CrmApiError,
    CrmValidationError,
    CrmResponseValidationError,
    CrmConnectionError,
    CrmAbortError,
  ]) {
    expect(ErrorClass.prototype instanceof CrmError).toBe(true);
  }
  expect(CrmTimeoutError.prototype instanceof CrmConnectionError).toBe(true);
  expect(CrmResponseTooLargeError.prototype instanceof CrmResponseValidationError).toBe(true);
  // And no class claims what it is not.
  expect(CrmNotFoundError.prototype instanceof CrmServerError).toBe(false);
  expect(CrmError.prototype instanceof CrmApiError).toBe(false);
  expect(Object.create(null) instanceof CrmError).toBe(false);
});
