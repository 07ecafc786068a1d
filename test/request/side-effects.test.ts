import { HttpResponse } from 'msw';
import { expect, test } from 'vitest';
import { CrmClient, type CrmError } from '../../src/index';
import { capture, makeClient } from '../support/capture';

const ACCOUNT = { name: 'Acme' };
const ACCOUNT_DATA = { id: 'acc_1', name: 'Acme' };

/** The error a call rejects with. */
const failureOf = (call: Promise<unknown>): Promise<CrmError> =>
  call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: CrmError) => error,
  );

test("bad input is refused with sideEffects: 'none', and nothing is sent", async () => {
  const seen = capture('post', '/integrations/v1/accounts', HttpResponse.json({ success: true, data: ACCOUNT_DATA }));
  const error = await failureOf(makeClient().accounts.create({ name: '' }));
  expect(error.name).toBe('CrmValidationError');
  expect(error.sideEffects).toBe('none');
  expect(seen).toHaveLength(0);
});

test.each([
  [400, {}, 'none'],
  [404, {}, 'none'],
  [422, {}, 'none'],
  [429, { 'retry-after': '1' }, 'none'],
  [503, { 'retry-after': '1' }, 'none'],
  [500, {}, 'unknown'],
  [502, {}, 'unknown'],
  [503, {}, 'unknown'],
] as const)('a create answered %i %j fails with sideEffects: %s', async (status, headers, expected) => {
  capture('post', '/integrations/v1/accounts', HttpResponse.json({ error: { message: 'no' } }, { status, headers }));
  const error = await failureOf(makeClient({ maxRetries: 0 }).accounts.create(ACCOUNT));
  expect(error.sideEffects).toBe(expected);
});

test("a create answered 2xx with a body that is not its envelope fails with sideEffects: 'unknown': it was acted on", async () => {
  capture('post', '/integrations/v1/accounts', HttpResponse.json({ success: true, data: { name: 7 } }));
  const error = await failureOf(makeClient().accounts.create(ACCOUNT));
  expect(error.name).toBe('CrmResponseValidationError');
  expect(error.sideEffects).toBe('unknown');
});

test("a 2xx that says success: false fails with sideEffects: 'none'", async () => {
  capture('post', '/integrations/v1/accounts', HttpResponse.json({ success: false, error: { message: 'duplicate' } }));
  const error = await failureOf(makeClient().accounts.create(ACCOUNT));
  expect(error.name).toBe('CrmApiError');
  expect(error.sideEffects).toBe('none');
});

test("a create whose connection was reset after sending fails with sideEffects: 'unknown', sent once", async () => {
  const seen = capture('post', '/integrations/v1/accounts', HttpResponse.error());
  const error = await failureOf(makeClient().accounts.create(ACCOUNT));
  expect(error.name).toBe('CrmConnectionError');
  expect(error.sideEffects).toBe('unknown');
  expect(seen).toHaveLength(1);
});

test("a create whose connection was refused is tried again, and fails with sideEffects: 'none'", async () => {
  let calls = 0;
  const refused = Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
  });
  const crm = makeClient({
    maxRetries: 1,
    fetch: async () => {
      calls += 1;
      throw refused;
    },
  });
  const error = await failureOf(crm.accounts.create(ACCOUNT));
  expect(error.name).toBe('CrmConnectionError');
  expect(error.sideEffects).toBe('none');
  expect(calls).toBe(2);
});

test("a call that timed out in flight fails with sideEffects: 'unknown'", async () => {
  capture('post', '/integrations/v1/accounts', () => new Promise<Response>(() => {}));
  const error = await failureOf(makeClient({ timeout: 50 }).accounts.create(ACCOUNT));
  expect(error.name).toBe('CrmTimeoutError');
  expect(error.sideEffects).toBe('unknown');
});

test("a call aborted in flight fails with sideEffects: 'unknown'; one aborted while queued with 'none'", async () => {
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const seen = capture('post', '/integrations/v1/accounts', () => {
    arrived();
    return new Promise<Response>(() => {});
  });
  const crm = makeClient({ maxConcurrency: 1 });
  const first = new AbortController();
  const second = new AbortController();
  const sent = failureOf(crm.accounts.create(ACCOUNT, { signal: first.signal }));
  const queued = failureOf(crm.accounts.create(ACCOUNT, { signal: second.signal }));
  await inFlight;
  second.abort();
  first.abort();
  const [a, b] = await Promise.all([sent, queued]);
  expect([a.name, a.sideEffects]).toEqual(['CrmAbortError', 'unknown']);
  expect([b.name, b.sideEffects]).toEqual(['CrmAbortError', 'none']);
  expect(seen).toHaveLength(1);
});

test("a GET that may have acted on an earlier attempt keeps sideEffects: 'unknown' whatever its last answer", async () => {
  capture('get', '/integrations/v1/opportunities/opp_1', (_request, index) =>
    index === 0
      ? HttpResponse.json({ error: { message: 'upstream' } }, { status: 500 })
      : HttpResponse.json({ error: { message: 'gone' } }, { status: 404 }),
  );
  const error = await failureOf(makeClient().opportunities.get('opp_1'));
  expect([error.name, error.sideEffects]).toEqual(['CrmNotFoundError', 'unknown']);
});

test("an apiKey function that fails leaves sideEffects: 'none'", async () => {
  const crm = new CrmClient({
    baseUrl: 'https://crm.test',
    tenantId: 't',
    apiKey: async () => {
      throw new Error('vault down');
    },
  });
  const error = await failureOf(crm.accounts.create(ACCOUNT));
  expect(error.sideEffects).toBe('none');
});

test('sideEffects is part of the JSON form of an error', async () => {
  capture('post', '/integrations/v1/accounts', HttpResponse.json({}, { status: 500 }));
  const error = await failureOf(makeClient({ maxRetries: 0 }).accounts.create(ACCOUNT));
  expect(error.toJSON()).toMatchObject({ name: 'CrmServerError', status: 500, sideEffects: 'unknown' });
});
