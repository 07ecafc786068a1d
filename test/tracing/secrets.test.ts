import { HttpResponse, http } from 'msw';
import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import {
  type CrmAttemptContext,
  CrmAuthenticationError,
  type CrmCallContext,
  CrmClient,
  CrmConnectionError,
  type CrmLogger,
} from '../../src/index';
import { instrumentCrm } from '../../src/otel/index';
import { ADMIN_TOKEN, API_KEY, BASE_URL, capture, makeClient, ok, rejection, TENANT } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';
import { fakeOverHttp } from '../support/fake-over-http';
import { server } from '../support/msw-server';
import { useOtel } from '../support/otel';
import { inspect, record } from '../support/tracing-channels';

const otel = useOtel();
const OPP = { id: 'opp_1', name: 'Deal', accountId: 'acc_1' };
const OPP_PATH = '/integrations/v1/opportunities/:id';
const deep = (value: unknown) => inspect(value, { depth: 12, showHidden: true, getters: true });

describe('credentials that reach a subscriber', () => {
  test("apiKey.generate(): the new key is in the call context's result", async () => {
    const { crm } = await fakeOverHttp();
    const { calls } = record();

    const generated = await crm.apiKey.generate();

    expect(generated.apiKey).toMatch(/^crm_live_/);
    // "The new key is returned to the caller and kept nowhere else"; README: "What is published never holds a credential".
    expect(deep(calls[0])).not.toContain(generated.apiKey);
  });

  test("apiKey.generate(): a subscriber reads the new key from the attempt's result, the raw Response", async () => {
    const { crm } = await fakeOverHttp();
    const clones: Promise<string>[] = [];
    record({
      attempt: {
        asyncEnd: (attempt) => {
          const result = (attempt as { result?: unknown }).result;
          if (result instanceof Response) clones.push(result.clone().text());
        },
      },
    });

    const generated = await crm.apiKey.generate();

    const bodies = await Promise.all(clones);
    expect(bodies.join('\n')).not.toContain(generated.apiKey);
  });

  test("a server that echoes the key in a 401 body: the CrmError is masked, the attempt's raw Response is not", async () => {
    capture('get', OPP_PATH, () =>
      HttpResponse.json({ success: false, error: { message: `bad key ${API_KEY}` } }, { status: 401 }),
    );
    const clones: Promise<string>[] = [];
    const { calls } = record({
      attempt: {
        asyncEnd: (attempt) => {
          const result = (attempt as { result?: unknown }).result;
          if (result instanceof Response) clones.push(result.clone().text());
        },
      },
    });

    const error = await rejection(makeClient({ maxRetries: 0 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmAuthenticationError);
    expect(deep(error)).not.toContain(API_KEY);
    expect(deep(calls[0]?.error)).not.toContain(API_KEY);
    expect((await Promise.all(clones)).join('\n')).not.toContain(API_KEY);
  });

  test("the attempt's result is the SDK's own Response: a subscriber that reads it (no clone) fails the call as a 'Connection failed'", async () => {
    capture('get', OPP_PATH, ok(OPP));
    record({
      attempt: {
        asyncEnd: (attempt) => {
          void (attempt as { result?: Response }).result?.text();
        },
      },
    });

    await expect(makeClient({ maxRetries: 0 }).opportunities.get('opp_1')).resolves.toMatchObject({ id: 'opp_1' });
  });

  test("a fetch that rejects with the request's headers (an axios-like error): masked for the caller, raw in attempt.error", async () => {
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      const key = new Headers(init?.headers).get('x-api-key');
      throw Object.assign(new TypeError(`upstream refused x-api-key=${key}`), {
        config: { headers: { 'x-api-key': key } },
      });
    };
    const { attempts } = record();

    const error = await rejection(makeClient({ fetch, maxRetries: 0 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(deep(error)).not.toContain(API_KEY);
    expect(attempts).toHaveLength(1);
    // README: "errors are masked like everywhere else".
    expect(deep(attempts[0]?.error)).not.toContain(API_KEY);
  });

  test('a credential in the URL (an id, an extraQuery value): the logger masks it, attempt.url and url.full do not', async () => {
    capture('get', OPP_PATH, ok(OPP));
    const lines: string[] = [];
    const logger: CrmLogger = (line) => {
      lines.push(line);
    };
    const { attempts } = record();
    otel.instrument();

    await makeClient({ logger }).opportunities.get(API_KEY, { extraQuery: { echo: ADMIN_TOKEN } });

    expect(lines.join('\n')).not.toContain(API_KEY);
    expect(lines.join('\n')).not.toContain(ADMIN_TOKEN);
    expect(attempts[0]?.url).not.toContain(API_KEY);
    expect(attempts[0]?.url).not.toContain(ADMIN_TOKEN);
    expect(otel.recorded()).not.toContain(API_KEY);
  });

  test("a credential as a custom header's value: the logger masks it, attempt.headers does not", async () => {
    capture('get', OPP_PATH, ok(OPP));
    const logged: Record<string, string>[] = [];
    const logger: CrmLogger = (_line, entry) => {
      logged.push(entry.headers);
    };
    const { attempts } = record();

    await makeClient({ logger, headers: { 'x-upstream-auth': `Bearer ${ADMIN_TOKEN}` } }).opportunities.get('opp_1');

    expect(JSON.stringify(logged)).not.toContain(ADMIN_TOKEN);
    expect(JSON.stringify(attempts[0]?.headers)).not.toContain(ADMIN_TOKEN);
  });

  test('crm.request(): a credential in the path shows in urlTemplate and the span names; errors mask it', async () => {
    server.use(
      http.get(`${BASE_URL}/integrations/v1/widgets/*`, () => HttpResponse.json({ success: false }, { status: 404 })),
    );
    const { calls } = record();
    otel.instrument();

    const error = await rejection(
      makeClient({ maxRetries: 0 }).request({ method: 'GET', path: `integrations/v1/widgets/${API_KEY}` }),
    );

    expect(error.message).not.toContain(API_KEY);
    expect(calls[0]?.urlTemplate).not.toContain(API_KEY);
    expect(
      otel
        .spans()
        .map((span) => span.name)
        .join('\n'),
    ).not.toContain(API_KEY);
  });
});

describe('what a subscriber and the spans never see', () => {
  const secretsOf = (text: string) =>
    [API_KEY, ADMIN_TOKEN, 'c00kie', 'pr0xy', 'cu5tom'].filter((s) => text.includes(s));

  test('no credential header, in any case, nor one named by redactHeaders in another case, is shown', async () => {
    capture('get', OPP_PATH, ok(OPP));
    capture('get', mswPath(endpoints.apiKeyStatus), ok({ hasKey: true }));
    const { calls, attempts } = record();
    otel.instrument();
    const crm = makeClient({
      headers: { Cookie: 'c00kie', 'Proxy-Authorization': 'pr0xy', 'X-Custom-Token': 'cu5tom' },
      redactHeaders: ['x-CUSTOM-token'],
    });

    await crm.opportunities.get('opp_1');
    await crm.apiKey.status();

    expect(attempts).toHaveLength(2);
    // What the subscriber sees: accept, the SDK's user-agent, and the traceparent instrumentCrm() added.
    expect(attempts.map((attempt) => Object.keys(attempt.headers).sort())).toEqual([
      ['accept', 'traceparent', 'user-agent'],
      ['accept', 'traceparent', 'user-agent'],
    ]);
    expect(secretsOf(deep({ calls, attempts }))).toEqual([]);
    expect(secretsOf(otel.recorded())).toEqual([]);
  });

  test('the key an apiKey function returns, and a withTenant key, are not shown', async () => {
    capture('get', OPP_PATH, ok(OPP));
    const { calls, attempts } = record();
    const crm = new CrmClient({ baseUrl: BASE_URL, tenantId: TENANT, apiKey: async () => 'key_from_vault_1' });

    await crm.opportunities.get('opp_1');
    await crm.withTenant('tenant_2', { apiKey: 'key_tenant_2' }).opportunities.get('opp_1');

    expect(calls.map((call) => call.tenantId)).toEqual([TENANT, 'tenant_2']);
    const text = deep({
      calls: calls.map(({ result: _, ...call }: CrmCallContext & { result?: unknown }) => call),
      attempts: attempts.map(({ result: _r, ...a }: CrmAttemptContext & { result?: unknown }) => a),
    });
    expect(text).not.toContain('key_from_vault_1');
    expect(text).not.toContain('key_tenant_2');
  });

  test('a hostile server echoing both credentials in its body, status text and headers: call.error and the spans are masked', async () => {
    const echo = `${API_KEY} ${ADMIN_TOKEN} ${encodeURIComponent(API_KEY)} ${btoa(API_KEY)}`;
    capture(
      'get',
      OPP_PATH,
      () =>
        new HttpResponse(JSON.stringify({ success: false, error: { code: API_KEY, message: echo } }), {
          status: 403,
          statusText: `Forbidden ${API_KEY}`,
          headers: { 'content-type': 'application/json', 'x-echo': API_KEY, 'x-request-id': `req_${API_KEY}` },
        }),
    );
    capture(
      'post',
      mswPath(endpoints.generateApiKey),
      () =>
        new HttpResponse(`<html>${ADMIN_TOKEN}</html>`, {
          status: 500,
          statusText: ADMIN_TOKEN,
          headers: { 'content-type': 'text/html', 'x-echo': ADMIN_TOKEN },
        }),
    );
    const { calls } = record();
    otel.instrument();
    const crm = makeClient({ maxRetries: 0 });

    await rejection(crm.opportunities.get('opp_1'));
    await rejection(crm.apiKey.generate());

    const errors = calls.map((call: CrmCallContext) => deep(call.error)).join('\n');
    expect(errors).not.toContain(API_KEY);
    expect(errors).not.toContain(ADMIN_TOKEN);
    expect(otel.recorded()).not.toContain(API_KEY);
    expect(otel.recorded()).not.toContain(ADMIN_TOKEN);
    // requestId comes from the error, masked.
    expect(calls[0]?.requestId ?? '').not.toContain(API_KEY);
  });
});

describe('a credential header echoed in part', () => {
  const SESSION = 'cookie_SESSION_55aa66bb';
  const PASSWORD = 'pr0xy-Passw0rd';
  const BASIC = btoa(`alice:${PASSWORD}`);

  test.each([
    ['a cookie value', `session ${SESSION} expired`, [SESSION]],
    ['a cookie value, percent-encoded in the header and echoed decoded', 'session a/b+c=d_9 expired', ['a/b+c=d_9']],
    ['a proxy credential without its scheme', `proxy refused ${BASIC}`, [BASIC]],
    ["a Basic credential's password, decoded", `user alice, password ${PASSWORD}: refused`, [PASSWORD]],
    ['a Digest parameter', 'response 6629fae49393a05397450978507c4ef1 is stale', ['6629fae49393a05397450978507c4ef1']],
  ])('%s is masked in the error, the call channel and the span', async (_, words, hidden) => {
    capture('get', OPP_PATH, () => HttpResponse.json({ success: false, error: { message: words } }, { status: 401 }));
    const { calls } = record();
    const stop = instrumentCrm({ tracerProvider: otel.provider, recordErrorMessages: true });
    const crm = makeClient({
      maxRetries: 0,
      headers: {
        cookie: `theme=dark; session=${SESSION}; path="/"; enc=${encodeURIComponent('a/b+c=d_9')}`,
        'proxy-authorization': words.startsWith('response')
          ? 'Digest username="alice", response="6629fae49393a05397450978507c4ef1"'
          : `Basic ${BASIC}`,
      },
    });

    try {
      const error = await rejection(crm.opportunities.get('opp_1'));
      expect(error).toBeInstanceOf(CrmAuthenticationError);
      expect(error.message).toContain('[redacted]');
      for (const secret of hidden) {
        expect(deep(error)).not.toContain(secret);
        expect(deep(calls)).not.toContain(secret);
        expect(otel.recorded()).not.toContain(secret);
      }
    } finally {
      stop();
    }
  });

  test('short cookie values and cookie attributes are left readable', async () => {
    capture('get', OPP_PATH, () =>
      HttpResponse.json({ success: false, error: { message: 'theme dark, path /, 401' } }, { status: 401 }),
    );
    const crm = makeClient({
      maxRetries: 0,
      headers: { cookie: 'theme=dark; Path=/; session=cookie_SESSION_55aa66bb' },
    });

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(error.message).toBe(
      "401 from GET /integrations/v1/opportunities/opp_1: the API key was refused for tenant 'tenant_1': theme dark, path /, 401",
    );
  });
});
