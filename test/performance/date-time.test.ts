import { expect, test } from 'vitest';
import * as zod from 'zod';
import * as z from 'zod/mini';
import * as core from 'zod/v4/core';
import { DATE_TIME, DateTimeInput } from '../../src/schemas/common';

const ERROR = 'Expected a valid Date or an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z';
/** What the SDK wrote before: zod's date-time schema, built from its core. */
const zods = z.pipe(
  z.transform((value: Date | string) =>
    value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value,
  ),
  core._isoDateTime(core.$ZodISODateTime, { offset: true, error: ERROR }),
);
const outcome = (result: { success: boolean; data?: unknown; error?: { issues: readonly core.$ZodIssue[] } }) =>
  result.success
    ? result.data
    : result.error?.issues.map(({ inst: _inst, ...issue }: core.$ZodIssue & { inst?: unknown }) => issue);

test('the date-time pattern is the one z.iso.datetime({ offset: true }) builds', () => {
  expect(DATE_TIME.source).toBe(
    String(core._isoDateTime(core.$ZodISODateTime, { offset: true })._zod.def.pattern?.source),
  );
});

test('a date-time input is checked as zod checked it: the same values, issues and messages, the same JSON Schema', () => {
  const inputs = [
    '2026-01-31T09:00:00Z',
    '2026-01-31T10:00:00+01:00',
    '2026-01-31T10:00:00.123-05:30',
    '2024-02-29T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-31T09:00:00',
    '2026-01-31',
    'yesterday',
    '',
    new Date('2026-01-31T09:00:00Z'),
    new Date(Number.NaN),
    new Date('+010000-01-01T00:00:00Z'),
    42,
    null,
    undefined,
  ];
  for (const input of inputs) {
    expect(outcome(DateTimeInput.safeParse(input as never))).toEqual(outcome(zods.safeParse(input as never)));
  }
  for (const io of ['input', 'output'] as const) {
    const schemaOf = (schema: unknown) => zod.toJSONSchema(schema as zod.ZodType, { io, unrepresentable: 'any' });
    expect(schemaOf(DateTimeInput)).toEqual(schemaOf(zods));
  }
});
