import { expect, test } from 'vitest';
import * as zod from 'zod';
import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';
import { safeInt } from '../../src/schemas/length';
import { messageOf } from '../../src/schemas/messages';

/** An outcome without the issue's `inst` (the check that raised it, which differs by construction). */
const outcome = (result: { success: boolean; error?: { issues: readonly core.$ZodIssue[] } }) =>
  result.success
    ? result
    : result.error?.issues.map(({ inst: _inst, ...issue }: core.$ZodIssue & { inst?: unknown }) => issue);

test.each([
  ['alone', z.int(), z.number().check(safeInt())],
  ['1 or more', z.int().check(z.gte(1)), z.number().check(safeInt(), z.gte(1))],
  ['1 to 200', z.int().check(z.gte(1), z.lte(200)), z.number().check(safeInt(), z.gte(1), z.lte(200))],
  ['optional', z.optional(z.int().check(z.gte(0))), z.optional(z.number().check(safeInt(), z.gte(0)))],
])('safeInt() checks what z.int() checks (%s): the same issues and messages, the same JSON Schema', (_, int, ours) => {
  const inputs = [
    1,
    0,
    -0,
    -1,
    1.5,
    200,
    201,
    2 ** 53 - 1,
    2 ** 53,
    1e20,
    -1e20,
    Number.NaN,
    Infinity,
    '3',
    null,
    undefined,
    {},
    true,
  ];
  for (const input of inputs) {
    expect(outcome(ours.safeParse(input, { error: messageOf }))).toEqual(
      outcome(int.safeParse(input, { error: messageOf })),
    );
  }
  for (const io of ['input', 'output'] as const) {
    const schemaOf = (schema: unknown) => zod.toJSONSchema(schema as zod.ZodType, { io, unrepresentable: 'any' });
    expect(schemaOf(ours)).toEqual(schemaOf(int));
  }
});

test('a number checked by safeInt() is an integer in JSON Schema, as the CLI and the OpenAPI document say it', () => {
  expect(zod.toJSONSchema(z.number().check(safeInt()) as unknown as zod.ZodType)).toMatchObject({ type: 'integer' });
});
