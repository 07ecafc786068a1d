import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { envelopeParsersSource } from '../scripts/envelope-parsers';
import { envelopeParsers, INVALID } from '../src/core/envelope-parsers.generated';
import { endpoints } from '../src/endpoints';
import { generateFakeData } from '../src/testing/index';

const rows = Object.entries(endpoints).map(([name, endpoint]) => ({
  name,
  endpoint,
  parse: envelopeParsers[`${endpoint.method} ${endpoint.path}`],
}));

test('the generated parsers are what zod compiler writes from the endpoint table today (else: npm run generate)', async () => {
  const committed = await readFile(new URL('../src/core/envelope-parsers.generated.ts', import.meta.url), 'utf8');

  expect(committed).toBe(envelopeParsersSource());
});

test('every endpoint has a generated parser', () => {
  expect(rows.filter(({ parse }) => !parse).map(({ name }) => name)).toEqual([]);
});

describe('a generated parser agrees with zod interpreter', () => {
  const seed = generateFakeData({ seed: 3, accounts: 5, contacts: 5, opportunities: 5, activities: 5 });
  /** Realistic records of each endpoint's data, from the fake's generator; any object where it has none. */
  const recordsOf = (name: string): readonly object[] => {
    if (/Opportunit/.test(name)) return seed.opportunities ?? [];
    if (/Activit/.test(name)) return seed.activities ?? [];
    if (name === 'createAccount') return seed.accounts ?? [];
    if (/Contact/.test(name)) return seed.contacts ?? [];
    return [{ id: 'x', anything: [1, { nested: true }] }];
  };

  test.each(rows.map((r) => r.name))('it accepts the realistic records of %s, as the interpreter does', (name) => {
    const row = rows.find((r) => r.name === name);
    const records = recordsOf(name);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const body = row?.endpoint.list
        ? { success: true, data: [record, record], pagination: { page: 1, limit: 2, total: 2, pages: 1 } }
        : { success: true, data: record, requestId: 'r1' };
      const fast = row?.parse?.(body);

      expect(fast).not.toBe(INVALID);
      expect(fast).toEqual(row?.endpoint.envelope.safeParse(body).data);
    }
  });

  /** Values of any JSON type, and the shapes fields usually take. */
  const fieldValue = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(undefined, null, '', 'closed_won', 'active', '2026-01-01T00:00:00Z', '2026-13-01', 12.5, -1),
  );

  test.each(rows.map((r) => r.name))(
    'for realistic bodies of %s with arbitrary changes, it returns what the interpreter returns, or hands over',
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
          const fast = row?.parse?.(value);
          const slow = envelope?.safeParse(value);
          if (fast === INVALID) expect(slow?.success).toBe(false);
          else expect({ success: true, data: fast }).toEqual({ success: slow?.success, data: slow?.data });
          if (fast !== INVALID) accepted += 1;
        }),
        { numRuns: 300, seed: 5 },
      );
      // Both sides were exercised: bodies it parsed itself, and bodies it handed over.
      expect(accepted).toBeGreaterThan(30);
      expect(accepted).toBeLessThan(300);
    },
  );
});
