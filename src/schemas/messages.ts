import type * as core from 'zod/v4/core';

// The SDK's own English messages, instead of zod's locale (PERFORMANCE.md, "zod features left out"). The units of the issues
// its schemas can raise: their only formats are patterns (the date-time and email checks have
// messages of their own).
const UNITS: Record<string, string> = { string: 'characters' };

/** A value as zod's English messages quote it. */
const quote = (value: unknown) =>
  typeof value === 'bigint' ? `${value}n` : typeof value === 'string' ? `"${value}"` : `${value}`;

/** The kind of a value, in zod's words: `null`, `array`, `NaN`, `Date`, a class name, or its typeof. */
function kindOf(value: unknown): string {
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? 'number' : `${value}`;
  if (typeof value !== 'object') return typeof value;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const maker = (value as { constructor?: { name?: unknown } }).constructor;
  return Object.getPrototypeOf(value) !== Object.prototype && maker ? String(maker.name) : 'object';
}

/**
 * The message of an issue, as zod's English locale writes it for the issues the SDK's schemas
 * raise (test/performance/english-messages.test.ts holds the two together), but for two things:
 * a missing value reads "Required", and no message starts with zod's "Invalid input: " or
 * "Invalid option: ", which the error's own prefix would repeat (`Invalid input: phone: Invalid
 * input: ...`). Any other issue reads "Invalid value".
 */
export function messageOf(issue: core.$ZodRawIssue): string {
  // A value that is missing: its issue can only be that it is required.
  if (issue.input === undefined) return 'Required';
  switch (issue.code) {
    case 'invalid_type':
      return `Expected ${issue.expected === 'nan' ? 'NaN' : issue.expected}, received ${kindOf(issue.input)}`;
    case 'invalid_value':
      return `Expected ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map(quote).join('|')}`;
    case 'too_big':
    case 'too_small': {
      const big = issue.code === 'too_big';
      const bound = `${big ? '<' : '>'}${issue.inclusive ? '=' : ''}${big ? issue.maximum : issue.minimum}`;
      const unit = UNITS[issue.origin ?? ''];
      return `Too ${big ? 'big' : 'small'}: expected ${issue.origin ?? 'value'} to ${unit ? `have ${bound} ${unit}` : `be ${bound}`}`;
    }
    case 'invalid_format':
      return issue.format === 'regex'
        ? `Invalid string: must match pattern ${issue.pattern}`
        : `Invalid ${issue.format}`;
    case 'unrecognized_keys':
      return `Unrecognized key${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.map(quote).join(', ')}`;
    default:
      return 'Invalid value';
  }
}

/**
 * Gives every schema in `schemas`, and every schema and check within them, the SDK's messages
 * where it has none of its own: an exported schema's `safeParse()` then says what a call says
 * ("Expected number, received NaN", not "Invalid input"). Per schema, not `z.config()`, which
 * would change the messages of an application's own zod schemas too.
 */
export function inEnglish(...schemas: unknown[]): void {
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    const def = (value as { _zod?: { def: { error?: unknown } } })._zod?.def;
    if (def) def.error ??= messageOf;
    // A schema's parts (shape, element, options, inner type, pipe's ends, checks) are in its def.
    for (const part of Object.values(def ?? value)) walk(part);
  };
  for (const schema of schemas) walk(schema);
}
