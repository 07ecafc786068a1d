import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { API_KEY, BASE_URL, capture, captureAll, makeClient, ok, TENANT } from '../support/capture';

/** C0 controls but tab (CR, LF and NUL among them) and DEL: characters no header value may hold. */
const CONTROLS = [
  ...Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).filter((c) => c !== '\t'),
  '\u007f',
];

/** One illegal character, weighted toward the ones that split or end a header. */
const illegalChar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('\r', '\n', '\r\n', '\0') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTROLS) },
);

/** Text that is legal in a header value on its own. */
const legal = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '\t', ':', '-', '=', 'x-api-key'), maxLength: 12 });

/** A string with at least one illegal character somewhere, such as `key\r\nx-admin: 1`. */
const withIllegal: fc.Arbitrary<string> = fc
  .tuple(legal, fc.array(illegalChar, { minLength: 1, maxLength: 3 }), legal)
  .map(([before, bad, after]) => `${before}${bad.join('')}${after}`);

/** A string with at least one character that is not Latin-1, which `Headers` cannot carry at all. */
const withWide: fc.Arbitrary<string> = fc
  .tuple(legal, fc.constantFrom('€', '中', '😀', '\u2028', '\u0100', '\ufeff'), legal)
  .map(([before, wide, after]) => `${before}${wide}${after}`);

const refusedValue = fc.oneof(withIllegal, withWide);

/** The error `run` throws synchronously; fails the test when it returns. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('Expected a synchronous throw');
}

/** The rejection of `call`, after checking the method did not throw synchronously. */
async function rejection(call: () => PromiseLike<unknown>): Promise<unknown> {
  let pending: PromiseLike<unknown>;
  try {
    pending = call();
  } catch (error) {
    throw new Error(`Expected a rejection, the method threw synchronously: ${String(error)}`);
  }
  return Promise.resolve(pending).then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

const RUNS = { numRuns: 100 } as const;

describe('credentials with CR, LF, NUL or other illegal characters', () => {
  test.each(['apiKey', 'adminToken', 'tenantId'] as const)(
    'the constructor refuses such a %s with CrmValidationError and nothing is sent',
    (field) => {
      const seen = captureAll();
      fc.assert(
        fc.property(refusedValue, (value) => {
          const error = thrown(() => makeClient({ [field]: value }));
          expect(error).toBeInstanceOf(CrmValidationError);
          expect((error as CrmValidationError).issues.map((issue) => issue.field)).toEqual([field]);
        }),
        RUNS,
      );
      expect(seen).toEqual([]);
    },
  );

  test.each([
    ['CRM_API_KEY', 'apiKey'],
    ['CRM_ADMIN_TOKEN', 'adminToken'],
    ['CRM_TENANT_ID', 'tenantId'],
  ] as const)('the constructor refuses such a value read from %s with CrmValidationError', (variable, field) => {
    // An environment variable cannot hold NUL (the process environment is C strings; Node cuts the
    // value there), so the values tried here are the ones an environment can really carry.
    fc.assert(
      fc.property(
        refusedValue.filter((value) => !value.includes('\0')),
        (value) => {
          vi.stubEnv(variable, value);
          expect(process.env[variable]).toBe(value);
          const error = thrown(() => new CrmClient({ baseUrl: BASE_URL }));
          expect(error).toBeInstanceOf(CrmValidationError);
          expect((error as CrmValidationError).issues.map((issue) => issue.field)).toContain(field);
        },
      ),
      { numRuns: 50 },
    );
  });

  test('withTenant() refuses such a tenant with CrmValidationError, and the original client still works', async () => {
    const seen = captureAll();
    const got = capture('get', '/integrations/v1/opportunities/opp_1', ok({ id: 'opp_1' }));
    const crm = makeClient({ maxRetries: 0 });
    fc.assert(
      fc.property(refusedValue, (tenant) => {
        expect(thrown(() => crm.withTenant(tenant))).toBeInstanceOf(CrmValidationError);
      }),
      RUNS,
    );
    expect(seen).toEqual([]);

    // A refused withTenant() must not leave its tenant behind for the next client constructed.
    await crm.opportunities.get('opp_1');
    await makeClient({ tenantId: 'tenant_2', maxRetries: 0 }).opportunities.get('opp_1');
    expect(seen).toEqual([]);
    expect(got.map((request) => request.headers.get('x-tenant-id'))).toEqual([TENANT, 'tenant_2']);
  });

  test('a legal credential of printable characters is accepted, so the refusals above are about the characters', async () => {
    const seen = capture('get', '/integrations/v1/opportunities/opp_1', ok({ id: 'opp_1' }));
    const printable = fc
      .string({ unit: 'binary-ascii', minLength: 1, maxLength: 20 })
      // Spaces around a key are refused (see below): fetch would trim them on the wire.
      .filter((s) => /^[\x20-\x7e]+$/.test(s) && s.trim() === s);
    await fc.assert(
      fc.asyncProperty(printable, async (value) => {
        seen.length = 0;
        await makeClient({ apiKey: value, tenantId: value, maxRetries: 0 }).opportunities.get('opp_1');
        expect(seen).toHaveLength(1);
        expect(seen[0]?.headers.get('x-api-key')).toBe(value);
        expect(seen[0]?.headers.get('x-tenant-id')).toBe(value);
      }),
      { numRuns: 30 },
    );
  });
});

test('a key or admin token with spaces around it is refused at construction, since fetch would send it trimmed', () => {
  for (const value of [' key_live_1', 'key_live_1 ', '  ', ' ']) {
    expect(() => makeClient({ apiKey: value })).toThrow(CrmValidationError);
    expect(() => makeClient({ adminToken: value })).toThrow(CrmValidationError);
    expect(() => makeClient().withTenant('t2', { apiKey: value })).toThrow(CrmValidationError);
  }
});

describe('header values with CR, LF, NUL or other illegal characters', () => {
  test('the constructor refuses such a value in the client headers with CrmValidationError', () => {
    const seen = captureAll();
    fc.assert(
      fc.property(
        fc.constantFrom('x-trace', 'user-agent', 'x-api-key', 'authorization'),
        refusedValue,
        (name, value) => {
          const error = thrown(() => makeClient({ headers: { 'x-fine': 'ok', [name]: value } }));
          expect(error).toBeInstanceOf(CrmValidationError);
          expect((error as CrmValidationError).issues.map((issue) => issue.field)).toEqual([`headers.${name}`]);
        },
      ),
      RUNS,
    );
    expect(seen).toEqual([]);
  });

  test('the constructor refuses a client header name that is not an HTTP token, naming it', () => {
    const badName = fc
      .tuple(
        fc.constantFrom('x-', 'trace', ''),
        fc.constantFrom(' ', ':', '\r\n', '\0', '(', '"', 'é', '/'),
        fc.constantFrom('', 'id'),
      )
      .map(([before, bad, after]) => `${before}${bad}${after}`);
    fc.assert(
      fc.property(badName, (name) => {
        const error = thrown(() => makeClient({ headers: { 'x-fine': 'ok', [name]: 'value' } }));
        expect(error).toBeInstanceOf(CrmValidationError);
        expect((error as CrmValidationError).issues).toEqual([
          { field: `headers.${name}`, path: ['headers', name], message: 'Not a valid header name' },
        ]);
      }),
      { numRuns: 50 },
    );
  });

  test('a call rejects such a value in its per-call headers with CrmValidationError, before any I/O', async () => {
    const seen = captureAll();
    const logged: string[] = [];
    const crm = makeClient({ maxRetries: 0, logger: (line) => logged.push(line) });
    const calls = [
      (headers: Record<string, string>) => crm.opportunities.get('opp_1', { headers }),
      (headers: Record<string, string>) => crm.opportunities.create({ name: 'N', accountId: 'acc_1' }, { headers }),
      (headers: Record<string, string>) => crm.contacts.update('con_1', {}, { headers }),
      (headers: Record<string, string>) => crm.contacts.list({}, { headers }),
      (headers: Record<string, string>) => crm.activities.list({ opportunityId: 'opp_1' }, { headers }),
      (headers: Record<string, string>) => crm.grants.resolve('grant_1', { headers }),
      (headers: Record<string, string>) => crm.apiKey.status({ headers }),
    ];

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...calls),
        fc.constantFrom('x-trace', 'x-api-key', 'authorization', 'x-tenant-id'),
        refusedValue,
        async (call, name, value) => {
          const error = await rejection(() => call({ [name]: value }));
          expect(error).toBeInstanceOf(CrmValidationError);
          expect((error as CrmValidationError).issues.map((issue) => issue.field)).toEqual([`headers.${name}`]);
        },
      ),
      RUNS,
    );
    expect(seen).toEqual([]);
    expect(logged).toEqual([]);
  });

  test('a header value carrying CR LF never reaches the server as an extra header', async () => {
    const seen = captureAll();
    const injected = `x\r\nx-api-key: forged\r\nx-injected: 1`;

    const error = await rejection(() => makeClient().opportunities.get('opp_1', { headers: { 'x-trace': injected } }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
    // The client-wide form, for comparison, never gets as far as a client.
    expect(thrown(() => makeClient({ headers: { 'x-trace': injected } }))).toBeInstanceOf(CrmValidationError);
    expect(thrown(() => makeClient({ apiKey: `${API_KEY}\r\nx-injected: 1` }))).toBeInstanceOf(CrmValidationError);
  });
});
