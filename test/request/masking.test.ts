import { inspect } from 'node:util';
import { HttpResponse } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CrmApiError, CrmError, CrmNotFoundError, CrmServerError, CrmValidationError } from '../../src/index';
import { ADMIN_TOKEN, API_KEY, capture, captureAll, makeClient, rejection } from '../support/capture';

const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';

/** Every place a credential could surface from an error. */
function outputsOf(error: Error): string[] {
  const e = error as Error & { headers?: Headers; body?: unknown };
  return [
    error.message,
    String(error.stack),
    inspect(error, { depth: null, showHidden: true }),
    JSON.stringify(error),
    JSON.stringify([...(e.headers ?? new Headers())]),
    JSON.stringify(e.body ?? null),
  ];
}

const expectNoLeak = (outputs: string[], secret: string) => {
  for (const text of outputs) expect(text).not.toContain(secret);
};

beforeEach(() => {
  vi.stubEnv('CRM_API_KEY', undefined);
  vi.stubEnv('CRM_TENANT_ID', undefined);
});

describe('masking: overlapping credentials', () => {
  it("a tenant key that contains the parent's key is masked whole, not just the parent's part", async () => {
    // The parent key is a prefix of the tenant key (e.g. keys derived from a root key).
    const tenantKey = `${API_KEY}_globex_Z9q`;
    capture('get', OPPORTUNITY, HttpResponse.json({ message: `bad key ${tenantKey}` }, { status: 404 }));

    const error = await rejection(makeClient().withTenant('globex', { apiKey: tenantKey }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    // The tail of the tenant's key must not survive masking.
    expectNoLeak(outputsOf(error), '_globex_Z9q');
  });

  it('a key returned by a function that contains the configured admin token is masked whole', async () => {
    const fnKey = `xx${ADMIN_TOKEN}_TAILsecret`;
    capture('get', OPPORTUNITY, HttpResponse.json({ message: `bad key ${fnKey}` }, { status: 404 }));

    const error = await rejection(makeClient({ apiKey: () => fnKey }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expectNoLeak(outputsOf(error), '_TAILsecret');
  });
});

describe('masking: short keys', () => {
  it('a 3-character key returned by a function is accepted, so it must be masked when echoed', async () => {
    const seen = capture('get', OPPORTUNITY, HttpResponse.json({ message: 'your key is Q7z!' }, { status: 404 }));

    const error = await rejection(makeClient({ apiKey: () => 'Q7z' }).opportunities.get('opp_1'));

    expect(seen[0]?.headers.get('x-api-key')).toBe('Q7z');
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expectNoLeak(outputsOf(error), 'Q7z');
  });
});

describe('masking: where a hostile server puts the key', () => {
  const KEY = 'key_live_h0stile_5ecret';

  it('a key echoed in a response header name never reaches error.headers', async () => {
    capture(
      'get',
      OPPORTUNITY,
      HttpResponse.json({ message: 'no' }, { status: 404, headers: { [`x-echo-${KEY}`]: '1' } }),
    );

    const error = await rejection(makeClient({ apiKey: () => KEY }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expectNoLeak(outputsOf(error), KEY);
  });

  it('in set-cookie, status text, x-echo header, body keys and values (function key)', async () => {
    capture(
      'get',
      OPPORTUNITY,
      () =>
        new HttpResponse(JSON.stringify({ [KEY]: [KEY, { deep: `${KEY}` }] }), {
          status: 500,
          statusText: `Bad ${KEY}`,
          headers: { 'set-cookie': `k=${KEY}`, 'x-echo': KEY, 'content-type': 'application/json' },
        }),
    );

    const error = await rejection(makeClient({ apiKey: () => KEY, maxRetries: 0 }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmServerError);
    expectNoLeak(outputsOf(error), KEY);
  });

  it('in a success:false envelope with 200 and in a non-envelope 200 (response validation)', async () => {
    capture('get', OPPORTUNITY, (_r, i) =>
      i === 0
        ? HttpResponse.json({ success: false, error: { message: `key ${KEY}` } })
        : HttpResponse.json({ success: true, data: { id: 5, name: KEY, [KEY]: KEY } }),
    );
    const crm = makeClient({ apiKey: () => KEY });

    const a = await rejection(crm.opportunities.get('opp_1'));
    const b = await rejection(crm.opportunities.get('opp_1'));

    expect(a).toBeInstanceOf(CrmApiError);
    expect(b).toBeInstanceOf(CrmError);
    expectNoLeak([...outputsOf(a), ...outputsOf(b)], KEY);
  });
});

describe('masking in log lines', () => {
  it('a same-origin redirect whose Location carries the key: the followed URL is logged with the key masked', async () => {
    const KEY = 'key_live_l0gged_5ecret';
    capture(
      'get',
      OPPORTUNITY,
      () => new HttpResponse(null, { status: 302, headers: { location: `/integrations/v1/echo/${KEY}?k=${KEY}` } }),
    );
    capture('get', `/integrations/v1/echo/${KEY}`, HttpResponse.json({ message: 'no' }, { status: 404 }));
    const lines: string[] = [];
    const crm = makeClient({
      apiKey: () => KEY,
      maxRetries: 0,
      logger: (line, entry) => lines.push(line, JSON.stringify(entry)),
    });

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(lines.length).toBeGreaterThan(2);
    expectNoLeak([...outputsOf(error), ...lines], KEY);
  });

  it('a failing attempt whose fetch error names the key: the log line masks it', async () => {
    const KEY = 'key_live_l0g_err_5ecret';
    const lines: string[] = [];
    const crm = makeClient({
      apiKey: () => KEY,
      maxRetries: 1,
      fetch: (async () => {
        throw new TypeError(`fetch failed for ${KEY}`);
      }) as typeof fetch,
      logger: (line, entry) => lines.push(line, JSON.stringify(entry)),
    });

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(lines.length).toBeGreaterThan(0);
    expectNoLeak([...outputsOf(error), ...lines], KEY);
  });
});

describe('masking that holds', () => {
  it('a key of latin-1 characters returned by a function is sent and masked', async () => {
    const KEY = 'clé_livé_5ecret';
    const seen = capture('get', OPPORTUNITY, (request) =>
      HttpResponse.json(
        { message: `bad ${KEY}` },
        { status: 404, headers: { 'x-echo': request.headers.get('x-api-key') ?? '' } },
      ),
    );
    const lines: string[] = [];

    const error = await rejection(
      makeClient({ apiKey: () => KEY, logger: (l, e) => lines.push(l, JSON.stringify(e)) }).opportunities.get('opp_1'),
    );

    expect(seen[0]?.headers.get('x-api-key')).toBe(KEY);
    expectNoLeak([...outputsOf(error), ...lines], KEY);
  });

  it('a key with an internal space is sent as is and masked', async () => {
    const KEY = 'key live in5ide';
    const seen = capture('get', OPPORTUNITY, HttpResponse.json({ message: `bad ${KEY}` }, { status: 404 }));

    const error = await rejection(makeClient({ apiKey: async () => KEY }).opportunities.get('opp_1'));

    expect(seen[0]?.headers.get('x-api-key')).toBe(KEY);
    expectNoLeak(outputsOf(error), KEY);
  });

  it('a huge (200 kB) key is masked in errors', async () => {
    const KEY = `k${'x'.repeat(200_000)}Z`;
    capture('get', OPPORTUNITY, HttpResponse.json({ message: `bad ${KEY}` }, { status: 404 }));

    const error = await rejection(makeClient({ apiKey: () => KEY }).opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expectNoLeak(outputsOf(error), KEY);
  });

  it('the per-tenant key never shows in the client inspect/JSON, nor the function source', () => {
    const crm = makeClient({ apiKey: () => 'key_live_inl1ne_5ecret' });
    const derived = crm.withTenant('x', { apiKey: 'key_live_tenant_5ecret' }).withOptions({ timeout: 5 });
    for (const c of [crm, derived]) {
      const text = `${inspect(c, { depth: null, showHidden: true })}${JSON.stringify(c)}${inspect(c.contacts, { showHidden: true, depth: null })}`;
      expect(text).not.toContain('5ecret');
    }
  });

  it('a key refused as unusable is not shown in the CrmValidationError', async () => {
    const sent = captureAll();
    for (const key of [' key_live_lead1ng', 'key_live_trail1ng ', 'kéy€euro_5ecret', 'key_live\u007fdel']) {
      const error = await rejection(makeClient({ apiKey: () => key }).opportunities.get('opp_1'));
      expect(error).toBeInstanceOf(CrmValidationError);
      expectNoLeak(outputsOf(error), key.trim());
    }
    expect(sent).toEqual([]);
  });
});

describe('unusable keys that are accepted', () => {
  it.each([
    ['a C1 control character (U+0085 NEL) inside', 'key_live\u0085nel_5ecret'],
    ['a C1 control character (U+009B CSI) inside', 'key_live\u009b31m_5ecret'],
    ['a no-break space (U+00A0) before it', '\u00a0key_live_nbsp_5ecret'],
    ['a no-break space (U+00A0) after it', 'key_live_nbsp_5ecret\u00a0'],
  ])('a function returning a key with %s is refused and nothing is sent', async (_, key) => {
    const sent = captureAll();
    const error = await rejection(makeClient({ apiKey: () => key }).opportunities.get('opp_1'));
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(sent).toEqual([]);
  });

  it('withTenant refuses a key with a C1 control character', () => {
    expect(() => makeClient().withTenant('globex', { apiKey: 'key_live\u0085nel_5ecret' })).toThrow(CrmValidationError);
  });
});
