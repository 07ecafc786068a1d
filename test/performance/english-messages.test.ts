import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { endpoints } from '../../src/endpoints';
import * as sdk from '../../src/index';
import { parseContext } from '../../src/internal/endpoint/parse-context';
import { optionSchemas } from '../../src/internal/request/settings';

// The SDK writes its own English messages to keep zod's locale out of every app's bundle; they
// must read exactly as zod's English locale would write them.
const english = { error: z.locales.en().localeError };

type Schema = z.ZodMiniType;
type Def = {
  type: string;
  shape?: Record<string, Schema>;
  innerType?: Schema;
  element?: Schema;
  in?: Schema;
};

const schemas: [string, Schema][] = [
  ...Object.entries(sdk).flatMap(([name, value]): [string, Schema][] =>
    name.endsWith('Schema') ? [[name, value as Schema]] : [],
  ),
  ...Object.entries(endpoints).flatMap(([name, endpoint]): [string, Schema][] => [
    [`${name} input`, endpoint.input],
    [`${name} envelope`, endpoint.envelope],
  ]),
  ['client options', optionSchemas().client],
  ['request options', optionSchemas().request],
];

const odd: fc.Arbitrary<unknown> = fc.oneof(
  // Weighted, so that each run meets every kind of issue (the last test checks that it did).
  {
    weight: 6,
    arbitrary: fc.constantFrom<unknown>(
      undefined,
      null,
      '',
      'x',
      'x'.repeat(300),
      'x'.repeat(2001),
      'a@b.co',
      'not an email',
      'https://crm.example.com',
      'ftp://crm.example.com',
      '2027-01-31T09:00:00Z',
      '2027-02-30T09:00:00Z',
      'bad header\r\n',
      -1,
      0,
      1.5,
      17,
      2 ** 31,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      10n,
      true,
      new Date(Number.NaN),
      new Date(0),
      new Date('+010000-01-01T00:00:00Z'),
      Object.create(null),
      new Map(),
      () => 'a function',
      Symbol('s'),
    ),
  },
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -3, max: 20 }),
  fc.double(),
  fc.anything({ maxDepth: 1, withDate: true, withBigInt: true, withNullPrototype: true, withMap: true }),
);

/** Values shaped like what `schema` wants, with odd values anywhere, so every kind of issue comes up. */
function valueFor(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const def = schema._zod.def as Def;
  if (def.type === 'object' && def.shape && depth < 4) {
    const fields = Object.entries(def.shape).map(([key, field]) => [key, valueFor(field, depth + 1)] as const);
    const object = fc
      .tuple(
        fc.record(Object.fromEntries(fields), { requiredKeys: [] }),
        fc.dictionary(fc.constantFrom('extra', 'tenantId', 'timout'), odd, { maxKeys: 1 }),
      )
      .map(([known, extra]) => ({ ...known, ...extra }));
    return fc.oneof({ arbitrary: object, weight: 4 }, { arbitrary: odd, weight: 1 });
  }
  if (def.innerType) return fc.oneof(valueFor(def.innerType, depth), odd);
  if (def.element) return fc.oneof(fc.array(valueFor(def.element, depth + 1), { maxLength: 3 }), odd);
  if (def.in) return valueFor(def.in, depth);
  return odd;
}

/**
 * zod's English message as the SDK words it: "Required" for a missing value, and without zod's
 * "Invalid input: " and "Invalid option: " openings, which the error's prefix would repeat.
 */
function inOurWords(message: string, input: unknown): string {
  if (/^Invalid (input|option): expected/.test(message) && input === undefined) return 'Required';
  if (message === 'Invalid input') return 'Invalid value';
  const rest = message.replace(/^Invalid (input|option): /, '');
  return rest === message ? message : `${rest[0]?.toUpperCase()}${rest.slice(1)}`;
}

describe('validation messages', () => {
  const seen = new Set<string>();

  test.each(schemas)(
    'of %s read as zod’s English locale writes them, without its repeated opening',
    (_name, schema) => {
      fc.assert(
        fc.property(valueFor(schema), (value) => {
          const ours = schema.safeParse(value, parseContext);
          const zods = schema.safeParse(value, { ...english, reportInput: true });
          for (const issue of ours.error?.issues ?? []) {
            seen.add(issue.code);
            if (issue.code === 'invalid_format') seen.add(`format ${issue.format}`);
            if (issue.code === 'too_small' || issue.code === 'too_big') seen.add(`${issue.code} ${issue.origin}`);
          }
          expect(ours.error?.issues.map((issue) => issue.message)).toEqual(
            zods.error?.issues.map((issue) => inOurWords(issue.message, issue.input)),
          );
        }),
        { numRuns: 150 },
      );
    },
  );

  test('were compared on every kind of issue the schemas raise', () => {
    expect([...seen].sort()).toEqual(
      expect.arrayContaining([
        'custom',
        'format regex',
        'invalid_format',
        'invalid_type',
        'invalid_value',
        'too_big number',
        'too_big string',
        'too_small number',
        'too_small string',
        'unrecognized_keys',
      ]),
    );
  });

  test('say what was received, in zod’s words', () => {
    const Name = z.strictObject({ name: z.string() });
    const messages = (value: unknown) => Name.safeParse(value, parseContext).error?.issues.map((i) => i.message);

    expect(messages({ name: 5 })).toEqual(['Expected string, received number']);
    expect(messages({ name: Number.NaN })).toEqual(['Expected string, received NaN']);
    expect(messages({ name: new Date(0) })).toEqual(['Expected string, received Date']);
    expect(messages({})).toEqual(['Required']);
    expect(messages(null)).toEqual(['Expected object, received null']);
    expect(messages({ name: 'n', extra: 1, more: 2 })).toEqual(['Unrecognized keys: "extra", "more"']);
  });
});
