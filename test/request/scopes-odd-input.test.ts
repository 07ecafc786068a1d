import { delay, HttpResponse, http } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CrmAbortError, type CrmClient, CrmError, CrmValidationError } from '../../src/index';
import { API_KEY, BASE_URL, capture, captureAll, makeClient, ok, rejection, TENANT } from '../support/capture';
import { server } from '../support/msw-server';

const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';
const OPPORTUNITIES = '/integrations/v1/opportunities';
const CONTACTS = '/integrations/v1/contacts';

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
};

beforeEach(() => {
  vi.stubEnv('CRM_API_KEY', undefined);
  vi.stubEnv('CRM_TENANT_ID', undefined);
});

describe('cross-tenant: 1000 calls for 100 tenants sharing maxConcurrency', () => {
  it('every request carries exactly its own tenant key, in header, query and body', async () => {
    const keyOf = (t: string) => `key_live_${t}_${t.length * 7}_s3cret`;
    const bad: string[] = [];
    let inFlight = 0;
    let most = 0;
    const check = (tenantFromWire: string | null, key: string | null, headerTenant: string | null) => {
      if (!tenantFromWire || key !== keyOf(tenantFromWire) || headerTenant !== tenantFromWire)
        bad.push(`${tenantFromWire}/${headerTenant}/${key}`);
    };
    server.use(
      http.get(`${BASE_URL}${OPPORTUNITY}`, async ({ request }) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await delay(Math.floor(Math.random() * 3));
        const url = new URL(request.url);
        check(url.searchParams.get('tenantId'), request.headers.get('x-api-key'), request.headers.get('x-tenant-id'));
        inFlight--;
        // Every fifth answer fails once, so retries are in the mix.
        return Math.random() < 0.2
          ? HttpResponse.json({ message: 'busy' }, { status: 503, headers: { 'retry-after': '0' } })
          : ok({ id: 'opp_1' });
      }),
      http.post(`${BASE_URL}${OPPORTUNITIES}`, async ({ request }) => {
        const body = (await request.json()) as { tenantId: string };
        check(body.tenantId, request.headers.get('x-api-key'), request.headers.get('x-tenant-id'));
        await delay(1);
        return ok({ id: 'opp_2' });
      }),
      http.get(`${BASE_URL}${CONTACTS}`, async ({ request }) => {
        const url = new URL(request.url);
        check(url.searchParams.get('tenantId'), request.headers.get('x-api-key'), request.headers.get('x-tenant-id'));
        const page = Number(url.searchParams.get('page') ?? 1);
        return ok([{ id: `c${page}` }], { pagination: { page, limit: 1, total: 3, pages: 3 } });
      }),
    );
    const lookups = vi.fn(async ({ tenantId }: { tenantId: string }) => {
      await delay(Math.floor(Math.random() * 3));
      return keyOf(tenantId);
    });
    const root = makeClient({ maxConcurrency: 7, apiKey: lookups, maxRetries: 10, maxRetryAfter: 1 });
    const tenants = Array.from({ length: 100 }, (_, i) => `t${i}`);
    // Half through a string key, half through the shared function; some through chains.
    const clients = tenants.map((t, i): CrmClient => {
      if (i % 4 === 0) return root.withTenant(t, { apiKey: keyOf(t) });
      if (i % 4 === 1) return root.withTenant('decoy').withOptions({ timeout: 5_000 }).withTenant(t);
      if (i % 4 === 2) return root.withTenant(t, { apiKey: () => keyOf(t) }).withOptions({ headers: { 'x-j': t } });
      return root.withTenant(t);
    });
    const calls: Promise<unknown>[] = [];
    for (let n = 0; n < 1000; n++) {
      const c = clients[(n * 37) % 100] as CrmClient;
      if (n % 10 === 0) calls.push(c.opportunities.create({ name: 'n', accountId: 'a' }));
      else if (n % 10 === 1)
        calls.push(
          (async () => {
            for await (const _ of c.contacts.list({ limit: 1 }, { prefetch: 1 }));
          })(),
        );
      else calls.push(c.opportunities.get('opp_1'));
    }
    const results = await Promise.allSettled(calls);

    expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
    expect(bad).toEqual([]);
    expect(most).toBeLessThanOrEqual(7);
  }, 180_000);
});

describe('apiKey function call counts', () => {
  it('once per call with 3 retries', async () => {
    const seen = capture('get', OPPORTUNITY, (_r, i) =>
      i < 3 ? HttpResponse.json({ m: 'x' }, { status: 503, headers: { 'retry-after': '0' } }) : ok({ id: 'opp_1' }),
    );
    const apiKey = vi.fn(() => 'key_live_counted');
    await makeClient({ apiKey, maxRetries: 3 }).opportunities.get('opp_1');
    expect(seen).toHaveLength(4);
    expect(apiKey).toHaveBeenCalledTimes(1);
  });

  it('once per page request of a for await loop (3 pages -> 3 calls), with the page tenant', async () => {
    capture('get', CONTACTS, (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
      return ok([{ id: `c${page}` }], { pagination: { page, limit: 1, total: 3, pages: 3 } });
    });
    const apiKey = vi.fn(({ tenantId }: { tenantId: string }) => `key_live_${tenantId}`);
    const ids: string[] = [];
    for await (const c of makeClient({ apiKey }).withTenant('globex').contacts.list({ limit: 1 })) ids.push(c.id);
    expect(ids).toEqual(['c1', 'c2', 'c3']);
    expect(apiKey.mock.calls).toEqual([[{ tenantId: 'globex' }], [{ tenantId: 'globex' }], [{ tenantId: 'globex' }]]);
  });

  it('a redirect followed within the origin does not call it again', async () => {
    const seen = capture('get', OPPORTUNITY, (request, i) =>
      i === 0 ? new HttpResponse(null, { status: 307, headers: { location: request.url } }) : ok({ id: 'opp_1' }),
    );
    const apiKey = vi.fn(() => 'key_live_redir');
    await makeClient({ apiKey }).opportunities.get('opp_1');
    expect(seen.map((r) => r.headers.get('x-api-key'))).toEqual(['key_live_redir', 'key_live_redir']);
    expect(apiKey).toHaveBeenCalledTimes(1);
  });
});

describe('odd key functions', () => {
  it('a thenable key is awaited', async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    // biome-ignore lint/suspicious/noThenProperty: the attack
    const thenable = { then: (resolve: (v: string) => void) => resolve('key_live_thenable') };
    await makeClient({ apiKey: () => thenable as unknown as string }).opportunities.get('opp_1');
    expect(seen[0]?.headers.get('x-api-key')).toBe('key_live_thenable');
  });

  it('a thenable whose then throws, and a key that is an object with toString, are refused; nothing sent', async () => {
    const sent = captureAll();
    const bad = {
      // biome-ignore lint/suspicious/noThenProperty: a thenable whose then throws is the point
      then() {
        throw new Error('then exploded');
      },
    };
    const a = await rejection(makeClient({ apiKey: () => bad as unknown as string }).opportunities.get('opp_1'));
    const b = await rejection(
      makeClient({ apiKey: () => ({ toString: () => 'key_live_obj' }) as unknown as string }).opportunities.get(
        'opp_1',
      ),
    );
    const c = await rejection(
      makeClient({ apiKey: () => Symbol('k') as unknown as string }).opportunities.get('opp_1'),
    );
    expect(a).toBeInstanceOf(CrmError);
    expect((a.cause as Error).message).toBe('then exploded');
    expect(b).toBeInstanceOf(CrmValidationError);
    expect(c).toBeInstanceOf(CrmValidationError);
    expect(sent).toEqual([]);
  });

  it.each([
    ['a string', 'nope'],
    ['undefined', undefined],
    ['null', null],
    ['a number', 7],
  ])('throwing %s fails with a CrmError whose cause is exactly it', async (_, value) => {
    const sent = captureAll();
    const error = await rejection(
      makeClient({
        apiKey: () => {
          throw value;
        },
      }).opportunities.get('opp_1'),
    );
    expect(error).toBeInstanceOf(CrmError);
    expect('cause' in error).toBe(true);
    expect(error.cause).toBe(value);
    expect(sent).toEqual([]);
  });

  it('resolving after the signal aborted sends nothing, ever', async () => {
    const sent = captureAll();
    const controller = new AbortController();
    let resolveKey: (k: string) => void = () => {};
    const crm = makeClient({ apiKey: () => new Promise<string>((r) => (resolveKey = r)) });
    const pending = crm.opportunities.get('opp_1', { signal: controller.signal });
    controller.abort();
    const error = await rejection(pending);
    resolveKey('key_live_late');
    await delay(20);
    expect(error).toBeInstanceOf(CrmAbortError);
    expect(sent).toEqual([]);
  });

  it('is not called when the signal is already aborted', async () => {
    captureAll();
    const apiKey = vi.fn(() => 'key_live_x');
    await rejection(makeClient({ apiKey }).opportunities.get('opp_1', { signal: AbortSignal.abort() }));
    expect(apiKey).not.toHaveBeenCalled();
  });

  it('resolving after totalTimeout sends nothing', async () => {
    const sent = captureAll();
    const crm = makeClient({ apiKey: () => delay(60).then(() => 'key_live_late') });
    await rejection(crm.opportunities.get('opp_1', { totalTimeout: 10 }));
    await delay(100);
    expect(sent).toEqual([]);
  });
});

describe('credential headers cannot be overridden', () => {
  it('per-call and withOptions headers, any case, with a key function and a string key', async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    const forged = { 'X-API-KEY': 'forged1', 'x-Tenant-Id': 'evil', AUTHORIZATION: 'Bearer forged' };
    const fnClient = makeClient({ apiKey: ({ tenantId }) => `key_live_${tenantId}` });
    await fnClient.withOptions({ headers: forged }).opportunities.get('opp_1', { headers: forged });
    await fnClient.opportunities.get('opp_1', { headers: forged });
    await makeClient().withTenant('g', { apiKey: 'key_live_g1' }).opportunities.get('opp_1', { headers: forged });
    await makeClient({ headers: forged }).opportunities.get('opp_1');
    expect(
      seen.map((r) => [r.headers.get('x-api-key'), r.headers.get('x-tenant-id'), r.headers.get('authorization')]),
    ).toEqual([
      [`key_live_${TENANT}`, TENANT, null],
      [`key_live_${TENANT}`, TENANT, null],
      ['key_live_g1', 'g', null],
      [API_KEY, TENANT, null],
    ]);
  });

  it('a per-call tenantId query/body cannot retarget the tenant', async () => {
    const sent = captureAll();
    const crm = makeClient().withTenant('g', { apiKey: 'key_live_g1' });
    await expect(
      crm.opportunities.create({ name: 'n', accountId: 'a', tenantId: 'evil' } as never),
    ).rejects.toBeInstanceOf(CrmValidationError);
    await expect(crm.contacts.list({ tenantId: 'evil' } as never)).rejects.toBeInstanceOf(CrmValidationError);
    expect(sent).toEqual([]);
  });
});

describe('withOptions(odd input)', () => {
  const crm = makeClient();
  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', 'timeout'],
    ['__proto__ own key', JSON.parse('{"__proto__": {"timeout": 1}}')],
    ['constructor key', { constructor: 1 }],
    ['headers as an array', { headers: ['x'] }],
    ['headers null', { headers: null }],
    ['a header name with a space', { headers: { 'x a': 'b' } }],
    ['a header value with a char above U+00FF', { headers: { 'x-a': 'b\u0100' } }],
    ['timeout NaN', { timeout: Number.NaN }],
    ['timeout as a string', { timeout: '5' }],
    ['prefetch 1.5', { prefetch: 1.5 }],
    ['maxRetries Infinity', { maxRetries: Number.POSITIVE_INFINITY }],
  ])('%s is refused with CrmValidationError', (_, options) => {
    expect(thrown(() => crm.withOptions(options as never))).toBeInstanceOf(CrmValidationError);
  });

  it('an options object whose getter throws is refused with CrmValidationError (not the raw error)', () => {
    const options = {
      get timeout(): number {
        throw new Error('getter boom');
      },
    };
    expect(thrown(() => crm.withOptions(options))).toBeInstanceOf(CrmValidationError);
  });

  it('a headers object whose getter throws is refused with CrmValidationError', () => {
    const headers = {
      get 'x-a'(): string {
        throw new Error('getter boom');
      },
    };
    expect(thrown(() => crm.withOptions({ headers }))).toBeInstanceOf(CrmValidationError);
  });

  it('a Proxy that throws on ownKeys is refused with CrmValidationError', () => {
    const options = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('ownKeys boom');
        },
      },
    );
    expect(thrown(() => crm.withOptions(options))).toBeInstanceOf(CrmValidationError);
  });

  it('undefined is refused with CrmValidationError or treated as no change (never a TypeError)', () => {
    const error = thrown(() => crm.withOptions(undefined as never));
    if (error !== undefined) expect(error).toBeInstanceOf(CrmValidationError);
  });

  it('does not pollute Object.prototype', () => {
    crm.withOptions(JSON.parse('{"headers": {"__proto__": "x", "x-b": "c"}}'));
    expect(({} as Record<string, unknown>).timeout).toBeUndefined();
  });
});

describe('withTenant(odd tenant)', () => {
  const crm = makeClient();
  it.each([
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { toString: () => 't' }],
    ['CR LF', 'a\r\nx-api-key: forged'],
    ['NUL', 'a\u0000b'],
    ['a char above U+00FF', 'tenant\u0100'],
  ])('%s is refused with CrmValidationError', (_, tenantId) => {
    expect(thrown(() => crm.withTenant(tenantId as never))).toBeInstanceOf(CrmValidationError);
  });

  it('a tenant id with spaces around it is refused, since fetch would send it trimmed in the header but not in the query', () => {
    const sent = captureAll();
    for (const tenantId of [' acme', 'acme ', '\u00a0acme']) {
      expect(thrown(() => crm.withTenant(tenantId))).toBeInstanceOf(CrmValidationError);
      expect(thrown(() => makeClient({ tenantId }))).toBeInstanceOf(CrmValidationError);
    }
    expect(sent).toEqual([]);
  });

  it('a tenant id with a tab or C1 control character is refused', () => {
    expect(thrown(() => crm.withTenant('ac\tme'))).toBeInstanceOf(CrmValidationError);
    expect(thrown(() => crm.withTenant('ac\u0085me'))).toBeInstanceOf(CrmValidationError);
  });

  it('a tenant id like a path or query is only ever encoded', async () => {
    const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1' }));
    await crm.withTenant('../x?tenantId=evil&a=#').opportunities.get('opp_1');
    expect(seen[0]?.url.pathname).toBe(OPPORTUNITY);
    expect(seen[0]?.url.searchParams.getAll('tenantId')).toEqual(['../x?tenantId=evil&a=#']);
  });
});
