import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { envelopeValidatorsSource, validatorSource } from '../../scripts/envelope-validators';
import { endpoints } from '../../src/endpoints';
import { parseContext } from '../../src/internal/endpoint/parse-context';
import { envelopeValidators, recordValidators } from '../../src/internal/validate/envelope-validators.generated';
import { generateFakeData } from '../../src/testing/index';

const rows = Object.entries(endpoints).map(([name, endpoint]) => ({
  name,
  endpoint,
  valid: envelopeValidators[`${endpoint.method} ${endpoint.path}`],
}));

test('the generated validators are what the generator writes from the endpoint table today (else: npm run generate)', async () => {
  const committed = await readFile(
    new URL('../../src/internal/validate/envelope-validators.generated.ts', import.meta.url),
    'utf8',
  );

  expect(committed).toBe(envelopeValidatorsSource());
});

test('every endpoint has a generated validator', () => {
  expect(rows.filter(({ valid }) => !valid).map(({ name }) => name)).toEqual([]);
});

describe('the generator refuses a schema whose parse would not return the body as it is', () => {
  test.each([
    ['an object that strips unknown keys', z.object({ id: z.string() })],
    ['a strict object', z.strictObject({ id: z.string() })],
    ['a string with a check', z.looseObject({ id: z.string().check(z.minLength(1)) })],
    [
      'a transform',
      z.looseObject({
        id: z.pipe(
          z.string(),
          z.transform((s: string) => s.trim()),
        ),
      }),
    ],
    ['a default', z.looseObject({ id: z._default(z.string(), 'x') })],
  ])('%s', (_kind, schema) => {
    expect(() => validatorSource(schema)).toThrow(/validator/);
  });
});

describe('a generated validator agrees with zod interpreter', () => {
  const seed = generateFakeData({ seed: 3, accounts: 5, contacts: 5, opportunities: 5, activities: 5 });
  /** Realistic records of each endpoint's data, from the fake's generator; any object where it has none. */
  const recordsOf = (name: string): readonly object[] => {
    if (/Opportunit/.test(name)) return seed.opportunities ?? [];
    if (/Activit/.test(name)) return seed.activities ?? [];
    if (name === 'createAccount') return seed.accounts ?? [];
    if (/Contact/.test(name)) return seed.contacts ?? [];
    return [{ id: 'x', anything: [1, { nested: true }] }];
  };

  test.each(rows.map((r) => r.name))('it accepts the realistic records of %s, which zod returns unchanged', (name) => {
    const row = rows.find((r) => r.name === name);
    const records = recordsOf(name);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const body = row?.endpoint.list
        ? { success: true, data: [record, record], pagination: { page: 1, limit: 2, total: 2, pages: 1 } }
        : { success: true, data: record, requestId: 'r1' };
      expect(row?.valid?.(body)).toBe(true);
      expect(row?.endpoint.envelope.safeParse(body).data).toEqual(body);
    }
  });

  /** Values of any JSON type, and the shapes fields usually take. */
  const fieldValue = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(
      undefined,
      null,
      '',
      'closed_won',
      'active',
      '2026-01-01T00:00:00Z',
      '2026-13-01',
      12.5,
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ),
  );

  test.each(rows.map((r) => r.name))(
    'for realistic bodies of %s with arbitrary changes, it accepts exactly what zod accepts, and zod returns those unchanged',
    (name) => {
      const row = rows.find((r) => r.name === name);
      const envelope = row?.endpoint.envelope;
      const records = recordsOf(name);
      const keys = [...new Set(records.flatMap((r) => Object.keys(r))), 'id', 'extra'];
      // A realistic record with up to three fields set to anything (or removed, as undefined).
      const record = fc
        .tuple(fc.constantFrom(...records), fc.dictionary(fc.constantFrom(...keys), fieldValue, { maxKeys: 3 }))
        .map(([base, changes]) => ({ ...base, ...changes }));
      const body = fc.record(
        {
          success: fc.constantFrom<unknown>(true, true, true, false, 'true'),
          data: row?.endpoint.list ? fc.array(record, { maxLength: 3 }) : record,
          pagination: fc.oneof(
            fc.constant({ page: 1, limit: 3, total: 3, pages: 1 }),
            fc.dictionary(fc.constantFrom('page', 'limit', 'total', 'pages', 'next'), fieldValue),
          ),
          requestId: fc.string(),
        },
        { requiredKeys: ['success', 'data'] },
      );

      let accepted = 0;
      fc.assert(
        fc.property(body, (value) => {
          const valid = row?.valid?.(value);
          const slow = envelope?.safeParse(value);
          expect(valid).toBe(slow?.success);
          if (valid) {
            expect(slow?.data).toEqual(value);
            accepted += 1;
          }
        }),
        { numRuns: 300, seed: 5 },
      );
      // Both sides were exercised: bodies accepted, and bodies refused.
      expect(accepted).toBeGreaterThan(20);
      expect(accepted).toBeLessThan(300);
    },
  );
});

/** How many objects in `value` have an own `__proto__` key. */
const ownProtoKeys = (value: unknown): number =>
  typeof value !== 'object' || value === null
    ? 0
    : (Object.hasOwn(value, '__proto__') ? 1 : 0) +
      Object.values(value).reduce((sum: number, each) => sum + ownProtoKeys(each), 0);

describe('one parse, one result: hostile keys', () => {
  /** A record as JSON.parse makes it: `__proto__` and the like become own keys. */
  const hostileRecord = fc
    .array(
      fc.tuple(
        fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'subject'),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { maxLength: 4 },
    )
    .map((entries) =>
      JSON.parse(
        `{"id":"act_1",${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`.replace(
          ',}',
          '}',
        ),
      ),
    );

  test('the SDK returns what zod returns, whether the generated validator accepts a body or zod parses it', () => {
    const row = rows.find((r) => r.name === 'listActivities');
    fc.assert(
      fc.property(fc.array(hostileRecord, { maxLength: 3 }), (data) => {
        const body = JSON.parse(
          JSON.stringify({ success: true, data, pagination: { page: 1, limit: 3, total: 3, pages: 1 } }).replace(
            /"__proto__"/g,
            '"__proto__"',
          ),
        );
        const slow = row?.endpoint.envelope.safeParse(body);
        if (row?.valid?.(body)) {
          // What the SDK hands over is the body itself: zod must return the same.
          expect(slow?.success).toBe(true);
          expect(slow?.data).toEqual(body);
          // toEqual reads an own __proto__ key as the prototype: count them apart.
          expect(ownProtoKeys(slow?.data)).toBe(ownProtoKeys(body));
        }
      }),
      { numRuns: 300, seed: 9 },
    );
  });

  test('a record with an own __proto__ key is left to zod, which does not keep it', () => {
    const row = rows.find((r) => r.name === 'listActivities');
    const body = JSON.parse(
      '{"success":true,"data":[{"id":"act_1","__proto__":{"polluted":true}}],"pagination":{"page":1,"pages":1}}',
    );

    expect(row?.valid?.(body)).toBe(false);
    const parsed = row?.endpoint.envelope.safeParse(body);
    expect(parsed?.success).toBe(true);
    const [record] = (parsed?.data as { data: object[] } | undefined)?.data ?? [];
    expect(record && Object.hasOwn(record, '__proto__')).toBe(false);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
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

  test('a generated validator never says valid where zod refuses (every endpoint)', () => {
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
