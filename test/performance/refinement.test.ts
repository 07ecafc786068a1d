import { expect, test } from 'vitest';
import * as zod from 'zod';
import * as z from 'zod/mini';
import type * as core from 'zod/v4/core';
import { refinement, valueThat } from '../../src/internal/endpoint/refinement';
import { messageOf } from '../../src/schemas/messages';

// Guards "zod features left out" (PERFORMANCE.md): the SDK's checks are written with z.superRefine(),
// not z.refine() and z.custom(), and must accept, refuse and say exactly what those would.

/** An outcome without the issue's `inst` (the check that raised it, which differs by construction). */
const outcome = (result: { success: boolean; data?: unknown; error?: { issues: readonly core.$ZodIssue[] } }) =>
  result.success
    ? result
    : result.error?.issues.map(({ inst: _inst, ...issue }: core.$ZodIssue & { inst?: unknown }) => issue);

const inputs: unknown[] = [
  undefined,
  null,
  '',
  '.',
  '..',
  'opp_1',
  '\uD800',
  0,
  42,
  true,
  {},
  { mode: 'auto' },
  [],
  () => {},
  new AbortController().signal,
];

const same = (ours: z.ZodMiniType, theirs: z.ZodMiniType) => {
  for (const input of inputs) {
    for (const context of [undefined, { error: messageOf }]) {
      expect(outcome(ours.safeParse(input, context))).toEqual(outcome(theirs.safeParse(input, context)));
    }
  }
};

const notDots = (id: string) => id !== '.' && id !== '..';
const isFunction = (value: unknown) => typeof value === 'function';
const isObject = (value: unknown) => typeof value === 'object' && value !== null;

test('refinement() checks what z.refine() checks: the same verdicts, issues and messages, the checks after it run alike', () => {
  same(
    z.string().check(z.minLength(1), refinement(notDots, 'Must not be "." or ".."'), z.maxLength(1)),
    z.string().check(z.minLength(1), z.refine(notDots, { error: 'Must not be "." or ".."' }), z.maxLength(1)),
  );
});

test('refinement() gives the same JSON Schema as z.refine() (the CLI and the OpenAPI document read it)', () => {
  const ours = z.string().check(z.minLength(1), refinement(notDots, 'Must not be "." or ".."'));
  const theirs = z.string().check(z.minLength(1), z.refine(notDots, { error: 'Must not be "." or ".."' }));
  for (const io of ['input', 'output'] as const) {
    const schemaOf = (schema: unknown) => zod.toJSONSchema(schema as zod.ZodType, { io, unrepresentable: 'any' });
    expect(schemaOf(ours)).toEqual(schemaOf(theirs));
  }
});

test('valueThat() accepts and refuses what z.custom() does, alone, optional, and as an option among others', () => {
  same(valueThat(isFunction, 'Must be a function'), z.custom(isFunction, { error: 'Must be a function' }));
  same(
    z.optional(valueThat(isObject, 'Must be a plain object')),
    z.optional(z.custom(isObject, { error: 'Must be a plain object' })),
  );
  // A failed value stops the checks after it (z.custom() aborts), here those of the object around it.
  const around = (schema: z.ZodMiniType) =>
    z
      .strictObject({ fetch: z.optional(schema), timeout: z.optional(z.number()) })
      .check(z.refine(() => false, { error: 'the object was checked' }));
  for (const input of [{}, { fetch: 1 }, { fetch: isFunction }, { fetch: 1, timeout: 'x' }, { fetch: 1, other: 2 }]) {
    expect(outcome(around(valueThat(isFunction, 'Must be a function')).safeParse(input))).toEqual(
      outcome(around(z.custom(isFunction, { error: 'Must be a function' })).safeParse(input)),
    );
  }
});
