import * as z from 'zod/mini';
import * as core from 'zod/v4/core';
import { minLength } from './length';

/**
 * The pattern `z.iso.datetime({ offset: true })` builds, written out: zod's date-time schema and
 * the builder of its pattern stay out of the bundle (test/performance/date-time.test.ts holds the
 * two equal).
 */
export const DATE_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

/** Said of any value that is not a date-time, as zod's date-time schema said it. */
const notDateTime = () =>
  'Expected a valid Date or an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z';

/**
 * A date-time accepted in requests: a `Date` or an ISO 8601 string with a time zone
 * (`2026-01-31T09:00:00Z`, `2026-01-31T10:00:00+01:00`). Always sent as an ISO string.
 *
 * A valid Date becomes its ISO string first, then every value meets the one string check. So a
 * Date outside years 0000 to 9999, which toISOString() writes as +010000-..., fails it like any
 * bad string, and zod's union, date schema and date checks stay out of every app's bundle.
 */
export const DateTimeInput = z.pipe(
  z.transform((value: Date | string) =>
    value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value,
  ),
  // zod's own date-time check, as a check of z.string() rather than z.iso.datetime()'s schema
  // (PERFORMANCE.md, "zod features left out").
  z.string({ error: notDateTime }).check(
    new core.$ZodCheckStringFormat({
      check: 'string_format',
      format: 'datetime',
      pattern: DATE_TIME,
      offset: true,
      local: false,
      error: notDateTime,
    } as core.$ZodCheckStringFormatDef),
  ),
);

/** A non-empty string, the spec's "min length 1". */
export const NonEmptyString = z.string().check(minLength(1));

/** Optional and nullable: the spec never says which response fields may be missing or null. */
export const opt = z.nullish;

// The rules most fields have, each built once and shared by every field that has it: a zod schema
// never changes once built, and one per field was over 200 schemas built at import
// (PERFORMANCE.md, "Field rules built once").
/** An optional string of a request. */
export const OptionalString = z.optional(z.string());
/** An optional number of a request. */
export const OptionalNumber = z.optional(z.number());
/** An optional non-empty string of a request. */
export const OptionalNonEmptyString = z.optional(NonEmptyString);
/** An optional date-time of a request: a `Date` or an ISO 8601 string with a time zone. */
export const OptionalDateTime = z.optional(DateTimeInput);
/** A string of a response, which may be missing or null. */
export const NullishString = opt(z.string());
/** A number of a response, which may be missing or null. */
export const NullishNumber = opt(z.number());
/** A boolean of a response, which may be missing or null. */
export const NullishBoolean = opt(z.boolean());

/**
 * A response field's enum value: one of the documented values `T`, or any other string a newer
 * server may send. Editors still suggest the documented values.
 */
// type-fest's LiteralUnion, written out so that the declarations need no package beyond zod.
export type OpenEnumValue<T extends string> = T | (string & Record<never, never>);

/**
 * An enum as read from a response: the documented values are typed, any other string is
 * accepted (a server may add values before the SDK knows them). Requests keep strict enums.
 */
export const openEnum = <const T extends readonly [string, ...string[]]>(_values: T) =>
  // The cast only widens the inferred type; the runtime check is a plain string check.
  z.string() as unknown as z.ZodMiniType<OpenEnumValue<T[number]>, string>;

/**
 * A response record with the fields the SDK does not know yet: the record types name only the
 * spec's fields, so a typo such as `opportunity.amout` does not compile, while every field the
 * server sent stays on the object at run time. Assert to this type to read one of the others; it
 * is `unknown`, to be checked before use.
 *
 * @example
 * ```ts
 * const opportunity = await crm.opportunities.get('opp_123');
 * const { stage } = opportunity as WithUnknownFields<Opportunity>; // unknown
 * if (typeof stage === 'string') console.log(stage);
 * ```
 */
export type WithUnknownFields<T> = T & { readonly [field: string]: unknown };

/** An object of a shape the spec does not show: any fields, none of them `any`. */
export const OpenObject = z.looseObject({});
