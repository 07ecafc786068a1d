import { describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmNotFoundError } from '../../src/index';
import { overRealSockets, throughMsw } from '../support/fake-harness';

/*
 * `x-request-id` on every answer of the fake, through both transports: the SDK puts it on its
 * errors (`error.requestId`), and an integrator's logs correlate by it.
 */

const REQUEST_ID = /^req_[0-9a-f]{24}$/;

describe.each([
  ['MSW', throughMsw],
  ['a real server', overRealSockets],
])('x-request-id through %s', (_transport, start) => {
  test('every answer carries an id of its own: successes, errors and injected faults', async () => {
    const { fake, baseUrl } = await start();
    const v1 = `${baseUrl}/integrations/v1`;
    const tenant = `tenantId=${fake.tenantId}`;
    const headers = { 'x-api-key': fake.credentials.apiKey ?? '', 'content-type': 'application/json' };
    fake.failNext({ endpoint: 'listContacts', status: 503, retryAfter: 1 });
    fake.failNext({ endpoint: 'getOpportunity', status: 502, body: '<h1>Bad gateway</h1>' });
    fake.failNext({ endpoint: 'createAccount', delayMs: 1 });

    const answers = [
      await fetch(`${v1}/contacts?${tenant}`, { headers }),
      await fetch(`${v1}/contacts?${tenant}`, { headers }),
      await fetch(`${v1}/opportunities/opp_1?${tenant}`, { headers }),
      await fetch(`${v1}/opportunities/opp_1?${tenant}`, { headers }),
      await fetch(`${v1}/contacts?${tenant}`),
      await fetch(`${v1}/accounts`, { method: 'POST', headers, body: '{"name":' }),
      await fetch(`${v1}/accounts`, { method: 'POST', headers, body: JSON.stringify({ tenantId: fake.tenantId }) }),
      await fetch(`${v1}/accounts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ tenantId: fake.tenantId, name: 'Acme' }),
      }),
      await fetch(`${v1}/nowhere?${tenant}`, { headers }),
    ];

    expect(answers.map((a) => a.status)).toEqual([503, 200, 502, 404, 401, 400, 400, 201, 404]);
    const ids = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(answers.length);
    expect(fake.requests.map((r) => r.requestId)).toEqual(ids);
  });

  test('a crash of the fake itself is answered 500 FAKE_CRASHED, with an id too', async () => {
    const { fake, baseUrl } = await start();
    vi.spyOn(fake.store, 'insertAccount').mockImplementation(() => {
      throw new TypeError('a bug in the fake');
    });

    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const error = await crm.accounts.create({ name: 'Acme' }).catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 500, body: { error: { code: 'FAKE_CRASHED' } } });
    expect((error as { requestId?: string }).requestId).toMatch(REQUEST_ID);
    expect((error as { requestId?: string }).requestId).toBe(fake.requests.at(-1)?.requestId);
  });

  test("an SDK error names the fake's request id, as it would the service's", async () => {
    const { fake, baseUrl } = await start();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });

    const error = await crm.opportunities.get('missing').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect((error as CrmNotFoundError).requestId).toBe(fake.requests.at(-1)?.requestId);
  });
});

describe('x-request-id of the fake server', () => {
  test('a CORS preflight carries one too, and the browser may read it', async () => {
    const { baseUrl } = await overRealSockets();
    const preflight = await fetch(`${baseUrl}/integrations/v1/contacts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });

    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('x-request-id')).toMatch(REQUEST_ID);
    expect(preflight.headers.get('access-control-expose-headers')).toContain('x-request-id');
  });
});
