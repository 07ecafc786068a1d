import { inspect } from 'node:util';
import { delay, HttpResponse, http } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CrmAbortError,
  type CrmClient,
  CrmError,
  type CrmLogger,
  CrmNotFoundError,
  CrmServerError,
  CrmTimeoutError,
  CrmValidationError,
} from '../../src/index';
import { API_KEY, BASE_URL, capture, captureAll, makeClient, ok, rejection, TENANT } from '../support/capture';
import { server } from '../support/msw-server';

const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';
const OPPORTUNITIES = '/integrations/v1/opportunities';
const CONTACTS = '/integrations/v1/contacts';
const KEY_STATUS = '/integrations/api-key';
const GLOBEX_KEY = 'key_live_gl0bex_5ecret';

const fields = (error: unknown) => (error as CrmValidationError).issues.map((issue) => issue.field);

beforeEach(() => {
  vi.stubEnv('CRM_API_KEY', undefined);
  vi.stubEnv('CRM_TENANT_ID', undefined);
});

describe('withTenant(tenantId, { apiKey })', () => {
  it("sends the tenant's own key and tenant, while the parent keeps sending its own", async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const crm = makeClient();

    await crm.withTenant('globex', { apiKey: GLOBEX_KEY }).opportunities.get('opp_1');
    await crm.opportunities.get('opp_1');

    expect(seen.map((r) => [r.headers.get('x-api-key'), r.headers.get('x-tenant-id')])).toEqual([
      [GLOBEX_KEY, 'globex'],
      [API_KEY, TENANT],
    ]);
    expect(seen.map((r) => r.url.searchParams.get('tenantId'))).toEqual(['globex', TENANT]);
  });

  it("puts the tenant in the body of a create and sends the tenant's key", async () => {
    const seen = capture('post', OPPORTUNITIES, ok({ id: 'opp_2' }));

    await makeClient()
      .withTenant('globex', { apiKey: GLOBEX_KEY })
      .opportunities.create({ name: 'Renewal', accountId: 'acc_1' });

    expect(seen[0]?.body).toEqual({ tenantId: 'globex', name: 'Renewal', accountId: 'acc_1' });
    expect(seen[0]?.headers.get('x-api-key')).toBe(GLOBEX_KEY);
  });

  it("without apiKey uses the parent's key, and a grandchild without one uses its parent's", async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const globex = makeClient().withTenant('globex', { apiKey: GLOBEX_KEY });

    await makeClient().withTenant('initech').opportunities.get('opp_1');
    await globex.withTenant('globex-eu').opportunities.get('opp_1');

    expect(seen.map((r) => [r.headers.get('x-api-key'), r.headers.get('x-tenant-id')])).toEqual([
      [API_KEY, 'initech'],
      [GLOBEX_KEY, 'globex-eu'],
    ]);
  });

  it('refuses an empty key, a key with spaces around it or control characters, and unknown options, sending nothing', () => {
    const crm = makeClient();
    for (const apiKey of ['', ' k3y_live', 'k3y_live ', 'k3y\nlive', 'k3y\u0000live']) {
      const error = (() => {
        try {
          crm.withTenant('globex', { apiKey });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(CrmValidationError);
      expect(fields(error)).toEqual(['apiKey']);
      if (apiKey.length > 1) expect((error as Error).message).not.toContain(apiKey.trim());
    }
    expect(() => crm.withTenant('globex', { apiKey: GLOBEX_KEY, timeout: 5 } as never)).toThrow(CrmValidationError);
    expect(() => crm.withTenant('', { apiKey: GLOBEX_KEY })).toThrow(CrmValidationError);
    // The tenant is the first argument; an options object cannot change it.
    expect(() => crm.withTenant('globex', { tenantId: 'evil' } as never)).toThrow(CrmValidationError);
    expect(() => crm.withTenant('globex', null as never)).not.toThrow();
  });

  it('shares the maxConcurrency slots with its parent', async () => {
    let inFlight = 0;
    let most = 0;
    server.use(
      http.get(`${BASE_URL}${OPPORTUNITY}`, async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await delay(10);
        inFlight -= 1;
        return ok({ id: 'opp_1' });
      }),
    );
    const crm = makeClient({ maxConcurrency: 2 });
    const globex = crm.withTenant('globex', { apiKey: GLOBEX_KEY });
    const initech = crm.withTenant('initech', { apiKey: async () => 'key_live_1n1tech' });

    await Promise.all(Array.from({ length: 12 }, (_, i) => [crm, globex, initech][i % 3]?.opportunities.get('opp_1')));

    expect(most).toBe(2);
  });

  it("shares the parent's logger and fetch, and masks the tenant's key in the log", async () => {
    capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const lines: string[] = [];
    const logger: CrmLogger = (line) => lines.push(line);
    const fetched = vi.fn((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
    const crm = makeClient({ logger, fetch: fetched });

    await crm.withTenant('globex', { apiKey: GLOBEX_KEY }).opportunities.get('opp_1');

    expect(fetched).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('tenantId=globex');
    expect(lines[0]).not.toContain(GLOBEX_KEY);
  });

  it("masks the tenant's key where a server echoes it in an error", async () => {
    capture(
      'get',
      OPPORTUNITY,
      HttpResponse.json({ error: { message: `key ${GLOBEX_KEY} is not valid here` } }, { status: 404 }),
    );

    const error = await rejection(makeClient().withTenant('globex', { apiKey: GLOBEX_KEY }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    for (const text of [error.message, inspect(error, { depth: null }), JSON.stringify(error)]) {
      expect(text).not.toContain(GLOBEX_KEY);
    }
  });

  it('shows the tenant, and no key, in inspect and JSON output', () => {
    const globex = makeClient().withTenant('globex', { apiKey: GLOBEX_KEY });

    for (const text of [inspect(globex, { depth: null, showHidden: true }), JSON.stringify(globex)]) {
      expect(text).toContain('globex');
      expect(text).not.toContain(GLOBEX_KEY);
      expect(text).not.toContain(API_KEY);
    }
  });
});

describe('an apiKey function', () => {
  it('is called with the tenant of each call, once per call, not once per attempt', async () => {
    const seen = capture('get', OPPORTUNITY, (_, index) =>
      index === 0 ? HttpResponse.json({ message: 'busy' }, { status: 503 }) : ok({ id: 'opp_1' }),
    );
    const apiKey = vi.fn(({ tenantId }: { tenantId: string }) => `key_live_for_${tenantId}`);
    const crm = makeClient({ apiKey, maxRetries: 1 });

    await crm.opportunities.get('opp_1');

    expect(apiKey).toHaveBeenCalledTimes(1);
    expect(apiKey).toHaveBeenCalledWith({ tenantId: TENANT });
    expect(seen.map((r) => r.headers.get('x-api-key'))).toEqual([`key_live_for_${TENANT}`, `key_live_for_${TENANT}`]);
  });

  it('serves every tenant of withTenant() with the key it looks up, and may be async', async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const vault: Record<string, string> = { acme: 'key_live_acme_1', globex: 'key_live_globex_2' };
    const crm = makeClient({ tenantId: 'acme', apiKey: async ({ tenantId }) => vault[tenantId] as string });

    await crm.opportunities.get('opp_1');
    await crm.withTenant('globex').opportunities.get('opp_1');

    expect(seen.map((r) => [r.headers.get('x-tenant-id'), r.headers.get('x-api-key')])).toEqual([
      ['acme', 'key_live_acme_1'],
      ['globex', 'key_live_globex_2'],
    ]);
  });

  it('is not called for key-management calls, which use the admin token', async () => {
    const seen = capture('get', KEY_STATUS, ok({ active: true }));
    const apiKey = vi.fn(() => 'key_live_unused');

    await makeClient({ apiKey }).apiKey.status();

    expect(apiKey).not.toHaveBeenCalled();
    expect(seen[0]?.headers.has('x-api-key')).toBe(false);
  });

  it('is not called when the input is refused', async () => {
    const sent = captureAll();
    const apiKey = vi.fn(() => 'key_live_unused');

    await expect(makeClient({ apiKey }).opportunities.get('')).rejects.toBeInstanceOf(CrmValidationError);

    expect(apiKey).not.toHaveBeenCalled();
    expect(sent).toEqual([]);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('vault sealed');
      },
    ],
    ['rejects', () => Promise.reject(new Error('vault sealed'))],
  ])('that %s fails the call with a CrmError whose cause is its error, and sends nothing', async (_, apiKey) => {
    const sent = captureAll();

    const error = await rejection(makeClient({ apiKey }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmError);
    expect((error.cause as Error).message).toBe('vault sealed');
    expect(error.message).toContain(TENANT);
    expect(sent).toEqual([]);
  });

  it.each([
    ['an empty string', ''],
    ['a key with a space before it', ' key_live_9'],
    ['a key with a newline after it', 'key_live_9\n'],
    ['a key with a control character', 'key_live\u00079'],
    ['a key with a tab inside', 'key\tlive_9'],
    ['a number', 42],
    ['undefined', undefined],
  ])(
    'that returns %s fails the call with a CrmValidationError that does not show it, and sends nothing',
    async (_, key) => {
      const sent = captureAll();

      const error = await rejection(makeClient({ apiKey: async () => key as string }).opportunities.get('opp_1'));

      expect(error).toBeInstanceOf(CrmValidationError);
      expect(fields(error)).toEqual(['apiKey']);
      if (typeof key === 'string' && key.trim()) expect(error.message).not.toContain(key.trim());
      expect(sent).toEqual([]);
    },
  );

  it("that never answers is bounded by the call's totalTimeout, and sends nothing", async () => {
    const sent = captureAll();
    const crm = makeClient({ apiKey: () => new Promise<string>(() => {}) });

    const error = await rejection(crm.opportunities.get('opp_1', { totalTimeout: 30 }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.message).toContain('totalTimeout');
    expect(sent).toEqual([]);
  });

  it("that never answers stops being waited for when the call's signal aborts", async () => {
    const sent = captureAll();
    const controller = new AbortController();
    const crm = makeClient({ apiKey: () => new Promise<string>(() => {}) });

    const pending = crm.opportunities.get('opp_1', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 10);
    const error = await rejection(pending);

    expect(error).toBeInstanceOf(CrmAbortError);
    expect((error.cause as Error).message).toBe('shutting down');
    expect(sent).toEqual([]);
  });

  it('returns a key that is masked in errors, logs and inspect output like a configured one', async () => {
    const key = 'key_live_fr0m_vault';
    capture(
      'get',
      OPPORTUNITY,
      HttpResponse.json({ message: `bad key ${key}` }, { status: 404, headers: { 'x-echo': key } }),
    );
    const lines: string[] = [];
    const crm = makeClient({ apiKey: () => key, logger: (line, entry) => lines.push(line, JSON.stringify(entry)) });

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    const outputs = [
      error.message,
      inspect(error, { depth: null, showHidden: true }),
      JSON.stringify(error),
      ...lines,
      inspect(crm, { depth: null, showHidden: true }),
    ];
    for (const text of outputs) expect(text).not.toContain(key);
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('withOptions(options)', () => {
  it("sends the derived client's headers on top of its parent's, and leaves the parent as it was", async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const crm = makeClient({ headers: { 'x-app': 'sync' } });
    const nightly = crm.withOptions({ headers: { 'x-job': 'nightly-export' } });

    await nightly.opportunities.get('opp_1', { headers: { 'x-trace': 't1' } });
    await crm.opportunities.get('opp_1');

    expect(seen[0]?.headers.get('x-app')).toBe('sync');
    expect(seen[0]?.headers.get('x-job')).toBe('nightly-export');
    expect(seen[0]?.headers.get('x-trace')).toBe('t1');
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(seen[1]?.headers.has('x-job')).toBe(false);
  });

  it('cannot replace the credential headers', async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));

    await makeClient()
      .withOptions({ headers: { 'X-Api-Key': 'forged', 'x-tenant-id': 'evil', authorization: 'Bearer forged' } })
      .opportunities.get('opp_1');

    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(seen[0]?.headers.get('x-tenant-id')).toBe(TENANT);
    expect(seen[0]?.headers.has('authorization')).toBe(false);
  });

  it('retries as its maxRetries says, while its parent keeps its own', async () => {
    const seen = capture('get', OPPORTUNITY, HttpResponse.json({ message: 'down' }, { status: 503 }));
    const crm = makeClient({ maxRetries: 0 });

    await expect(crm.withOptions({ maxRetries: 2 }).opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(3);
    await expect(crm.opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(4);
  });

  it('times an attempt out as its timeout says, and a per-call timeout still wins', async () => {
    server.use(
      http.get(`${BASE_URL}${OPPORTUNITY}`, async () => {
        await delay(200);
        return ok({ id: 'opp_1' });
      }),
    );
    const crm = makeClient({ maxRetries: 0 });

    const error = await rejection(crm.withOptions({ timeout: 20 }).opportunities.get('opp_1'));
    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error.message).toContain('20 ms');

    await expect(crm.withOptions({ timeout: 20 }).opportunities.get('opp_1', { timeout: 1_000 })).resolves.toEqual({
      id: 'opp_1',
    });
  });

  it("keeps its options in a withTenant() client made from it, and shares the parent's tenant and key", async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const tagged = makeClient().withOptions({ headers: { 'x-job': 'backfill' } });

    await tagged.opportunities.get('opp_1');
    await tagged.withTenant('globex', { apiKey: GLOBEX_KEY }).opportunities.get('opp_1');

    expect(tagged.tenantId).toBe(TENANT);
    expect(seen.map((r) => [r.headers.get('x-job'), r.headers.get('x-tenant-id'), r.headers.get('x-api-key')])).toEqual(
      [
        ['backfill', TENANT, API_KEY],
        ['backfill', 'globex', GLOBEX_KEY],
      ],
    );
  });

  it('shortens a long Retry-After to its maxRetryAfter', async () => {
    const seen = capture('get', OPPORTUNITY, (_, index) =>
      index === 0
        ? HttpResponse.json({ message: 'slow down' }, { status: 429, headers: { 'retry-after': '3600' } })
        : ok({ id: 'opp_1' }),
    );

    // With the default (60 s) this call would outlast the test.
    await expect(makeClient().withOptions({ maxRetryAfter: 10 }).opportunities.get('opp_1')).resolves.toEqual({
      id: 'opp_1',
    });
    expect(seen).toHaveLength(2);
  });

  it('fetches ahead as its prefetch says', async () => {
    const pages = 4;
    const seen = capture('get', CONTACTS, (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
      return ok([{ id: `con_${page}` }], { pagination: { page, limit: 1, total: pages, pages } });
    });
    const crm = makeClient().withOptions({ prefetch: 3 });

    const iterator = crm.contacts.list({ limit: 1 })[Symbol.asyncIterator]();
    await iterator.next();
    await vi.waitFor(() => expect(seen).toHaveLength(4));
    await iterator.return?.();
  });

  it('refuses an unknown option, a per-call option and an invalid value with CrmValidationError naming it', () => {
    const crm = makeClient();
    const refused = (options: object) => {
      try {
        crm.withOptions(options as never);
      } catch (error) {
        expect(error).toBeInstanceOf(CrmValidationError);
        return fields(error);
      }
      throw new Error('Expected withOptions() to throw');
    };

    expect(refused({ timout: 5 })).toEqual(['timout']);
    expect(refused({ apiKey: 'k' })).toEqual(['apiKey']);
    expect(refused({ maxConcurrency: 2 })).toEqual(['maxConcurrency']);
    expect(refused({ timeout: 0 })).toEqual(['timeout']);
    expect(refused({ prefetch: 99 })).toEqual(['prefetch']);
    expect(refused({ maxRetryAfter: -1 })).toEqual(['maxRetryAfter']);
    expect(refused({ headers: { 'x-a': 'b\r\nc' } })).toEqual(['headers.x-a']);
  });

  it('derives a client cheaply enough to make one per call: nothing is sent or loaded by deriving', () => {
    const sent = captureAll();
    const crm = makeClient();
    let last: CrmClient = crm;
    for (let i = 0; i < 1_000; i++) last = last.withOptions({ timeout: 1_000 + i }).withTenant(`t${i}`);

    expect(last.tenantId).toBe('t999');
    expect(sent).toEqual([]);
  });
});
