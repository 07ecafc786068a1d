import { describe, expect, test } from 'vitest';
import {
  CrmApiError,
  CrmClient,
  CrmConnectionError,
  type CrmLogger,
  CrmRateLimitError,
  CrmServerError,
} from '../../src/index';
import { API_KEY, rejection, TENANT } from '../support/capture';

/*
 * crm.request() and the extras as the described calls behave: retries per method, the
 * envelope, withResponse(), logging with masking, apiKey functions and maxConcurrency.
 */

const WIDGETS = 'integrations/v1/widgets';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A client whose fetch answers from `answers`, one per attempt (the last one repeated), and records each request. */
function scripted(
  answers: (() => Response | Promise<Response>)[],
  options: ConstructorParameters<typeof CrmClient>[0] = {},
) {
  const sent: { url: string; method: string; headers: Headers; body: string }[] = [];
  const crm = new CrmClient({
    baseUrl: 'https://crm.test',
    apiKey: API_KEY,
    tenantId: TENANT,
    maxRetries: 1,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      sent.push({ url: request.url, method: request.method, headers: request.headers, body: await request.text() });
      const answer = answers[Math.min(sent.length - 1, answers.length - 1)] as () => Response | Promise<Response>;
      return answer();
    },
    ...options,
  });
  return { crm, sent };
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    Response.json({ success: false, error: { code: `S${code}` } }, { status: code, headers });
const okData =
  (data: unknown = { id: 'w1' }) =>
  () =>
    Response.json({ success: true, data });
const networkDown = () => {
  throw new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }),
  });
};

describe('crm.request() retries by method', () => {
  const cases: [Method, string, () => Response, number][] = [
    ['POST', '500', status(500), 1],
    ['POST', '503 without Retry-After', status(503), 1],
    ['POST', '503 with Retry-After', status(503, { 'retry-after': '0' }), 2],
    ['POST', '429', status(429, { 'retry-after': '0' }), 2],
    ['POST', '408', status(408), 1],
    ['POST', '502', status(502), 1],
    ['PATCH', '500', status(500), 1],
    ['PATCH', '503 with Retry-After', status(503, { 'retry-after': '0' }), 2],
    ['PATCH', '429', status(429, { 'retry-after': '0' }), 2],
    ['PUT', '500', status(500), 2],
    ['PUT', '408', status(408), 2],
    ['DELETE', '502', status(502), 2],
    ['GET', '504', status(504), 2],
    ['GET', '400', status(400), 1],
    ['DELETE', '404', status(404), 1],
  ];
  test.each(cases)('%s answered %s: %i attempt(s)', async (method, _name, answer, attempts) => {
    const { crm, sent } = scripted([answer, okData()]);
    await crm.request({ method, path: WIDGETS, body: method === 'GET' ? undefined : {} }).catch(() => undefined);
    expect(sent).toHaveLength(attempts);
  });

  test.each([
    ['POST', 1],
    ['PATCH', 1],
    ['PUT', 2],
    ['DELETE', 2],
    ['GET', 2],
  ] as const)('%s on a network error: %i attempt(s)', async (method, attempts) => {
    const { crm, sent } = scripted([networkDown, okData()]);
    await crm.request({ method, path: WIDGETS }).catch(() => undefined);
    expect(sent).toHaveLength(attempts);
  });

  test('a POST retried after a 429 sends the same body, extraBody and extraQuery included, and the same tenant', async () => {
    const { crm, sent } = scripted([status(429, { 'retry-after': '0' }), okData()]);
    await crm.request(
      { method: 'POST', path: WIDGETS, body: { a: 1 }, tenantIn: 'body', query: { q: '1' } },
      { extraBody: { b: 2 }, extraQuery: { r: '2' } },
    );
    expect(sent).toHaveLength(2);
    expect(sent[0]?.body).toBe(sent[1]?.body);
    expect(JSON.parse(sent[1]?.body as string)).toEqual({ tenantId: TENANT, a: 1, b: 2 });
    expect(sent[1]?.url).toBe(sent[0]?.url);
    expect(new URL(sent[1]?.url as string).search).toBe('?q=1&r=2');
  });

  test('errors are the usual classes', async () => {
    expect(
      await rejection(scripted([status(429)], { maxRetries: 0 }).crm.request({ method: 'GET', path: WIDGETS })),
    ).toBeInstanceOf(CrmRateLimitError);
    expect(
      await rejection(scripted([status(500)], { maxRetries: 0 }).crm.request({ method: 'GET', path: WIDGETS })),
    ).toBeInstanceOf(CrmServerError);
    expect(
      await rejection(scripted([networkDown], { maxRetries: 0 }).crm.request({ method: 'GET', path: WIDGETS })),
    ).toBeInstanceOf(CrmConnectionError);
    const refused = await rejection(
      scripted([() => Response.json({ success: false, error: { code: 'NOPE' } })]).crm.request({
        method: 'GET',
        path: WIDGETS,
      }),
    );
    expect(refused).toBeInstanceOf(CrmApiError);
    expect((refused as CrmApiError).code).toBe('NOPE');
  });
});

describe('crm.request() data and withResponse()', () => {
  test.each([
    ['null', null],
    ['an array', [1, 2]],
    ['a string', 's'],
    ['false', false],
    ['an object with __proto__', JSON.parse('{"__proto__":{"x":1},"a":1}')],
  ])('data that is %s is given as it is', async (_name, data) => {
    const { crm } = scripted([() => new Response(JSON.stringify({ success: true, data }))]);
    const got = await crm.request({ method: 'GET', path: WIDGETS });
    expect(got).toEqual(data);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  test('an envelope with data only on its prototype (own "__proto__") is refused', async () => {
    const { crm } = scripted([() => new Response('{"success":true,"__proto__":{"data":1}}')]);
    await expect(crm.request({ method: 'GET', path: WIDGETS })).rejects.toThrow(/Expected an envelope/);
  });

  test('withResponse() after a retry gives the response that succeeded and its request id', async () => {
    const { crm } = scripted([
      () =>
        Response.json({ success: false }, { status: 503, headers: { 'x-request-id': 'req_bad', 'retry-after': '0' } }),
      () => Response.json({ success: true, data: 1 }, { headers: { 'x-request-id': 'req_good' } }),
    ]);
    const { data, response, requestId } = await crm.request({ method: 'GET', path: WIDGETS }).withResponse();
    expect([data, response.status, requestId]).toEqual([1, 200, 'req_good']);
  });

  test('withResponse() on a call refused before sending rejects with the CrmValidationError, once, and nothing unhandled', async () => {
    const { crm, sent } = scripted([okData()]);
    const promise = crm.request({ method: 'GET', path: '../x' });
    await expect(promise.withResponse()).rejects.toThrow(/Invalid request/);
    await expect(promise).rejects.toThrow(/Invalid request/);
    expect(sent).toEqual([]);
  });
});

describe('extras with apiKey functions, maxConcurrency and the logger', () => {
  test('an apiKey function, maxConcurrency and extras together: each call gets its key, its extras, and the log masks both', async () => {
    const lines: string[] = [];
    const logger: CrmLogger = (line) => {
      lines.push(line);
    };
    const { crm, sent } = scripted([okData()], {
      apiKey: async ({ tenantId }) => `${API_KEY}_${tenantId}`,
      maxConcurrency: 1,
      logger,
    });

    await Promise.all([
      crm.request(
        { method: 'POST', path: WIDGETS, body: {} },
        { extraQuery: { echo: `${API_KEY}_${TENANT}` }, extraBody: { n: 1 } },
      ),
      crm.withTenant('t2').request({ method: 'GET', path: WIDGETS }, { extraQuery: { n: 2 } }),
    ]);

    expect(sent.map((each) => each.headers.get('x-api-key'))).toEqual([`${API_KEY}_${TENANT}`, `${API_KEY}_t2`]);
    expect(sent.map((each) => new URL(each.url).searchParams.get('tenantId'))).toEqual([TENANT, 't2']);
    expect(sent[0]?.body).toBe('{"n":1}');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(API_KEY);
  });

  test('a signal already aborted stops a call with extras before anything is sent', async () => {
    const { crm, sent } = scripted([okData()]);
    await rejection(
      crm.request({ method: 'GET', path: WIDGETS }, { extraQuery: { a: 1 }, signal: AbortSignal.abort() }),
    );
    expect(sent).toEqual([]);
  });

  test('extras on one call do not leak into the next call of the same client', async () => {
    const { crm, sent } = scripted([okData()]);
    await crm.request({ method: 'POST', path: WIDGETS, body: {} }, { extraQuery: { a: 1 }, extraBody: { b: 2 } });
    await crm.request({ method: 'POST', path: WIDGETS, body: {} });
    expect(new URL(sent[1]?.url as string).search).toBe('?tenantId=tenant_1');
    expect(sent[1]?.body).toBe('{}');
  });
});
