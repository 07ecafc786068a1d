import { expect, test } from 'vitest';
import * as zod from 'zod';
import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';
import { int } from '../../src/schemas/length';
import { messageOf } from '../../src/schemas/messages';

/** An outcome without the issue's `inst` (the check that raised it, which differs by construction). */
const outcome = (result: { success: boolean; error?: { issues: readonly core.$ZodIssue[] } }) =>
  result.success
    ? result
    : result.error?.issues.map(({ inst: _inst, ...issue }: core.$ZodIssue & { inst?: unknown }) => issue);

test.each([
  ['alone', z.int(), int()],
  ['1 or more', z.int().check(z.gte(1)), int(z.gte(1))],
  ['1 to 200', z.int().check(z.gte(1), z.lte(200)), int(z.gte(1), z.lte(200))],
  ['optional', z.optional(z.int().check(z.gte(0))), z.optional(int(z.gte(0)))],
])('int() checks what z.int() checks (%s): the same issues and messages, the same JSON Schema', (_, zods, ours) => {
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
      outcome(zods.safeParse(input, { error: messageOf })),
    );
  }
  for (const io of ['input', 'output'] as const) {
    const schemaOf = (schema: unknown) => zod.toJSONSchema(schema as zod.ZodType, { io, unrepresentable: 'any' });
    expect(schemaOf(ours)).toEqual(schemaOf(zods));
  }
});

test('a number checked by int() is an integer in JSON Schema, as the CLI and the OpenAPI document say it', () => {
  expect(zod.toJSONSchema(int() as unknown as zod.ZodType)).toMatchObject({ type: 'integer' });
});
