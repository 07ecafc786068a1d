import { delay, HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  CrmAbortError,
  CrmApiError,
  CrmAuthenticationError,
  CrmBadRequestError,
  CrmConflictError,
  CrmConnectionError,
  CrmError,
  CrmNotFoundError,
  CrmPermissionDeniedError,
  CrmRateLimitError,
  CrmResponseValidationError,
  CrmServerError,
  CrmTimeoutError,
  CrmUnprocessableEntityError,
  CrmValidationError,
  isCrmAbortError,
  isCrmApiError,
  isCrmConnectionError,
  isCrmError,
  isCrmResponseValidationError,
  isCrmTimeoutError,
  isCrmValidationError,
} from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';
import { mswPath, pathOf } from '../support/endpoint-paths';

const OPP_PATH = pathOf(endpoints.getOpportunity, { id: 'opp_1' });
const OPPORTUNITY = { id: 'opp_1', name: 'Renewal 2027', accountId: 'acc_1' };

/** A client that never retries, so one handler answer is one outcome. */
const client = () => makeClient({ maxRetries: 0 });

/** The rejection of `call`; fails the test when the call succeeds. */
async function rejectionOf(call: PromiseLike<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`Expected the call to fail, it returned ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** The rejection of `call`, checked to be a `type` and typed as one. */
async function failure<T>(call: PromiseLike<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const error = await rejectionOf(call);
  expect(error).toBeInstanceOf(type);
  return error as T;
}

const API_SUBCLASSES = [
  CrmBadRequestError,
  CrmAuthenticationError,
  CrmPermissionDeniedError,
  CrmNotFoundError,
  CrmConflictError,
  CrmUnprocessableEntityError,
  CrmRateLimitError,
  CrmServerError,
] as const;

describe('HTTP error statuses', () => {
  test.each([
    [400, 'CrmBadRequestError', CrmBadRequestError],
    [401, 'CrmAuthenticationError', CrmAuthenticationError],
    [403, 'CrmPermissionDeniedError', CrmPermissionDeniedError],
    [404, 'CrmNotFoundError', CrmNotFoundError],
    [409, 'CrmConflictError', CrmConflictError],
    [422, 'CrmUnprocessableEntityError', CrmUnprocessableEntityError],
    [429, 'CrmRateLimitError', CrmRateLimitError],
    [500, 'CrmServerError', CrmServerError],
    [501, 'CrmServerError', CrmServerError],
    [502, 'CrmServerError', CrmServerError],
    [503, 'CrmServerError', CrmServerError],
    [504, 'CrmServerError', CrmServerError],
  ] as const)('a %s becomes a %s carrying status, body, headers and request id', async (status, name, ErrorClass) => {
    const body = { error: { message: `The server says ${status}`, code: 'E_TEST' } };
    capture(
      'get',
      OPP_PATH,
      HttpResponse.json(body, { status, headers: { 'x-request-id': `req_${status}`, 'x-extra': 'kept' } }),
    );

    const error = await failure(client().opportunities.get('opp_1'), ErrorClass);

    expect(error.name).toBe(name);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toBeInstanceOf(Error);
    for (const Other of API_SUBCLASSES) {
      if (Other !== ErrorClass) expect(error).not.toBeInstanceOf(Other);
    }
    expect(error.status).toBe(status);
    expect(error.body).toEqual(body);
    expect(error.headers).toBeInstanceOf(Headers);
    expect(error.headers.get('x-extra')).toBe('kept');
    expect(error.requestId).toBe(`req_${status}`);
    expect(error.message).toContain(`The server says ${status}`);
    expect(error.message).toContain(String(status));
  });

  test.each([410, 418])('a %s without a class of its own becomes a plain CrmApiError', async (status) => {
    capture('get', OPP_PATH, HttpResponse.json({ message: 'Not here any more' }, { status }));

    const error = await failure(client().opportunities.get('opp_1'), CrmApiError);

    expect(error.name).toBe('CrmApiError');
    expect(error).toBeInstanceOf(CrmError);
    for (const Subclass of API_SUBCLASSES) expect(error).not.toBeInstanceOf(Subclass);
    expect(error.status).toBe(status);
    expect(error.message).toContain('Not here any more');
  });

  test('an error from a POST names the failing call in its message', async () => {
    capture('post', mswPath(endpoints.createContact), HttpResponse.json({ message: 'Email taken' }, { status: 409 }));

    const error = await failure(client().contacts.create({ email: 'ada@example.com' }), CrmConflictError);

    expect(error.message).toContain('Email taken');
    expect(error.message).toContain('POST');
    expect(error.message).toContain('contacts');
  });

  test('an error without an x-request-id has requestId undefined', async () => {
    capture('get', OPP_PATH, HttpResponse.json({ message: 'nope' }, { status: 404 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmNotFoundError);

    expect(error.requestId).toBeUndefined();
  });
});

describe('the server’s message', () => {
  test.each([
    ['{ error: { message } }', { error: { message: 'Opportunity opp_1 does not exist' } }],
    ['{ message }', { message: 'Opportunity opp_1 does not exist' }],
    ['{ error: string }', { error: 'Opportunity opp_1 does not exist' }],
  ])('is taken from a %s body', async (_shape, body) => {
    capture('get', OPP_PATH, HttpResponse.json(body, { status: 404 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmNotFoundError);

    expect(error.message).toContain('Opportunity opp_1 does not exist');
    expect(error.body).toEqual(body);
  });

  test('is taken from a plain-text body, which is kept as text', async () => {
    capture(
      'get',
      OPP_PATH,
      new HttpResponse('Upstream database unavailable', { status: 502, headers: { 'content-type': 'text/plain' } }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmServerError);

    expect(error.body).toBe('Upstream database unavailable');
    expect(error.message).toContain('Upstream database unavailable');
  });

  test('an HTML error page is kept as text in body', async () => {
    const page = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    capture('get', OPP_PATH, HttpResponse.html(page, { status: 502 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmServerError);

    expect(error.body).toBe(page);
  });

  test('an error body that claims to be JSON but is malformed is kept as text, not lost', async () => {
    capture(
      'get',
      OPP_PATH,
      new HttpResponse('{"error": {"message": "half a bo', {
        status: 500,
        headers: { 'content-type': 'application/json' },
      }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmServerError);

    expect(error.status).toBe(500);
    expect(error.body).toBe('{"error": {"message": "half a bo');
  });

  test('an empty error body still gives a status in the message', async () => {
    capture('get', OPP_PATH, new HttpResponse(null, { status: 403, statusText: 'Forbidden' }));

    const error = await failure(client().opportunities.get('opp_1'), CrmPermissionDeniedError);

    expect(error.status).toBe(403);
    expect(error.message).toContain('403');
    expect(error.body).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  test('a 429 carries Retry-After seconds in milliseconds', async () => {
    capture(
      'get',
      OPP_PATH,
      HttpResponse.json({ message: 'slow down' }, { status: 429, headers: { 'retry-after': '7' } }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmRateLimitError);

    expect(error.retryAfterMs).toBe(7_000);
  });

  test('a 503 carries Retry-After seconds in milliseconds', async () => {
    capture(
      'get',
      OPP_PATH,
      HttpResponse.json({ message: 'maintenance' }, { status: 503, headers: { 'retry-after': '3' } }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmServerError);

    expect(error.retryAfterMs).toBe(3_000);
  });

  test('a 429 carries an HTTP-date Retry-After as the milliseconds until that date', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
    capture(
      'get',
      OPP_PATH,
      HttpResponse.json({ message: 'slow down' }, { status: 429, headers: { 'retry-after': at.toUTCString() } }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmRateLimitError);

    expect(error.retryAfterMs).toBeGreaterThan(55_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(61_000);
  });

  test('a 429 without Retry-After has retryAfterMs undefined', async () => {
    capture('get', OPP_PATH, HttpResponse.json({ message: 'slow down' }, { status: 429 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmRateLimitError);

    expect(error.retryAfterMs).toBeUndefined();
  });
});

describe('success: false envelopes', () => {
  test('a 200 with success: false becomes a CrmApiError with the server’s message', async () => {
    const body = { success: false, error: { message: 'Tenant suspended' } };
    capture('get', OPP_PATH, HttpResponse.json(body, { headers: { 'x-request-id': 'req_sf' } }));

    const error = await failure(client().opportunities.get('opp_1'), CrmApiError);

    expect(error).not.toBeInstanceOf(CrmResponseValidationError);
    expect(error.status).toBe(200);
    expect(error.body).toEqual(body);
    expect(error.requestId).toBe('req_sf');
    expect(error.message).toContain('Tenant suspended');
  });

  test('a success: false without a message still says success: false', async () => {
    capture('post', mswPath(endpoints.createAccount), HttpResponse.json({ success: false, data: null }));

    const error = await failure(client().accounts.create({ name: 'Acme' }), CrmApiError);

    expect(error.message).toContain('success: false');
  });
});

describe('responses that do not match the API', () => {
  test('a 200 that is not an envelope throws CrmResponseValidationError with the issues and raw body', async () => {
    capture('get', OPP_PATH, HttpResponse.json(OPPORTUNITY));

    const error = await failure(client().opportunities.get('opp_1'), CrmResponseValidationError);

    expect(error).toBeInstanceOf(CrmError);
    expect(error).not.toBeInstanceOf(CrmApiError);
    expect(error.name).toBe('CrmResponseValidationError');
    expect(error.status).toBe(200);
    expect(error.body).toEqual(OPPORTUNITY);
    expect(error.issues.map((issue) => issue.field)).toEqual(expect.arrayContaining(['success', 'data']));
  });

  test('a documented field of the wrong type throws CrmResponseValidationError naming the field', async () => {
    const body = { success: true, data: { ...OPPORTUNITY, amount: 'a lot', isIntegration: 'yes' } };
    capture('get', OPP_PATH, HttpResponse.json(body));

    const error = await failure(client().opportunities.get('opp_1'), CrmResponseValidationError);

    expect(error.body).toEqual(body);
    const fields = error.issues.map((issue) => issue.field);
    expect(fields).toEqual(expect.arrayContaining(['data.amount', 'data.isIntegration']));
    expect(error.message).toContain('amount');
  });

  test('a response without the required id throws CrmResponseValidationError', async () => {
    capture('post', mswPath(endpoints.createAccount), ok({ name: 'Acme' }));

    const error = await failure(client().accounts.create({ name: 'Acme' }), CrmResponseValidationError);

    expect(error.issues.map((issue) => issue.field)).toContain('data.id');
  });

  test('a list whose data is not an array throws CrmResponseValidationError', async () => {
    capture('get', mswPath(endpoints.listContacts), ok({ id: 'con_1' }, { pagination: { page: 1, pages: 1 } }));

    const error = await failure(client().contacts.list(), CrmResponseValidationError);

    expect(error.issues.map((issue) => issue.field)).toContain('data');
  });

  test('malformed JSON throws CrmResponseValidationError with the raw text, never a SyntaxError', async () => {
    const text = '{"success": true, "data": {"id": "opp_1"';
    capture('get', OPP_PATH, new HttpResponse(text, { headers: { 'content-type': 'application/json' } }));

    const error = await rejectionOf(client().opportunities.get('opp_1'));

    expect(error).not.toBeInstanceOf(SyntaxError);
    expect(error).toBeInstanceOf(CrmResponseValidationError);
    const validation = error as CrmResponseValidationError;
    expect(validation.body).toBe(text);
    expect(validation.status).toBe(200);
    expect(Array.isArray(validation.issues)).toBe(true);
  });

  test('an HTML page with status 200 throws CrmResponseValidationError with the page as body', async () => {
    const page = '<!doctype html><html><body>Log in to continue</body></html>';
    capture('get', OPP_PATH, HttpResponse.html(page));

    const error = await rejectionOf(client().opportunities.get('opp_1'));

    expect(error).not.toBeInstanceOf(SyntaxError);
    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect((error as CrmResponseValidationError).body).toBe(page);
    expect((error as CrmResponseValidationError).message).toContain('text/html');
  });

  test('an empty 200 body throws CrmResponseValidationError', async () => {
    capture('get', OPP_PATH, new HttpResponse(null, { status: 200 }));

    const error = await rejectionOf(client().opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmResponseValidationError);
  });
});

describe('responses the SDK must tolerate', () => {
  test('keeps unknown fields and accepts nulls in an opportunity', async () => {
    const data = {
      id: 'opp_1',
      name: null,
      amount: null,
      ownerId: null,
      primaryContact: null,
      brandNewField: 'kept',
      nested: { deeper: [1, 2, 3] },
    };
    capture('get', OPP_PATH, ok(data, { meta: { served: 'edge' } }));

    const opportunity = await client().opportunities.get('opp_1');

    expect(opportunity).toEqual(data);
  });

  test('accepts an activity type the spec does not list, such as sms', async () => {
    capture(
      'post',
      mswPath(endpoints.createActivity),
      ok({ id: 'act_1', type: 'sms', relatedToType: 'lead', relatedToId: 'opp_1', subject: 'Texted' }),
    );

    const activity = await client().activities.create({ opportunityId: 'opp_1', type: 'call', subject: 'Texted' });

    expect(activity.type).toBe('sms');
    expect(activity.relatedToType).toBe('lead');
  });

  test('accepts unknown enum values in a listed page', async () => {
    capture(
      'get',
      mswPath(endpoints.listActivities),
      ok([{ id: 'act_1', type: 'video_call', ownerName: null }], {
        pagination: { page: 1, limit: 20, total: 1, pages: 1 },
      }),
    );

    const page = await client().activities.list({ opportunityId: 'opp_1' });

    expect(page.data).toEqual([{ id: 'act_1', type: 'video_call', ownerName: null }]);
  });

  test('accepts an account status and a contact status the spec does not list', async () => {
    capture('post', mswPath(endpoints.createAccount), ok({ id: 'acc_1', status: 'archived', owner_name: null }));
    capture('post', mswPath(endpoints.createContact), ok({ id: 'con_1', status: 'bounced' }));
    const crm = client();

    await expect(crm.accounts.create({ name: 'Acme' })).resolves.toEqual({
      id: 'acc_1',
      status: 'archived',
      owner_name: null,
    });
    await expect(crm.contacts.create({ firstName: 'Ada' })).resolves.toEqual({ id: 'con_1', status: 'bounced' });
  });
});

describe('transport failures', () => {
  test('a connection that fails becomes a CrmConnectionError', async () => {
    capture('get', OPP_PATH, HttpResponse.error());

    const error = await failure(client().opportunities.get('opp_1'), CrmConnectionError);

    expect(error).toBeInstanceOf(CrmError);
    expect(error).not.toBeInstanceOf(CrmTimeoutError);
    expect(error).not.toBeInstanceOf(CrmApiError);
    expect(error.name).toBe('CrmConnectionError');
    expect(error.message).toContain('opportunities/opp_1');
  });

  test('an attempt slower than the per-call timeout becomes a CrmTimeoutError', async () => {
    // Answered after 10 s: a call that ended within seconds ended at its 30 ms timeout, whatever the machine's load.
    capture('get', OPP_PATH, async () => {
      await delay(10_000);
      return ok(OPPORTUNITY);
    });
    const started = performance.now();

    const error = await failure(
      makeClient().opportunities.get('opp_1', { timeout: 30, maxRetries: 0 }),
      CrmTimeoutError,
    );

    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error).toBeInstanceOf(CrmError);
    expect(error.name).toBe('CrmTimeoutError');
    expect(error.message).toContain('30 ms');
  });

  test('a client-wide timeout applies to every call', async () => {
    capture('get', OPP_PATH, async () => {
      await delay(200);
      return ok(OPPORTUNITY);
    });

    const error = await rejectionOf(makeClient({ timeout: 30, maxRetries: 0 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmTimeoutError);
  });

  test('aborting the caller’s signal mid-request becomes a CrmAbortError carrying the reason', async () => {
    capture('get', OPP_PATH, async () => {
      await delay(500);
      return ok(OPPORTUNITY);
    });
    const controller = new AbortController();
    const reason = new Error('user navigated away');

    const call = client().opportunities.get('opp_1', { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);
    const error = await failure(call, CrmAbortError);

    expect(error).toBeInstanceOf(CrmError);
    expect(error).not.toBeInstanceOf(CrmConnectionError);
    expect(error).not.toBeInstanceOf(CrmTimeoutError);
    expect(error.name).toBe('CrmAbortError');
    expect(error.cause).toBe(reason);
  });

  test('an already-aborted signal becomes a CrmAbortError', async () => {
    capture('get', OPP_PATH, ok(OPPORTUNITY));

    const error = await rejectionOf(client().opportunities.get('opp_1', { signal: AbortSignal.abort() }));

    expect(error).toBeInstanceOf(CrmAbortError);
  });

  test('aborting while waiting to retry becomes a CrmAbortError and sends no further attempt', async () => {
    const seen = capture(
      'get',
      OPP_PATH,
      HttpResponse.json({ message: 'busy' }, { status: 503, headers: { 'retry-after': '5' } }),
    );
    const controller = new AbortController();

    const call = makeClient().opportunities.get('opp_1', { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const error = await rejectionOf(call);

    expect(error).toBeInstanceOf(CrmAbortError);
    expect(seen).toHaveLength(1);
  });
});

describe('type guards', () => {
  test('each guard recognises its own family and nothing else', async () => {
    capture('get', OPP_PATH, HttpResponse.json({ message: 'gone' }, { status: 404 }));
    capture('get', '/integrations/v1/opportunities/opp_bad', HttpResponse.json({ id: 'opp_bad' }));
    capture('get', '/integrations/v1/opportunities/opp_down', HttpResponse.error());
    capture('get', '/integrations/v1/opportunities/opp_slow', async () => {
      await delay(200);
      return ok(OPPORTUNITY);
    });
    capture('get', '/integrations/v1/opportunities/opp_abort', ok(OPPORTUNITY));
    const crm = client();

    const api = await rejectionOf(crm.opportunities.get('opp_1'));
    const response = await rejectionOf(crm.opportunities.get('opp_bad'));
    const connection = await rejectionOf(crm.opportunities.get('opp_down'));
    const timeout = await rejectionOf(crm.opportunities.get('opp_slow', { timeout: 30 }));
    const aborted = await rejectionOf(crm.opportunities.get('opp_abort', { signal: AbortSignal.abort() }));
    const validation = await rejectionOf(crm.opportunities.get(''));

    const guards = {
      isCrmError,
      isCrmApiError,
      isCrmResponseValidationError,
      isCrmConnectionError,
      isCrmTimeoutError,
      isCrmAbortError,
      isCrmValidationError,
    };
    const verdicts = (value: unknown) =>
      Object.entries(guards)
        .filter(([, guard]) => guard(value))
        .map(([name]) => name);

    expect(verdicts(api)).toEqual(['isCrmError', 'isCrmApiError']);
    expect(verdicts(response)).toEqual(['isCrmError', 'isCrmResponseValidationError']);
    expect(verdicts(connection)).toEqual(['isCrmError', 'isCrmConnectionError']);
    expect(verdicts(timeout)).toEqual(['isCrmError', 'isCrmConnectionError', 'isCrmTimeoutError']);
    expect(verdicts(aborted)).toEqual(['isCrmError', 'isCrmAbortError']);
    expect(verdicts(validation)).toEqual(['isCrmError', 'isCrmValidationError']);
    expect(validation).toBeInstanceOf(CrmValidationError);
  });

  test.each([
    ['a plain Error', new Error('boom')],
    ['a TypeError', new TypeError('Failed to fetch')],
    ['an object named like one', { name: 'CrmNotFoundError', status: 404, message: 'x' }],
    ['null', null],
    ['a string', 'CrmError'],
    ['undefined', undefined],
  ])('no guard accepts %s', (_what, value) => {
    for (const guard of [
      isCrmError,
      isCrmApiError,
      isCrmResponseValidationError,
      isCrmConnectionError,
      isCrmTimeoutError,
      isCrmAbortError,
      isCrmValidationError,
    ]) {
      expect(guard(value)).toBe(false);
    }
    expect(value instanceof CrmError).toBe(false);
  });
});

describe('a duplicate copy of the package', () => {
  test('an error thrown by another copy passes instanceof and the guards of this copy', async () => {
    vi.resetModules();
    const other = await import('../../src/index');
    // Guard against the test proving nothing: the second copy really has its own classes.
    expect(other.CrmNotFoundError).not.toBe(CrmNotFoundError);

    capture(
      'get',
      OPP_PATH,
      HttpResponse.json({ message: 'gone' }, { status: 404, headers: { 'x-request-id': 'r1' } }),
    );
    const crm = new other.CrmClient({ baseUrl: 'https://crm.test', apiKey: 'key_other_1234', tenantId: 't1' });
    const error = await rejectionOf(crm.opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(other.CrmNotFoundError);
    expect(Object.getPrototypeOf(error)).not.toBe(CrmNotFoundError.prototype);
    expect(error instanceof CrmNotFoundError).toBe(true);
    expect(error instanceof CrmApiError).toBe(true);
    expect(error instanceof CrmError).toBe(true);
    expect(error instanceof CrmServerError).toBe(false);
    expect(isCrmError(error)).toBe(true);
    expect(isCrmApiError(error)).toBe(true);
    expect((error as CrmNotFoundError).requestId).toBe('r1');
  });

  test('an error of this copy passes the guards and instanceof of another copy', async () => {
    vi.resetModules();
    const other = await import('../../src/core/errors');
    expect(other.CrmTimeoutError).not.toBe(CrmTimeoutError);

    const error = new CrmTimeoutError('slow');

    expect(error instanceof other.CrmTimeoutError).toBe(true);
    expect(error instanceof other.CrmConnectionError).toBe(true);
    expect(error instanceof other.CrmApiError).toBe(false);
    expect(other.isCrmTimeoutError(error)).toBe(true);
    expect(other.isCrmConnectionError(error)).toBe(true);
    expect(other.isCrmApiError(error)).toBe(false);
  });
});
