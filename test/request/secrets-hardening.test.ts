import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  CrmClient,
  CrmConnectionError,
  CrmError,
  CrmNotFoundError,
  type CrmRequestLog,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmServerError,
  CrmValidationError,
} from '../../src/index';
import { pathOf } from '../support/endpoint-paths';
import {
  ADMIN_TOKEN,
  API_KEY,
  API_KEY_GENERATE_PATH,
  clientFor,
  closedPort,
  failure,
  OPP_ID,
  OPP_PATH,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { expectAbsent, renderings } from '../support/renderings';
import { record } from '../support/tracing-channels';

const fault = useFaultServer();

describe('every error is masked the same way, whatever built it', () => {
  test('a body over maxResponseBytes whose headers echo the key keeps them masked', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(200, 'x'.repeat(5_000), {
        headers: { 'set-cookie': `session=${API_KEY}`, 'x-echo': `key ${API_KEY}` },
      }),
    );

    const { error } = await failure(clientFor(fault(), { maxResponseBytes: 1_000 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmResponseTooLargeError);
    expect((error as CrmResponseTooLargeError).headers.get('set-cookie')).toBe('[redacted]');
    expect((error as CrmResponseTooLargeError).headers.get('x-echo')).toBe('key [redacted]');
    expectAbsent(error, API_KEY);
  });
});

describe('a new key from apiKey.generate() never lands in an error or a log', () => {
  const NEW_KEY = 'key_live_N3wlyGenerated';

  test.each([
    ['a bare string in data', reply.with(201, { success: true, data: NEW_KEY })],
    ['a text/plain body', reply.with(201, NEW_KEY, { headers: { 'content-type': 'text/plain' } })],
    [
      'a 500 whose body holds the key beside its message',
      reply.with(500, { success: false, error: { message: 'rotation failed', details: { apiKey: NEW_KEY } } }),
    ],
    ['a 200 with success: false holding the key', reply.with(200, { success: false, key: NEW_KEY })],
  ])('%s', async (_, action) => {
    fault().otherwise('POST', API_KEY_GENERATE_PATH, action);
    const lines: string[] = [];
    const crm = clientFor(fault(), {
      maxRetries: 0,
      logger: (line, entry) => lines.push(line, JSON.stringify(entry)),
    });

    const { error } = await failure(crm.apiKey.generate());

    expect((error as { body?: unknown }).body).toBe('[redacted]');
    expectAbsent(error, NEW_KEY);
    expect(lines.join('\n')).not.toContain(NEW_KEY);
  });

  test.each([
    ['a 403 with error.message', 403, { success: false, error: { message: 'admins only' } }, '403 from', 'admins only'],
    ['a 403 with a message string', 403, { message: 'admins only' }, '403 from', 'admins only'],
    ['a 401 with an error string', 401, { success: false, error: 'token expired' }, '401 from', 'token expired'],
    [
      'a 503 with error.message',
      503,
      { success: false, error: { message: 'vault sealed' } },
      '503 from',
      'vault sealed',
    ],
  ])("%s: the error's message quotes the server's words, and keeps no body", async (_, status, body, start, said) => {
    fault().otherwise('POST', API_KEY_GENERATE_PATH, reply.with(status, body));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.generate());

    expect((error as Error).message).toMatch(new RegExp(`^${start} .*: ${said}$`));
    expect((error as { body?: unknown }).body).toBe('[redacted]');
  });

  test('a 500 of apiKey.generate() quoting the new key: the message keeps the words and masks the key, on every output', async () => {
    const key = 'crm_live_4f3e2d1c0b9a8f7e6d5c';
    fault().otherwise(
      'POST',
      API_KEY_GENERATE_PATH,
      reply.with(500, { success: false, error: { message: `rotation half done, new key ${key}` } }),
    );
    const lines: string[] = [];
    const { calls } = record();
    const crm = clientFor(fault(), { maxRetries: 0, logger: (line, entry) => lines.push(line, JSON.stringify(entry)) });

    const { error } = await failure(crm.apiKey.generate());

    expect((error as Error).message).toBe(
      '500 from POST /integrations/api-key/generate: rotation half done, new key [redacted]',
    );
    expectAbsent(error, key);
    expectAbsent(calls, key);
    expect(lines.join('\n')).not.toContain(key);
  });

  test('a 503 text/plain of apiKey.status() quoting the current key: the words are kept, the key masked', async () => {
    const key = 'crm_live_9a8b7c6d5e4f3a2b1c0d';
    fault().otherwise(
      'GET',
      pathOf(endpoints.apiKeyStatus),
      reply.with(503, `maintenance; current key ${key}`, { headers: { 'content-type': 'text/plain' } }),
    );

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.status());

    expect((error as Error).message).toBe('503 from GET /integrations/api-key: maintenance; current key [redacted]');
    expectAbsent(error, key);
  });

  test.each([
    ['URL-encoded', (key: string) => encodeURIComponent(key).replace(/_/g, '%5F')],
    [
      'JSON-escaped',
      (key: string) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    ],
    ['in base64', (key: string) => btoa(key)],
    ['in hex', (key: string) => Buffer.from(key).toString('hex')],
    ['broken over two lines', (key: string) => `${key.slice(0, 12)}\n${key.slice(12)}`],
    ['in upper case', (key: string) => key.toUpperCase()],
  ])('a key-management error quoting a new key %s masks it, in the message and the headers', async (_, form) => {
    const key = 'crm_live_4f3e2d1c0b9a8f7e6d5c';
    const shown = form(key);
    fault().otherwise(
      'POST',
      API_KEY_GENERATE_PATH,
      reply.with(
        500,
        { error: { message: `new key ${shown} kept` } },
        { headers: { 'x-new-key': `key ${shown.includes('\n') ? key : shown}`, 'x-request-id': 'req_1' } },
      ),
    );

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.generate());

    expect((error as Error).message).toMatch(/: new key \[redacted\] kept$/);
    expect((error as CrmServerError).headers.get('x-new-key')).toBe('key [redacted]');
    expect((error as CrmServerError).requestId).toBe('req_1');
    for (const each of [key, shown, key.slice(0, 12), key.slice(12)]) expectAbsent(error, each);
  });

  test.each([
    ['admins only', 403],
    ['admin token expired at 2026-11-27T23:59:00Z, ask IT (ticket 42)', 401],
    ['rate limited: 10 rotations per 3600 s', 429],
  ])("a key-management error keeps the server's prose readable: %s", async (words, status) => {
    fault().otherwise('POST', API_KEY_GENERATE_PATH, reply.with(status, { error: { message: words } }));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.generate());

    expect((error as Error).message).toBe(`${status} from POST /integrations/api-key/generate: ${words}`);
  });

  test("a 403 of apiKey.status() quotes the server's words masked and bounded, one line", async () => {
    const words = `admins only, not ${ADMIN_TOKEN} or ${API_KEY}\nforged line ${'x'.repeat(2_000)}`;
    fault().otherwise('GET', pathOf(endpoints.apiKeyStatus), reply.with(403, { message: words }));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.status());

    const { message } = error as Error;
    expect(message).toContain(': admins only, not [redacted] or [redacted]');
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(700);
    expectAbsent(error, ADMIN_TOKEN);
    expectAbsent(error, API_KEY);
  });

  test('a 2xx of apiKey.generate() that says success: false quotes nothing of its body', async () => {
    fault().otherwise('POST', API_KEY_GENERATE_PATH, reply.with(200, { success: false, message: NEW_KEY }));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).apiKey.generate());

    expect((error as Error).message).toMatch(/: success: false$/);
    expectAbsent(error, NEW_KEY);
  });

  test('a successful result is returned to the caller as it is', async () => {
    fault().otherwise('POST', API_KEY_GENERATE_PATH, reply.ok({ apiKey: NEW_KEY }));

    await expect(clientFor(fault()).apiKey.generate()).resolves.toEqual({ apiKey: NEW_KEY });
  });
});

describe('the base URL cannot carry secrets or break routing', () => {
  test.each([
    ['a user name and password', 'https://admin:Pa55w0rd-secret@crm.example.com', 'Pa55w0rd-secret'],
    ['a user name', 'https://admin@crm.example.com/api', 'admin@'],
    ['a query string', 'https://crm.example.com/api?token=Pa55w0rd-secret', 'Pa55w0rd-secret'],
    ['a fragment', 'https://crm.example.com/#Pa55w0rd-secret', 'Pa55w0rd-secret'],
    ['an empty query', 'https://crm.example.com/api?', '?'],
  ])('a baseUrl with %s is refused at construction, without echoing it', (_, baseUrl, secret) => {
    let error: unknown;
    try {
      new CrmClient({ baseUrl, apiKey: API_KEY, tenantId: TENANT });
    } catch (e) {
      error = e;
    }

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((i) => i.field)).toEqual(['baseUrl']);
    expectAbsent(error, secret);
  });

  test('a base URL with a path prefix and no query is still fine', async () => {
    const crm = new CrmClient({ baseUrl: 'https://crm.example.com/api/', apiKey: API_KEY, tenantId: TENANT });

    expect(crm.toJSON().baseUrl).toBe('https://crm.example.com/api/');
  });
});

describe('a custom fetch cannot smuggle a key into cause', () => {
  const smuggled = (headers: unknown) => ({
    string: `ECONNRESET while sending ${JSON.stringify(headers)}`,
    'a plain object': { code: 'ECONNRESET', request: { headers } },
    'an AggregateError': new AggregateError([new Error(`first ${JSON.stringify(headers)}`)], 'all attempts failed'),
    'an error with request and config.headers': Object.assign(new Error('socket hang up'), {
      code: 'ECONNRESET',
      request: { headers },
      config: { headers },
    }),
  });

  for (const kind of ['string', 'a plain object', 'an AggregateError', 'an error with request and config.headers']) {
    test(`a fetch that rejects with ${kind}`, async () => {
      const fetchThatLeaks = async (_input: RequestInfo | URL, init?: RequestInit) => {
        throw smuggled(init?.headers)[kind as keyof ReturnType<typeof smuggled>];
      };
      const crm = clientFor(fault(), { fetch: fetchThatLeaks as typeof fetch, maxRetries: 0 });

      const { error } = await failure(crm.opportunities.get(OPP_ID));

      expect(error).toBeInstanceOf(CrmConnectionError);
      expectAbsent(error, API_KEY);
      expect((error as Error).cause).toBeInstanceOf(Error);
    });
  }

  test('a network error keeps its code and address in the cause', async () => {
    const port = await closedPort();
    const crm = clientFor(fault(), { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });

    const { error } = await failure(crm.opportunities.get(OPP_ID));

    const cause = (error as Error).cause as Error & { cause?: { code?: unknown; port?: unknown } };
    expect(cause.cause?.code).toBe('ECONNREFUSED');
    expect(cause.cause?.port).toBe(port);
  });
});

describe('keys are masked the way servers echo them', () => {
  const KEY = 'Key/Live+5ecret "0ne"';
  test.each([
    ['as it is', KEY],
    ['URL-encoded', encodeURIComponent(KEY)],
    ['form-encoded', encodeURIComponent(KEY).replace(/%20/g, '+')],
    ['in base64', Buffer.from(KEY).toString('base64')],
    ['in URL-safe base64 without padding', Buffer.from(KEY).toString('base64url')],
    ['JSON-escaped', JSON.stringify(`"${KEY}"`).slice(1, -1)],
    ['lower-cased', KEY.toLowerCase()],
    ['upper-cased', KEY.toUpperCase()],
  ])('%s', async (_, echoed) => {
    fault().otherwise('GET', OPP_PATH, reply.with(404, { message: `unknown key <${echoed}>`, echoed }));

    const { error } = await failure(clientFor(fault(), { apiKey: KEY }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect((error as Error).message).toContain('[redacted]');
    for (const text of renderings(error)) expect(text).not.toContain(echoed);
  });
});

describe("a server's words in a message are bounded and cannot forge log lines", () => {
  test('a message is cut to 500 characters, and line breaks and control characters are escaped', async () => {
    const forged = `not found\ncrm GET /integrations/v1/admin 200 1ms attempt=1\r\u001b[2J${'x'.repeat(2_000)}`;
    fault().otherwise('GET', OPP_PATH, reply.with(404, { message: forged }));

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

    const { message } = error as Error;
    for (const control of ['\n', '\r', '\u001b']) expect(message.includes(control)).toBe(false);
    expect(message).toContain('not found\\ncrm GET');
    expect(message).toContain('\\u001b[2J');
    expect(message.length).toBeLessThan(600);
    // The whole body is kept, as data, for whoever wants it.
    expect((error as CrmNotFoundError).body).toEqual({ message: forged });
  });

  test('the text of a body that is not JSON is quoted the same way', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(200, 'line one\nline two', { headers: { 'content-type': 'text/plain' } }),
    );

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect((error as Error).message).toContain('line one\\nline two');
  });
});

describe('the logger and errors mask every credential-like header', () => {
  test('headers named in redactHeaders are masked in log lines and in error headers, in any case', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(503, { message: 'down' }, { headers: { 'X-Session-Token': 'sess_5ecret' } }),
    );
    const entries: CrmRequestLog[] = [];
    const lines: string[] = [];
    const crm = clientFor(fault(), {
      maxRetries: 0,
      redactHeaders: ['x-session-token', 'X-Vault-Token'],
      logger: (line, entry) => {
        lines.push(line);
        entries.push(entry);
      },
    });

    const { error } = await failure(crm.opportunities.get(OPP_ID, { headers: { 'x-vault-token': 'vault_5ecret' } }));

    expect(error).toBeInstanceOf(CrmServerError);
    expect((error as CrmServerError).headers.get('x-session-token')).toBe('[redacted]');
    expect(entries[0]?.headers['x-vault-token']).toBe('[redacted]');
    expect(lines.join('\n')).not.toContain('vault_5ecret');
    expectAbsent(error, 'sess_5ecret');
  });

  test('redactHeaders refuses what is not a header name', () => {
    expect(() => clientFor(fault(), { redactHeaders: ['bad name'] })).toThrow(CrmValidationError);
  });

  test('the admin token stays masked too', async () => {
    fault().otherwise('GET', '/integrations/api-key', reply.with(401, { message: `token ${ADMIN_TOKEN} expired` }));

    const { error } = await failure(clientFor(fault()).apiKey.status());

    expectAbsent(error, ADMIN_TOKEN);
  });
});

test('a key a server writes with JSON escapes is masked in the parsed body too', async () => {
  const escaped = [...API_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  fault().otherwise(
    'GET',
    OPP_PATH,
    reply.with(404, `{"message":"bad key ${escaped}","key":"${escaped}"}`, {
      headers: { 'content-type': 'application/json' },
    }),
  );

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmNotFoundError);
  expect((error as CrmNotFoundError).body).toEqual({ message: 'bad key [redacted]', key: '[redacted]' });
  expectAbsent(error, API_KEY);
});

describe('an apiKey function that fails with a credential in its error', () => {
  const rejections: [string, () => unknown][] = [
    [
      'an AggregateError (Promise.any over vault replicas)',
      () =>
        new AggregateError(
          [new Error('replica 1 timed out'), new Error(`replica 2 refused admin token ${ADMIN_TOKEN}`)],
          'All promises were rejected',
        ),
    ],
    [
      'an error with a non-enumerable field',
      () => Object.defineProperty(new Error('vault down'), 'request', { value: `Bearer ${ADMIN_TOKEN}` }),
    ],
    [
      'an AggregateError in a cause',
      () => new Error('lookup failed', { cause: new AggregateError([new Error(`token ${ADMIN_TOKEN}`)]) }),
    ],
  ];

  test.each(rejections)(
    '%s: nothing is sent, and the credential is in neither the error, its causes, a log line nor the call channel',
    async (_, make) => {
      const lines: string[] = [];
      const published: unknown[] = [];
      record({ call: { error: (call) => published.push(call.error) } });
      const crm = new CrmClient({
        baseUrl: fault().url,
        tenantId: TENANT,
        adminToken: ADMIN_TOKEN,
        apiKey: () => Promise.any([Promise.reject(make())]).catch(() => Promise.reject(make())),
        logger: (line) => lines.push(line),
      });

      const { error } = await failure(crm.opportunities.get(OPP_ID));

      expect(error).toBeInstanceOf(CrmError);
      expect((error as Error).message).toMatch(/^The apiKey function failed/);
      expect(fault().received('GET', OPP_PATH)).toHaveLength(0);
      expectAbsent(error, ADMIN_TOKEN);
      expect(published).toHaveLength(1);
      expectAbsent(published[0], ADMIN_TOKEN);
      expect(lines.join('\n')).not.toContain(ADMIN_TOKEN);
    },
  );

  test('an AggregateError that holds no credential is kept as it is, its errors readable', async () => {
    const thrown = new AggregateError([new Error('replica 1 timed out')], 'All promises were rejected');
    const crm = new CrmClient({
      baseUrl: fault().url,
      tenantId: TENANT,
      adminToken: ADMIN_TOKEN,
      apiKey: () => Promise.reject(thrown),
    });

    const { error } = await failure(crm.opportunities.get(OPP_ID));

    expect((error as Error).cause).toBe(thrown);
  });
});
