import { inspect } from 'node:util';
import fc from 'fast-check';
import { delay, HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  CrmApiError,
  type CrmClient,
  CrmConnectionError,
  CrmError,
  type CrmLogger,
  type CrmRequestLog,
  CrmServerError,
  CrmTimeoutError,
} from '../../src/index';
import { ADMIN_TOKEN, API_KEY, capture, makeClient, ok, TENANT } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

const OPP_PATH = '/integrations/v1/opportunities/opp_1';
const OPP_URL = `${OPP_PATH}?tenantId=${TENANT}`;
const MASK = '[redacted]';

interface Logged {
  line: string;
  entry: CrmRequestLog;
}

/** A logger that keeps what it is given. */
function recorder(): { logger: CrmLogger; logged: Logged[] } {
  const logged: Logged[] = [];
  return { logger: (line, entry) => logged.push({ line, entry }), logged };
}

/** Every text a log line or entry could end up as. */
const logTexts = (logged: readonly Logged[]) =>
  logged.flatMap(({ line, entry }) => [line, JSON.stringify(entry), inspect(entry, { depth: null })]);

/** Every rendering of an error, and of its response snapshot, that could end up in a log. */
function errorTexts(error: unknown): string[] {
  const texts = [String(error), JSON.stringify(error) ?? '', inspect(error, { depth: null, showHidden: true })];
  if (error instanceof Error) texts.push(error.message, error.stack ?? '');
  const snapshot = error as { headers?: unknown; body?: unknown };
  if (snapshot.headers instanceof Headers) texts.push(JSON.stringify([...snapshot.headers]));
  if ('body' in snapshot) texts.push(JSON.stringify(snapshot.body) ?? '', String(snapshot.body));
  return texts;
}

/** Asserts that none of `texts` holds any of `secrets`, naming the text that leaks. */
function expectNoSecret(texts: readonly string[], secrets: readonly string[] = [API_KEY, ADMIN_TOKEN]): void {
  const leaks = texts.filter((text) => secrets.some((secret) => text.includes(secret)));
  expect(leaks).toEqual([]);
}

/** The rejection of `call`; fails the test when it resolves. */
async function rejectionOf(call: PromiseLike<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`Expected the call to fail, it returned ${JSON.stringify(value)}`);
    },
    (reason: unknown) => reason,
  );
}

/** An error body and headers that echo both credentials back, as a careless server or proxy might. */
const echoBody = () => ({
  message: `rejected key ${API_KEY} (token ${ADMIN_TOKEN})`,
  request: { headers: { 'x-api-key': API_KEY, authorization: `Bearer ${ADMIN_TOKEN}` } },
});
const echoHeaders = () => ({ 'x-echo-key': API_KEY, 'x-api-key': API_KEY, authorization: `Bearer ${ADMIN_TOKEN}` });

describe('the logger option gets one line per attempt, with the facts and masked credentials', () => {
  test('a success logs one line with method, path, status, duration, attempt and masked headers', async () => {
    capture('get', OPP_PATH, ok({ id: 'opp_1' }));
    const { logger, logged } = recorder();

    await makeClient({ logger }).opportunities.get('opp_1');

    expect(logged).toHaveLength(1);
    const [{ line, entry }] = logged as [Logged];
    expect(entry).toMatchObject({ method: 'GET', url: OPP_URL, status: 200, error: undefined, attempt: 1 });
    expect(entry.durationMs).toBeGreaterThanOrEqual(0);
    expect(entry.headers).toMatchObject({ 'x-api-key': MASK, 'x-tenant-id': TENANT });
    expect(entry.headers).not.toHaveProperty('authorization');
    expect(line).toMatch(new RegExp(`^crm GET ${OPP_URL.replace('?', '\\?')} 200 \\d+ms attempt=1 headers=`));
    expect(line).toContain(`"x-api-key":"${MASK}"`);
    expectNoSecret(logTexts(logged));
  });

  test('an admin call logs the authorization header masked', async () => {
    capture('get', mswPath(endpoints.apiKeyStatus), ok({ active: true }));
    const { logger, logged } = recorder();

    await makeClient({ logger }).apiKey.status();

    expect(logged.map(({ entry }) => [entry.method, entry.url, entry.status, entry.attempt])).toEqual([
      ['GET', '/integrations/api-key', 200, 1],
    ]);
    expect(logged[0]?.entry.headers).toMatchObject({ authorization: MASK });
    expect(logged[0]?.entry.headers).not.toHaveProperty('x-api-key');
    expect(logged[0]?.line).toContain(`"authorization":"${MASK}"`);
    expectNoSecret(logTexts(logged));
  });

  test('a 4xx whose body and headers echo the credentials logs one line and leaks them nowhere', async () => {
    capture(
      'post',
      mswPath(endpoints.createAccount),
      HttpResponse.json(echoBody(), { status: 400, headers: echoHeaders() }),
    );
    const { logger, logged } = recorder();

    const error = await rejectionOf(makeClient({ logger }).accounts.create({ name: 'Acme' }));

    expect(error).toBeInstanceOf(CrmApiError);
    expect(logged.map(({ entry }) => [entry.method, entry.url, entry.status, entry.attempt])).toEqual([
      ['POST', '/integrations/v1/accounts', 400, 1],
    ]);
    expect((error as CrmApiError).message).toContain('rejected key');
    expect((error as CrmApiError).headers.get('x-echo-key')).toBe(MASK);
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test('a 5xx retried to exhaustion logs every attempt, numbered, and leaks the credentials nowhere', async () => {
    const seen = capture('put', OPP_PATH, () =>
      HttpResponse.json(echoBody(), { status: 503, headers: { ...echoHeaders(), 'retry-after': '0' } }),
    );
    const { logger, logged } = recorder();

    const error = await rejectionOf(
      makeClient({ logger, maxRetries: 2 }).opportunities.update('opp_1', { stage: 'x' }),
    );

    expect(error).toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(3);
    expect(logged.map(({ entry }) => [entry.method, entry.url, entry.status, entry.attempt])).toEqual([
      ['PUT', OPP_URL, 503, 1],
      ['PUT', OPP_URL, 503, 2],
      ['PUT', OPP_URL, 503, 3],
    ]);
    expect(logged.map(({ line }) => line.match(/attempt=\d+/)?.[0])).toEqual(['attempt=1', 'attempt=2', 'attempt=3']);
    for (const { entry } of logged) expect(entry.headers['x-api-key']).toBe(MASK);
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test('a 500 then a success logs the failed attempt and the retry', async () => {
    capture('get', OPP_PATH, (_request, index) =>
      index === 0 ? HttpResponse.text(`upstream saw ${API_KEY}`, { status: 500 }) : ok({ id: 'opp_1' }),
    );
    const { logger, logged } = recorder();

    await makeClient({ logger, maxRetries: 1 }).opportunities.get('opp_1');

    expect(logged.map(({ entry }) => [entry.status, entry.attempt])).toEqual([
      [500, 1],
      [200, 2],
    ]);
    expectNoSecret(logTexts(logged));
  });

  test('a network error logs each attempt with status 0 and the failure, and leaks the credentials nowhere', async () => {
    capture('get', OPP_PATH, HttpResponse.error());
    const { logger, logged } = recorder();

    const error = await rejectionOf(makeClient({ logger, maxRetries: 1 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(logged.map(({ entry }) => [entry.method, entry.url, entry.status, entry.attempt])).toEqual([
      ['GET', OPP_URL, 0, 1],
      ['GET', OPP_URL, 0, 2],
    ]);
    for (const { line, entry } of logged) {
      expect(entry.error).toEqual(expect.any(String));
      expect(line).toContain('failed (');
    }
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test('a custom fetch whose error message carries the credentials has them masked in the log and the error', async () => {
    const { logger, logged } = recorder();
    const fetch: typeof globalThis.fetch = async (input) => {
      const request = input instanceof Request ? input : new Request(input);
      const sent = `${request.headers.get('x-api-key')} ${ADMIN_TOKEN}`;
      throw new TypeError(`proxy refused headers ${sent}`, { cause: new Error(`inner ${sent}`) });
    };

    const error = await rejectionOf(makeClient({ logger, fetch, maxRetries: 0 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.entry.error).toContain('proxy refused headers');
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test('a timeout logs the attempt with status 0 and leaks the credentials nowhere', async () => {
    capture('get', OPP_PATH, async () => {
      await delay(300);
      return ok({ id: 'opp_1' });
    });
    const { logger, logged } = recorder();

    const error = await rejectionOf(makeClient({ logger, maxRetries: 0 }).opportunities.get('opp_1', { timeout: 30 }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    // The aborted attempt may finish logging just after the call has rejected.
    await vi.waitFor(() => expect(logged).toHaveLength(1));
    expect(logged[0]?.entry).toMatchObject({ method: 'GET', url: OPP_URL, status: 0, attempt: 1 });
    expect(logged[0]?.entry.error).toEqual(expect.any(String));
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test('a credential copied into a custom header is masked in the logged headers too', async () => {
    const seen = capture('get', OPP_PATH, ok({ id: 'opp_1' }));
    const { logger, logged } = recorder();

    await makeClient({ logger, headers: { 'x-forwarded-key': API_KEY } }).opportunities.get('opp_1', {
      headers: { 'x-debug-token': `Bearer ${ADMIN_TOKEN}` },
    });

    // The server did receive them: the masking is the logger's doing.
    expect(seen[0]?.headers.get('x-forwarded-key')).toBe(API_KEY);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.entry.headers['x-forwarded-key']).toBe(MASK);
    expectNoSecret(logTexts(logged));
  });

  test.each([
    ['an envelope whose data does not match', () => ok({ id: 5, echo: API_KEY, token: ADMIN_TOKEN })],
    ['a body that is not JSON', () => HttpResponse.text(`<html>key ${API_KEY} token ${ADMIN_TOKEN}</html>`)],
  ])('a 200 with %s that echoes the credentials keeps them out of the log and the error body', async (_, reply) => {
    capture('get', OPP_PATH, reply);
    const { logger, logged } = recorder();

    const error = await rejectionOf(makeClient({ logger, maxRetries: 0 }).opportunities.get('opp_1'));

    expect((error as Error).name).toBe('CrmResponseValidationError');
    expect(JSON.stringify((error as { body: unknown }).body)).toContain(MASK);
    expect(logged.map(({ entry }) => entry.status)).toEqual([200]);
    expectNoSecret([...logTexts(logged), ...errorTexts(error)]);
  });

  test.each([
    [
      'a create',
      'post',
      '/integrations/v1/opportunities',
      (crm: CrmClient) => crm.opportunities.create({ name: 'N', accountId: 'acc_1' }),
    ],
    ['a read', 'get', OPP_PATH, (crm: CrmClient) => crm.opportunities.get('opp_1')],
  ] as const)(
    'a logger that throws does not turn %s that succeeded into a failure nor repeat its request',
    async (_, method, path, call) => {
      const seen = capture(method, path, ok({ id: 'opp_1' }));
      const logger: CrmLogger = () => {
        throw new TypeError('log sink is down');
      };

      const result = await call(makeClient({ logger, maxRetries: 2 })).then(
        (value) => ({ value }),
        (error: unknown) => ({ error: String(error) }),
      );

      expect({ result, requests: seen.length }).toEqual({ result: { value: { id: 'opp_1' } }, requests: 1 });
    },
  );

  test('without a logger option nothing is logged to the console', async () => {
    capture('get', OPP_PATH, ok({ id: 'opp_1' }));
    const spies = (['log', 'info', 'debug', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => undefined),
    );

    await makeClient().opportunities.get('opp_1');

    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});

describe('credentials chosen at random are never logged nor kept in errors', () => {
  test('whatever the key and token, echoed back by a 401, they appear in no log line and no error rendering', async () => {
    // Printable ASCII without edge spaces (fetch would trim them); long enough to be a real secret.
    const secret = fc
      .string({
        unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        minLength: 8,
        maxLength: 40,
      })
      .filter((s) => s.trim() === s);
    await fc.assert(
      fc.asyncProperty(secret, secret, async (apiKey, adminToken) => {
        fc.pre(!apiKey.includes(adminToken) && !adminToken.includes(apiKey));
        const { logger, logged } = recorder();
        capture('get', OPP_PATH, () =>
          HttpResponse.json(
            { message: `bad key ${apiKey}`, token: adminToken, [apiKey]: [adminToken] },
            { status: 401, headers: { 'x-echo': `${apiKey};${adminToken}` } },
          ),
        );
        const crm = makeClient({ apiKey, adminToken, logger, maxRetries: 0 });

        const error = await rejectionOf(crm.opportunities.get('opp_1'));

        expect(error).toBeInstanceOf(CrmApiError);
        expect(logged).toHaveLength(1);
        expectNoSecret(
          [...logTexts(logged), ...errorTexts(error), inspect(crm, { depth: null })],
          [apiKey, adminToken],
        );
      }),
      { numRuns: 40 },
    );
  });
});

describe('inspecting a client never shows a credential', () => {
  const renderings = (client: CrmClient) => [
    inspect(client),
    inspect(client, { depth: null, showHidden: true, getters: true }),
    JSON.stringify(client),
    String(client),
    `${client}`,
    inspect(client.opportunities, { depth: null, showHidden: true }),
    inspect(client.apiKey, { depth: null, showHidden: true }),
    inspect(Object.entries(client), { depth: null, showHidden: true }),
  ];

  test('util.inspect(), JSON.stringify() and String() of a client show its base URL and tenant only', () => {
    const crm = makeClient({ logger: () => undefined, headers: { 'x-trace': 'on' } });

    const texts = renderings(crm);

    expectNoSecret(texts);
    expect(texts[0]).toContain('https://crm.test');
    expect(texts[0]).toContain(TENANT);
  });

  test('the same holds for a withTenant() client', () => {
    const other = makeClient().withTenant('x');

    const texts = renderings(other);

    expectNoSecret(texts);
    expect(texts[0]).toContain("tenantId: 'x'");
  });

  test('an error thrown before any I/O, such as a missing credential, does not show the one that is set', async () => {
    const crm = makeClient({ adminToken: undefined });
    const error = await rejectionOf(crm.apiKey.status());

    expect(error).toBeInstanceOf(CrmError);
    expectNoSecret(errorTexts(error));
  });
});
