import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { CrmRateLimitError } from '../../src/index';
import { envelopeValidators, recordValidators } from '../../src/internal/envelope-validators.generated';
import { parseContext } from '../../src/internal/parse-context';
import { makeClient } from '../support/capture';
import {
  clientFor,
  failure,
  gapAfter,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

function clientOf(answer: (page: number) => string | object, options = {}) {
  let requests = 0;
  const fetch = async (input: RequestInfo | URL) => {
    requests += 1;
    const page = Number(new URL(String(input)).searchParams.get('page') ?? 1);
    const body = answer(page);
    return new Response(typeof body === 'string' ? body : JSON.stringify({ success: true, ...body }), {
      headers: { 'content-type': 'application/json' },
    });
  };
  return { crm: makeClient({ fetch: fetch as typeof globalThis.fetch, ...options }), requests: () => requests };
}

describe('pagination bounds', () => {
  test('P1 a first page reporting 1e308 pages, or a total of 1e308, bounds the loop at 1,000,000 pages; Infinity at 10,000', async () => {
    const boundOf = async (body: string | object, options = {}) => {
      const { crm } = clientOf(() => body, options);
      return (await crm.contacts.list({ limit: 1 })).pageBound();
    };
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { page: 1, limit: 1, pages: 1e308 } })).toBe(1_000_000);
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { total: 1e308 } })).toBe(1_000_000);
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { page: 1, pages: 12 } })).toBe(34);
    const infinite = '{"success":true,"data":[{"id":"r1"}],"pagination":{"page":1,"pages":1e400}}';
    expect(await boundOf(infinite, { validateResponses: false })).toBe(10_000);
  });

  test('P4 validateResponses:false and a record id that cannot become a string: no TypeError in for await', async () => {
    const { crm } = clientOf(() => `{"success":true,"data":[{"id":{"toString":null}}],"pagination":{"pages":2}}`, {
      validateResponses: false,
    });
    let error: unknown;
    try {
      for await (const _ of crm.contacts.list()) {
        /* drain */
      }
    } catch (e) {
      error = e;
    }
    expect(error).not.toBeInstanceOf(TypeError);
  });

  test('P5 (held) repeated pages in shuffled order, records without id, duplicate ids: the loop ends', async () => {
    const { crm, requests } = clientOf((page) => ({
      data: page % 2 ? [{ id: 'a' }, { id: 'a' }] : [{ id: 'a' }, { id: 'a' }],
      pagination: { page, pages: 1_000 },
    }));
    for await (const _ of crm.contacts.list()) {
      /* drain */
    }
    expect(requests()).toBeLessThan(5);
    const noId = clientOf(
      (page) => `{"success":true,"data":[{"n":${page}}],"pagination":{"page":${page},"pages":1000}}`,
      { validateResponses: false },
    );
    for await (const _ of noId.crm.contacts.list()) {
      /* drain */
    }
    expect(noId.requests()).toBeLessThan(5);
  });

  test('P6 (held) prefetch 16 with pages: -1 / 0.5 / strings stops', async () => {
    for (const pages of [-1, 0.5]) {
      const { crm, requests } = clientOf((page) => ({ data: [{ id: `r${page}` }], pagination: { page, pages } }), {
        prefetch: 16,
      });
      for await (const _ of crm.contacts.list()) {
        /* drain */
      }
      expect(requests()).toBe(1);
    }
  });
});

describe('Retry-After', () => {
  const tooMany = (value: string) => reply.jsonError(429, 'slow down', { 'retry-after': value });
  for (const value of ['-1', '+5', '2 3', '1.5.2']) {
    test(`R1 Retry-After: ${JSON.stringify(value)} (not seconds, not an HTTP date) is ignored: the usual backoff applies, not a wait of 0`, async () => {
      fault().script('GET', OPP_PATH, tooMany(value), reply.ok(OPPORTUNITY));
      await clientFor(fault()).opportunities.get(OPP_ID);
      const seen = fault().received('GET', OPP_PATH);
      // The usual backoff is >= 150 ms (0.3 s jittered to half at least).
      expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(100);
    });
  }

  test('R2 Retry-After: -1 on the error: retryAfterMs should be undefined, not 0', async () => {
    fault().otherwise('GET', OPP_PATH, tooMany('-1'));
    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmRateLimitError);
    expect((error as CrmRateLimitError).retryAfterMs).toBeUndefined();
  });
});

describe('generated validators vs zod', () => {
  const fields = [
    'id',
    'name',
    '__proto__',
    'constructor',
    'toString',
    'email',
    'amount',
    'page',
    'pages',
    'total',
    'limit',
    'data',
    'success',
    'pagination',
    'firstName',
    'status',
  ];
  const leaf = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(''));
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...fields), tie('v'), { maxKeys: 5 }),
    ),
  })).v;
  const envelope = fc
    .record(
      {
        success: fc.oneof(fc.constant(true), value),
        data: fc.oneof(value, fc.array(value, { maxLength: 3 })),
        pagination: value,
      },
      { requiredKeys: ['success'] },
    )
    .map((o) => JSON.parse(JSON.stringify(o)));

  test('V1 never: generated says valid while zod refuses (every endpoint)', () => {
    fc.assert(
      fc.property(envelope, fc.constantFrom(...Object.values(endpoints)), (json, endpoint) => {
        const gen = envelopeValidators[endpoint.key]?.(json);
        const zod = endpoint.envelope.safeParse(json, parseContext).success;
        if (gen) expect(zod, JSON.stringify(json)).toBe(true);
        const rec = recordValidators[endpoint.key];
        if (rec?.(json)) expect(endpoint.data.safeParse(json, parseContext).success, JSON.stringify(json)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
