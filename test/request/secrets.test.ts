import { inspect } from 'node:util';
import { delay, HttpResponse, http } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  CrmApiError,
  CrmAuthenticationError,
  CrmClient,
  CrmConnectionError,
  CrmError,
  CrmPermissionDeniedError,
  CrmResponseValidationError,
  CrmServerError,
  CrmTimeoutError,
} from '../../src/index';
import { ADMIN_TOKEN, API_KEY, BASE_URL, capture, makeClient, ok, TENANT } from '../support/capture';
import { mswPath, pathOf } from '../support/endpoint-paths';
import { server } from '../support/msw-server';

const OPP_PATH = pathOf(endpoints.getOpportunity, { id: 'opp_1' });
const SECRETS = [API_KEY, ADMIN_TOKEN] as const;

/** A client that never retries, so one handler answer is one outcome. */
const client = () => makeClient({ maxRetries: 0 });

/** Every way an error usually ends up in a log. */
function renderings(value: unknown): Record<string, string> {
  const error = value as Error;
  return {
    message: error.message,
    string: String(error),
    json: JSON.stringify(error) ?? '',
    inspect: inspect(error, { depth: Number.POSITIVE_INFINITY }),
    inspectHidden: inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    stack: error.stack ?? '',
  };
}

/** Asserts that no rendering of `value` contains a credential, naming the rendering that leaks. */
function expectNoSecretIn(value: unknown): void {
  for (const [form, text] of Object.entries(renderings(value))) {
    for (const secret of SECRETS) {
      expect({ form, leaks: text.includes(secret) }).toEqual({ form, leaks: false });
    }
  }
}

/** The rejection of `call`, checked to be a `type`; fails the test when the call succeeds. */
async function failure<T>(call: PromiseLike<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const error = await call.then(
    (value) => {
      throw new Error(`Expected the call to fail, it returned ${JSON.stringify(value)}`);
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}

describe('errors never reveal the API key or the admin token', () => {
  test('an API error whose JSON body and headers echo the key', async () => {
    const seen = capture('get', OPP_PATH, () =>
      HttpResponse.json(
        {
          error: { message: `Key ${API_KEY} is not valid for tenant ${TENANT}` },
          request: { headers: { 'x-api-key': API_KEY, authorization: `Bearer ${ADMIN_TOKEN}` } },
          tried: [API_KEY, { again: API_KEY }],
          [API_KEY]: 'as a property name',
        },
        { status: 400, headers: { 'x-echo-key': API_KEY, 'x-api-key': API_KEY, 'x-request-id': 'req_1' } },
      ),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmApiError);

    // The request did carry the key: the redaction is what keeps it out of the error.
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(error.message).toContain('is not valid for tenant tenant_1');
    expect(error.requestId).toBe('req_1');
    expectNoSecretIn(error);
    expect(JSON.stringify(error.body)).not.toContain(API_KEY);
    expect([...error.headers.values()].join(' ')).not.toContain(API_KEY);
  });

  test('an API error whose plain-text body echoes the key', async () => {
    capture('get', OPP_PATH, HttpResponse.text(`upstream rejected x-api-key=${API_KEY}`, { status: 502 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmServerError);

    expect(error.message).toContain('upstream rejected x-api-key=');
    expectNoSecretIn(error);
    expect(String(error.body)).not.toContain(API_KEY);
  });

  test('a success: false envelope that echoes the key', async () => {
    capture(
      'post',
      mswPath(endpoints.createAccount),
      HttpResponse.json({ success: false, message: `bad key ${API_KEY}` }),
    );

    const error = await failure(client().accounts.create({ name: 'Acme' }), CrmApiError);

    expect(error.message).toContain('bad key');
    expectNoSecretIn(error);
  });

  test('a key echoed deep inside a nested error body', async () => {
    let nested: unknown = { echoed: API_KEY };
    for (let level = 0; level < 40; level++) nested = { level, inner: nested };
    capture('get', OPP_PATH, HttpResponse.json({ message: 'invalid request', detail: nested }, { status: 400 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmApiError);

    expectNoSecretIn(error);
    expect(JSON.stringify(error.body)).not.toContain(API_KEY);
  });

  test('a 401 on an integration call', async () => {
    capture('get', OPP_PATH, HttpResponse.json({ message: 'Invalid API key' }, { status: 401 }));

    const error = await failure(client().opportunities.get('opp_1'), CrmAuthenticationError);

    expect(error.message).toContain('Invalid API key');
    expectNoSecretIn(error);
  });

  test('a 401 whose status text echoes the key and whose body is empty', async () => {
    capture('get', OPP_PATH, new HttpResponse(null, { status: 401, statusText: `Unknown key ${API_KEY}` }));

    const error = await failure(client().opportunities.get('opp_1'), CrmAuthenticationError);

    expect(error.status).toBe(401);
    expectNoSecretIn(error);
  });

  test('a 403 on a key-management call whose body echoes the admin token', async () => {
    const seen = capture('get', mswPath(endpoints.apiKeyStatus), () =>
      HttpResponse.json({ error: { message: `Token ${ADMIN_TOKEN} is not an administrator` } }, { status: 403 }),
    );

    const error = await failure(client().apiKey.status(), CrmPermissionDeniedError);

    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    // Key-management bodies are secret as a whole; the words of a refusal hold no new key, masked.
    expect(error.message).toBe('403 from GET /integrations/api-key: Token [redacted] is not an administrator');
    expect(error.body).toBe('[redacted]');
    expectNoSecretIn(error);
  });

  test('a 401 on the key generation', async () => {
    capture(
      'post',
      mswPath(endpoints.generateApiKey),
      HttpResponse.json({ error: `Bearer ${ADMIN_TOKEN} expired` }, { status: 401 }),
    );

    const error = await failure(client().apiKey.generate(), CrmAuthenticationError);

    expect(error.message).toBe('401 from POST /integrations/api-key/generate: Bearer [redacted] expired');
    expectNoSecretIn(error);
  });

  test('a connection error reveals neither', async () => {
    capture('get', OPP_PATH, HttpResponse.error());

    const error = await failure(client().opportunities.get('opp_1'), CrmConnectionError);

    expectNoSecretIn(error);
  });

  test('a connection error on a key-management call', async () => {
    capture('post', mswPath(endpoints.generateApiKey), HttpResponse.error());

    const error = await failure(client().apiKey.generate(), CrmConnectionError);

    expectNoSecretIn(error);
  });

  test('a connection error raised by a custom fetch whose message contains the key', async () => {
    const crm = new CrmClient({
      baseUrl: BASE_URL,
      apiKey: API_KEY,
      tenantId: TENANT,
      adminToken: ADMIN_TOKEN,
      maxRetries: 0,
      fetch: async (input) => {
        const request = input instanceof Request ? input : new Request(input);
        throw new TypeError(`fetch failed for key ${request.headers.get('x-api-key')}`);
      },
    });

    const error = await failure(crm.opportunities.get('opp_1'), CrmError);

    expect(error).toBeInstanceOf(CrmConnectionError);
    expectNoSecretIn(error);
  });

  test('a timeout reveals neither', async () => {
    capture('get', OPP_PATH, async () => {
      await delay(200);
      return ok({ id: 'opp_1' });
    });

    const error = await failure(client().opportunities.get('opp_1', { timeout: 30 }), CrmTimeoutError);

    expectNoSecretIn(error);
  });

  test('a response validation error whose body echoes both credentials', async () => {
    const body = { success: true, data: { id: 42, echoed: API_KEY, token: ADMIN_TOKEN } };
    capture('get', OPP_PATH, HttpResponse.json(body));

    const error = await failure(client().opportunities.get('opp_1'), CrmResponseValidationError);

    expect(error.issues.map((issue) => issue.field)).toContain('data.id');
    expectNoSecretIn(error);
    expect(JSON.stringify(error.body)).not.toContain(API_KEY);
  });

  test('a response validation error for a non-JSON body that echoes the key', async () => {
    capture('get', OPP_PATH, HttpResponse.html(`<html><body>Your key ${API_KEY} was rejected</body></html>`));

    const error = await failure(client().opportunities.get('opp_1'), CrmResponseValidationError);

    expect(String(error.body)).toContain('was rejected');
    expectNoSecretIn(error);
  });

  test('a missing-credential error of an admin call on a client without admin token', async () => {
    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT });

    const error = await failure(crm.apiKey.status(), CrmError);

    expect(error.message).toContain('adminToken');
    expectNoSecretIn(error);
  });
});

describe('the client never reveals its credentials', () => {
  const forms = (value: unknown): Record<string, string> => ({
    inspect: inspect(value, { depth: Number.POSITIVE_INFINITY }),
    inspectHidden: inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    json: JSON.stringify(value) ?? '',
    string: String(value),
    template: `${value}`,
  });

  const expectClean = (value: unknown) => {
    for (const [form, text] of Object.entries(forms(value))) {
      for (const secret of SECRETS) {
        expect({ form, leaks: text.includes(secret) }).toEqual({ form, leaks: false });
      }
    }
  };

  test('nor does a redirect to another origin: the call fails and nothing reaches that origin', async () => {
    capture(
      'get',
      OPP_PATH,
      () => new HttpResponse(null, { status: 302, headers: { location: 'https://elsewhere.test/collect' } }),
    );
    const elsewhere: Request[] = [];
    server.use(
      http.all('https://elsewhere.test/*', ({ request }) => {
        elsewhere.push(request);
        return ok({ id: 'opp_1' });
      }),
    );

    const error = await failure(client().opportunities.get('opp_1'), CrmApiError);

    expect(error.status).toBe(302);
    expect(error.message).toContain('redirect to https://elsewhere.test/collect not followed');
    expect(elsewhere).toEqual([]);
  });

  test('inspect, JSON and String of a CrmClient show neither the key nor the token', () => {
    const crm = makeClient();

    expectClean(crm);
    expect(inspect(crm)).toContain(BASE_URL);
    expect(JSON.parse(JSON.stringify(crm))).toEqual({ baseUrl: BASE_URL, tenantId: TENANT });
  });

  test('nor do those of a withTenant() client or of the resource namespaces', () => {
    const crm = makeClient();

    expectClean(crm.withTenant('tenant_2'));
    for (const namespace of [crm.opportunities, crm.activities, crm.accounts, crm.contacts, crm.grants, crm.apiKey]) {
      expectClean(namespace);
    }
  });

  test('nor does a client whose credentials came from the environment', () => {
    vi.stubEnv('CRM_API_KEY', API_KEY);
    vi.stubEnv('CRM_ADMIN_TOKEN', ADMIN_TOKEN);

    const crm = new CrmClient({ baseUrl: BASE_URL, tenantId: TENANT });

    expectClean(crm);
  });

  test('nor does the promise of a pending call', async () => {
    capture('get', OPP_PATH, ok({ id: 'opp_1' }));
    const call = makeClient().opportunities.get('opp_1');

    expectClean(call);
    await expect(call).resolves.toEqual({ id: 'opp_1' });
  });
});

describe('apiKey.generate()', () => {
  const NEW_KEY = 'key_live_n3wn3wn3wn3w';

  test('returns the new key to the caller, having sent only the admin token', async () => {
    const seen = capture(
      'post',
      mswPath(endpoints.generateApiKey),
      ok({ apiKey: NEW_KEY, createdAt: '2026-03-02T12:00:00Z', rotated: true }),
    );

    const result = await makeClient().apiKey.generate();

    expect(result).toEqual({ apiKey: NEW_KEY, createdAt: '2026-03-02T12:00:00Z', rotated: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(seen[0]?.headers.get('x-api-key')).toBeNull();
  });

  test('the raw response of generate() is available too', async () => {
    capture(
      'post',
      mswPath(endpoints.generateApiKey),
      ok({ apiKey: NEW_KEY }, {}, { headers: { 'x-request-id': 'g1' } }),
    );

    const { data, response } = await makeClient().apiKey.generate().withResponse();

    expect(data.apiKey).toBe(NEW_KEY);
    expect(response.headers.get('x-request-id')).toBe('g1');
  });

  test('the new key is kept nowhere in the client: later calls still send the configured key', async () => {
    capture('post', mswPath(endpoints.generateApiKey), ok({ apiKey: NEW_KEY }));
    const seen = capture('get', OPP_PATH, ok({ id: 'opp_1' }));
    const crm = makeClient();

    await crm.apiKey.generate();
    await crm.opportunities.get('opp_1');

    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
    for (const text of [inspect(crm, { depth: Number.POSITIVE_INFINITY }), JSON.stringify(crm), String(crm)]) {
      expect(text).not.toContain(NEW_KEY);
    }
  });
});
