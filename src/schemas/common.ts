import type { LiteralUnion } from 'type-fest';
import * as z from 'zod';

/**
 * A date-time accepted in requests: a `Date` or an ISO 8601 string with a time zone
 * (`2026-01-31T09:00:00Z`, `2026-01-31T10:00:00+01:00`). Always sent as an ISO string.
 */
export const DateTimeInput = z
  // Years 0000 to 9999 only: toISOString() writes others as +010000-..., which no ISO parser here accepts.
  .union(
    [
      z.date().min(new Date('0000-01-01T00:00:00Z')).max(new Date('9999-12-31T23:59:59.999Z')),
      z.iso.datetime({ offset: true }),
    ],
    {
      error: 'Expected a valid Date or an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z',
    },
  )
  .transform((value) => (value instanceof Date ? value.toISOString() : value));

/** A non-empty string, the spec's "min length 1". */
export const NonEmptyString = z.string().min(1);

/** Optional and nullable: the spec never says which response fields may be missing or null. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

/**
 * An enum as read from a response: the documented values are typed, any other string is
 * accepted (a server may add values before the SDK knows them). Requests keep strict enums.
 */
export const openEnum = <const T extends readonly [string, ...string[]]>(_values: T) =>
  // The cast only widens the inferred type; the runtime check is a plain string check.
  z.string() as unknown as z.ZodType<LiteralUnion<T[number], string>, string>;

/** An object of a shape the spec does not show: any fields, none of them `any`. */
export const OpenObject = z.looseObject({});
