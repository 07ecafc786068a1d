import { delay, HttpResponse } from 'msw';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  CrmApiError,
  CrmAuthenticationError,
  CrmBadRequestError,
  CrmConflictError,
  CrmConnectionError,
  CrmNotFoundError,
  CrmPermissionDeniedError,
  CrmRateLimitError,
  CrmServerError,
  CrmTimeoutError,
  CrmUnprocessableEntityError,
} from '../../src/index';
import { type Captured, capture, makeClient, ok } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

/*
 * Backoff delays are real ky delays (hundreds of milliseconds), so every test here runs on fake
 * `setTimeout`/`Date` and moves the clock forward instead of sleeping. MSW hands a request to its
 * handler one macrotask after ky's timer fires, so `settle()` lets real I/O turns pass (setImmediate
 * is not faked) before the test counts requests.
 */

const OPP_PATH = '/integrations/v1/opportunities/opp_1';
const OPPORTUNITY = { id: 'opp_1', name: 'Renewal 2027', accountId: 'acc_1' };

type Fault = number | 'network';

/** One failed attempt: an error status with a JSON body, or a connection that fails. */
const fault = (kind: Fault, headers: Record<string, string> = {}): Response =>
  kind === 'network'
    ? HttpResponse.error()
    : HttpResponse.json({ error: { message: `failure ${kind}` } }, { status: kind, headers });

/** Answers with `faults` in order, then with `success` for every later attempt. */
const failThen =
  (faults: readonly Response[], success: () => Response) =>
  (_request: Request, index: number): Response =>
    faults[index]?.clone() ?? success();

/** Lets MSW and ky run their real (unfaked) I/O turns. */
async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Drives the fake clock until the call settles (at most a simulated minute), then reports how. */
async function outcome<T>(call: PromiseLike<T>): Promise<Outcome<T>> {
  let done = false;
  const result = Promise.resolve(
    call.then(
      (value): Outcome<T> => ({ ok: true, value }),
      (error: unknown): Outcome<T> => ({ ok: false, error }),
    ),
  ).finally(() => {
    done = true;
  });
  for (let step = 0; step < 240 && !done; step++) {
    await vi.advanceTimersByTimeAsync(250);
    await settle();
  }
  return result;
}

async function succeeds<T>(call: PromiseLike<T>): Promise<T> {
  const result = await outcome(call);
  if (!result.ok) throw new Error(`Expected the call to succeed, it failed with ${String(result.error)}`);
  return result.value;
}

async function fails(call: PromiseLike<unknown>): Promise<unknown> {
  const result = await outcome(call);
  if (result.ok) throw new Error('Expected the call to fail, it succeeded');
  return result.error;
}

const attemptsOf = (seen: readonly Captured[]) => seen.map((request) => `${request.method} ${request.url.pathname}`);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

const RETRIED: readonly Fault[] = [408, 429, 500, 502, 503, 504, 'network'];

describe('GET and PUT', () => {
  test.each(RETRIED)('retries a GET that failed with %s and returns the next attempt’s data', async (kind) => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(kind)], () => ok(OPPORTUNITY)),
    );

    const opportunity = await succeeds(makeClient().opportunities.get('opp_1'));

    expect(opportunity).toEqual(OPPORTUNITY);
    expect(attemptsOf(seen)).toEqual([`GET ${OPP_PATH}`, `GET ${OPP_PATH}`]);
    expect(seen[1]?.url.searchParams.get('tenantId')).toBe('tenant_1');
    expect(seen[1]?.headers.get('x-api-key')).toBe(seen[0]?.headers.get('x-api-key'));
  });

  test.each(RETRIED)('retries a PUT that failed with %s, sending the same body again', async (kind) => {
    const seen = capture(
      'put',
      OPP_PATH,
      failThen([fault(kind)], () => ok({ ...OPPORTUNITY, stage: 'won' })),
    );

    const opportunity = await succeeds(makeClient().opportunities.update('opp_1', { stage: 'won', amount: 1200 }));

    expect(opportunity).toEqual({ ...OPPORTUNITY, stage: 'won' });
    expect(attemptsOf(seen)).toEqual([`PUT ${OPP_PATH}`, `PUT ${OPP_PATH}`]);
    expect(seen[0]?.body).toEqual({ stage: 'won', amount: 1200 });
    expect(seen[1]?.body).toEqual({ stage: 'won', amount: 1200 });
  });

  test('retries a GET whose attempt timed out', async () => {
    const seen = capture('get', OPP_PATH, async (_request, index) => {
      if (index === 0) await delay(5_000);
      return ok(OPPORTUNITY);
    });

    const opportunity = await succeeds(makeClient().opportunities.get('opp_1', { timeout: 100 }));

    expect(opportunity).toEqual(OPPORTUNITY);
    expect(seen).toHaveLength(2);
  });

  test('recovers from two failures in a row within the default two retries', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(502), fault('network')], () => ok(OPPORTUNITY)),
    );

    await expect(succeeds(makeClient().opportunities.get('opp_1'))).resolves.toEqual(OPPORTUNITY);
    expect(seen).toHaveLength(3);
  });

  test('gives up after three attempts by default and surfaces the last server error', async () => {
    const seen = capture('get', OPP_PATH, (_request, index) =>
      HttpResponse.json({ error: { message: `attempt ${index + 1} failed` } }, { status: 500 }),
    );

    const error = await fails(makeClient().opportunities.get('opp_1'));

    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(CrmServerError);
    expect((error as CrmServerError).status).toBe(500);
    expect((error as CrmServerError).message).toContain('attempt 3 failed');
  });

  test('gives up after three attempts on a connection that keeps failing', async () => {
    const seen = capture('put', OPP_PATH, () => HttpResponse.error());

    const error = await fails(makeClient().opportunities.update('opp_1', { stage: 'lost' }));

    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(CrmConnectionError);
  });

  test.each([
    [400, CrmBadRequestError],
    [401, CrmAuthenticationError],
    [403, CrmPermissionDeniedError],
    [404, CrmNotFoundError],
    [409, CrmConflictError],
    [422, CrmUnprocessableEntityError],
  ] as const)('does not retry a GET that failed with %s', async (status, ErrorClass) => {
    const seen = capture('get', OPP_PATH, fault(status));

    const error = await fails(makeClient().opportunities.get('opp_1'));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(ErrorClass);
    expect((error as CrmApiError).status).toBe(status);
  });

  test.each([400, 401, 404, 422])('does not retry a PUT that failed with %s', async (status) => {
    const seen = capture('put', OPP_PATH, fault(status));

    const error = await fails(makeClient().opportunities.update('opp_1', { stage: 'won' }));

    expect(seen).toHaveLength(1);
    expect((error as CrmApiError).status).toBe(status);
  });
});

describe('maxRetries', () => {
  test('a client built with maxRetries 4 makes five attempts', async () => {
    const seen = capture('get', OPP_PATH, fault(503));

    const error = await fails(makeClient({ maxRetries: 4 }).opportunities.get('opp_1'));

    expect(seen).toHaveLength(5);
    expect(error).toBeInstanceOf(CrmServerError);
  });

  test('a client built with maxRetries 0 makes one attempt and surfaces its error', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(500)], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient({ maxRetries: 0 }).opportunities.get('opp_1'));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmServerError);
  });

  test('a per-call maxRetries of 1 makes two attempts', async () => {
    const seen = capture('get', OPP_PATH, fault(500));

    await fails(makeClient().opportunities.get('opp_1', { maxRetries: 1 }));

    expect(seen).toHaveLength(2);
  });

  test('a per-call maxRetries of 0 disables retries on a client with the default', async () => {
    const seen = capture(
      'put',
      OPP_PATH,
      failThen([fault('network')], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient().opportunities.update('opp_1', { stage: 'won' }, { maxRetries: 0 }));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmConnectionError);
  });

  test('a per-call maxRetries overrides the client’s maxRetries 0', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(502), fault(502), fault(502)], () => ok(OPPORTUNITY)),
    );

    const opportunity = await succeeds(makeClient({ maxRetries: 0 }).opportunities.get('opp_1', { maxRetries: 3 }));

    expect(opportunity).toEqual(OPPORTUNITY);
    expect(seen).toHaveLength(4);
  });

  test('a per-call maxRetries does not change the client’s own limit for later calls', async () => {
    const seen = capture('get', OPP_PATH, fault(500));
    const crm = makeClient();

    await fails(crm.opportunities.get('opp_1', { maxRetries: 0 }));
    await fails(crm.opportunities.get('opp_1'));

    expect(seen).toHaveLength(1 + 3);
  });

  test('a withTenant() client keeps the parent’s maxRetries', async () => {
    const seen = capture('get', OPP_PATH, fault(500));

    await fails(makeClient({ maxRetries: 1 }).withTenant('tenant_2').opportunities.get('opp_1'));

    expect(seen).toHaveLength(2);
    expect(seen.map((request) => request.url.searchParams.get('tenantId'))).toEqual(['tenant_2', 'tenant_2']);
  });
});

describe('POST', () => {
  const OPP_LIST = '/integrations/v1/opportunities';
  const INPUT = { name: 'Renewal 2027', accountId: 'acc_1' };

  test.each([
    [500, CrmServerError],
    [502, CrmServerError],
    [504, CrmServerError],
    [408, CrmApiError],
  ] as const)('does not repeat a POST that failed with %s', async (status, ErrorClass) => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(status)], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient().opportunities.create(INPUT));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(ErrorClass);
    expect((error as CrmApiError).status).toBe(status);
  });

  test('does not repeat a POST that failed with 503 and no Retry-After', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(503)], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient().opportunities.create(INPUT));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmServerError);
    expect((error as CrmServerError).status).toBe(503);
  });

  test('does not repeat a POST whose connection failed', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault('network')], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient().opportunities.create(INPUT));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmConnectionError);
  });

  test('does not repeat a POST whose attempt timed out', async () => {
    const seen = capture('post', OPP_LIST, async () => {
      await delay(5_000);
      return ok(OPPORTUNITY);
    });

    const error = await fails(makeClient().opportunities.create(INPUT, { timeout: 100 }));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmTimeoutError);
  });

  test('does not repeat a POST that failed with 500 even when the call asks for retries', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(500)], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient({ maxRetries: 5 }).opportunities.create(INPUT, { maxRetries: 5 }));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmServerError);
  });

  test('does not repeat an activity or contact creation that failed with 502', async () => {
    const activities = capture('post', mswPath(endpoints.createActivity), fault(502));
    const contacts = capture('post', mswPath(endpoints.createContact), fault(502));
    const crm = makeClient();

    await fails(crm.activities.create({ opportunityId: 'opp_1', type: 'call', subject: 'Kick-off' }));
    await fails(crm.contacts.create({ firstName: 'Ada' }));

    expect(activities).toHaveLength(1);
    expect(contacts).toHaveLength(1);
  });

  test('does not repeat an API key generation that failed with 500', async () => {
    const seen = capture('post', mswPath(endpoints.generateApiKey), fault(500));

    const error = await fails(makeClient().apiKey.generate());

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmServerError);
  });

  test('retries a POST rejected with 429 and sends the same body again', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(429)], () => ok(OPPORTUNITY)),
    );

    const opportunity = await succeeds(makeClient().opportunities.create(INPUT));

    expect(opportunity).toEqual(OPPORTUNITY);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.body).toEqual({ tenantId: 'tenant_1', ...INPUT });
    expect(seen[1]?.body).toEqual({ tenantId: 'tenant_1', ...INPUT });
  });

  test('retries a POST rejected with 503 and a Retry-After', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(503, { 'retry-after': '1' })], () => ok(OPPORTUNITY)),
    );

    const opportunity = await succeeds(makeClient().opportunities.create(INPUT));

    expect(opportunity).toEqual(OPPORTUNITY);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.body).toEqual({ tenantId: 'tenant_1', ...INPUT });
  });

  test('retries a POST rejected with 429 at most maxRetries times, then surfaces a CrmRateLimitError', async () => {
    const seen = capture('post', OPP_LIST, fault(429, { 'retry-after': '1' }));

    const error = await fails(makeClient().opportunities.create(INPUT));

    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(CrmRateLimitError);
    expect((error as CrmRateLimitError).retryAfterMs).toBe(1000);
  });

  test('a per-call maxRetries 0 stops even a 429 POST from being retried', async () => {
    const seen = capture(
      'post',
      OPP_LIST,
      failThen([fault(429)], () => ok(OPPORTUNITY)),
    );

    const error = await fails(makeClient().opportunities.create(INPUT, { maxRetries: 0 }));

    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(CrmRateLimitError);
  });
});

describe('Retry-After', () => {
  /** Starts `call` without driving the clock; `settled` reports how it ended. */
  function start(call: PromiseLike<unknown>) {
    const settled = call.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    return { settled };
  }

  async function advance(ms: number): Promise<void> {
    await vi.advanceTimersByTimeAsync(ms);
    await settle();
  }

  test('waits the seconds a 429’s Retry-After asks for before repeating a GET', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(429, { 'retry-after': '3' })], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.get('opp_1'));
    await advance(0);
    expect(seen).toHaveLength(1);

    await advance(2_950);
    expect(seen).toHaveLength(1);

    await advance(100);
    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });

  test('waits the seconds a 503’s Retry-After asks for before repeating a PUT', async () => {
    const seen = capture(
      'put',
      OPP_PATH,
      failThen([fault(503, { 'retry-after': '5' })], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.update('opp_1', { stage: 'won' }));
    await advance(0);
    expect(seen).toHaveLength(1);

    await advance(4_950);
    expect(seen).toHaveLength(1);

    await advance(100);
    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });

  test('waits until the HTTP date of a Retry-After before repeating a GET', async () => {
    vi.setSystemTime(new Date('2026-03-02T12:00:00.000Z'));
    const retryAt = new Date(Date.now() + 4_000).toUTCString();
    expect(retryAt).toBe('Mon, 02 Mar 2026 12:00:04 GMT');
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(503, { 'retry-after': retryAt })], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.get('opp_1'));
    await advance(0);
    expect(seen).toHaveLength(1);

    await advance(3_950);
    expect(seen).toHaveLength(1);

    await advance(100);
    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });

  test('waits the Retry-After of a 429 before repeating a POST', async () => {
    const path = '/integrations/v1/opportunities';
    const seen = capture(
      'post',
      path,
      failThen([fault(429, { 'retry-after': '2' })], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' }));
    await advance(0);
    expect(seen).toHaveLength(1);

    await advance(1_950);
    expect(seen).toHaveLength(1);

    await advance(100);
    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });

  test('a Retry-After of 0 repeats the request without waiting for a backoff', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(503, { 'retry-after': '0' })], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.get('opp_1'));
    await advance(0);
    await advance(0);

    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });

  test('backs off for a while before repeating a GET that failed with 500 without Retry-After', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      failThen([fault(500)], () => ok(OPPORTUNITY)),
    );

    const { settled } = start(makeClient().opportunities.get('opp_1'));
    await advance(0);
    await advance(100);
    expect(seen).toHaveLength(1);

    await advance(10_000);
    expect(seen).toHaveLength(2);
    await expect(settled).resolves.toEqual({ ok: true, value: OPPORTUNITY });
  });
});
