import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  CrmNotFoundError,
  type CrmPromise,
  CrmResponseValidationError,
  CrmServerError,
  CrmValidationError,
} from '../../src/index';
import { API_KEY, BASE_URL, capture, captureAll, makeClient, ok, rejection, TENANT } from '../support/capture';

const WIDGETS = '/integrations/v1/widgets';

describe('crm.request() calls an endpoint the SDK does not describe', () => {
  test('sends the credentials, x-tenant-id and tenantId in the query by default, and resolves to the envelope data', async () => {
    const seen = capture('get', WIDGETS, ok([{ id: 'w1' }]));

    const data = await makeClient().request({ method: 'GET', path: 'integrations/v1/widgets', query: { limit: 10 } });

    expect(data).toEqual([{ id: 'w1' }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url.search).toBe(`?tenantId=${TENANT}&limit=10`);
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(seen[0]?.headers.get('x-tenant-id')).toBe(TENANT);
  });

  test('takes a path with a leading slash, repeats an array parameter and sends a Date as its ISO string', async () => {
    const seen = capture('get', WIDGETS, ok({ id: 'w1' }));

    await makeClient().request({
      method: 'GET',
      path: '/integrations/v1/widgets',
      query: { tag: ['a', 'b c'], since: new Date('2026-11-01T00:00:00Z'), skipped: undefined, none: null },
    });

    expect(seen[0]?.url.search).toBe(`?tenantId=${TENANT}&tag=a&tag=b%20c&since=2026-11-01T00%3A00%3A00.000Z`);
  });

  test("puts tenantId in the JSON body with tenantIn: 'body', and nowhere but the header with 'none'", async () => {
    const posted = capture('post', WIDGETS, ok({ id: 'w1' }));
    const patched = capture('patch', `${WIDGETS}/w1`, ok({ id: 'w1' }));
    const crm = makeClient();

    await crm.request({ method: 'POST', path: 'integrations/v1/widgets', body: { name: 'W' }, tenantIn: 'body' });
    await crm.request({ method: 'PATCH', path: 'integrations/v1/widgets/w1', body: { name: 'X' }, tenantIn: 'none' });

    expect(posted[0]?.body).toEqual({ tenantId: TENANT, name: 'W' });
    expect(posted[0]?.url.search).toBe('');
    expect(posted[0]?.headers.get('content-type')).toBe('application/json');
    expect(patched[0]?.body).toEqual({ name: 'X' });
    expect(patched[0]?.url.search).toBe('');
    expect(patched[0]?.headers.get('x-tenant-id')).toBe(TENANT);
  });

  test('lets the caller name the type of the data', () => {
    const crm = makeClient();
    expectTypeOf(crm.request<{ id: string }>).returns.toEqualTypeOf<CrmPromise<{ id: string }>>();
    expectTypeOf(crm.request).returns.toEqualTypeOf<CrmPromise<unknown>>();
  });

  test('retries a GET and a DELETE on a 503, but not a POST or a PATCH on a 500', async () => {
    const flaky = (request: Request, index: number) =>
      index === 0 ? HttpResponse.json({ success: false }, { status: 503 }) : ok({ method: request.method });
    const gets = capture('get', WIDGETS, flaky);
    const deletes = capture('delete', `${WIDGETS}/w1`, flaky);
    const posts = capture('post', WIDGETS, HttpResponse.json({ error: 'boom' }, { status: 500 }));
    const patches = capture('patch', `${WIDGETS}/w1`, HttpResponse.json({ error: 'boom' }, { status: 500 }));
    const crm = makeClient({ maxRetries: 2 });

    expect(await crm.request({ method: 'GET', path: 'integrations/v1/widgets' })).toEqual({ method: 'GET' });
    expect(await crm.request({ method: 'DELETE', path: 'integrations/v1/widgets/w1' })).toEqual({ method: 'DELETE' });
    expect(await rejection(crm.request({ method: 'POST', path: 'integrations/v1/widgets', body: {} }))).toBeInstanceOf(
      CrmServerError,
    );
    expect(
      await rejection(crm.request({ method: 'PATCH', path: 'integrations/v1/widgets/w1', body: {} })),
    ).toBeInstanceOf(CrmServerError);
    expect([gets.length, deletes.length, posts.length, patches.length]).toEqual([2, 2, 1, 1]);
  });

  test('maps errors like any call, with the server code, and masks a key the server echoes', async () => {
    capture(
      'get',
      `${WIDGETS}/nope`,
      HttpResponse.json(
        { success: false, error: { code: 'NOT_FOUND', message: `no widget for ${API_KEY}`, details: { id: 'nope' } } },
        { status: 404, headers: { 'x-request-id': 'req_9' } },
      ),
    );

    const error = await rejection(makeClient().request({ method: 'GET', path: 'integrations/v1/widgets/nope' }));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', details: { id: 'nope' }, requestId: 'req_9' });
    expect(error.message).toBe('404 from GET /integrations/v1/widgets/nope: no widget for [redacted]');
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  test('refuses an answer that is not an envelope with CrmResponseValidationError', async () => {
    capture('get', WIDGETS, HttpResponse.json([{ id: 'w1' }]));

    const error = await rejection(makeClient().request({ method: 'GET', path: 'integrations/v1/widgets' }));

    expect(error).toBeInstanceOf(CrmResponseValidationError);
  });

  test('gives the response and its request id with withResponse()', async () => {
    capture('get', WIDGETS, ok({ id: 'w1' }, {}, { headers: { 'x-request-id': 'req_1' } }));

    const { data, response, requestId } = await makeClient()
      .request({ method: 'GET', path: 'integrations/v1/widgets' })
      .withResponse();

    expect(data).toEqual({ id: 'w1' });
    expect(response.status).toBe(200);
    expect(requestId).toBe('req_1');
  });

  test.each([
    ['a URL', { method: 'GET', path: 'https://evil.example/steal' }, 'path'],
    ['a protocol-relative URL', { method: 'GET', path: '//evil.example/steal' }, 'path'],
    ['a path with ..', { method: 'GET', path: 'integrations/v1/../api-key' }, 'path'],
    ['a path with an encoded ..', { method: 'GET', path: 'integrations/v1/%2E%2e/api-key' }, 'path'],
    ['a path with a . segment', { method: 'GET', path: 'integrations/./v1' }, 'path'],
    ['a path with a backslash', { method: 'GET', path: 'integrations\\v1' }, 'path'],
    ['a path with a query string', { method: 'GET', path: 'integrations/v1/widgets?tenantId=other' }, 'path'],
    ['an empty path', { method: 'GET', path: '/' }, 'path'],
    ['an unknown method', { method: 'TRACE', path: 'integrations/v1/widgets' }, 'method'],
    [
      'tenantId in the query',
      { method: 'GET', path: 'integrations/v1/widgets', query: { tenantId: 'other' } },
      'query.tenantId',
    ],
    [
      'tenantId in the body',
      { method: 'POST', path: 'integrations/v1/widgets', body: { tenantId: 'other' } },
      'body.tenantId',
    ],
    ['a body on a GET', { method: 'GET', path: 'integrations/v1/widgets', body: { a: 1 } }, 'body'],
    [
      "a body that is not an object with tenantIn 'body'",
      { method: 'POST', path: 'integrations/v1/widgets', body: [1], tenantIn: 'body' },
      'body',
    ],
    [
      'an object as a query value',
      { method: 'GET', path: 'integrations/v1/widgets', query: { filter: { a: 1 } } },
      'query.filter',
    ],
    ['an unknown tenantIn', { method: 'GET', path: 'integrations/v1/widgets', tenantIn: 'header' }, 'tenantIn'],
    ['a misspelt field', { method: 'GET', path: 'integrations/v1/widgets', qeury: {} }, 'qeury'],
  ])('refuses %s with CrmValidationError and sends nothing', async (_name, request, field) => {
    const seen = captureAll();

    const error = await rejection(makeClient().request(request as never));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((issue) => issue.field)).toContain(field);
    expect(error.message).toMatch(/^Invalid request: /);
    expect(seen).toEqual([]);
  });

  test('never sends to another origin, whatever the path', async () => {
    const seen = captureAll();
    for (const path of ['@evil.example/x', 'integrations/v1/%2F%2Fevil.example']) {
      await makeClient().request({ method: 'GET', path });
    }
    expect(seen.map((request) => request.url.origin)).toEqual([BASE_URL, BASE_URL]);
  });
});
