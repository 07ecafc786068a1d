import * as core from 'zod/v4/core';

// zod runs its length checks on any value with a `length`, even after the type check failed: a
// bad value then gets a second, confusing issue ("expected unknown to be >=1"), and a `length`
// that cannot be compared (an object without a prototype) makes the check throw a TypeError.
// These are zod's own checks, run on strings only; zod/mini's z.minLength() cannot say so.
const isString = (payload: core.ParsePayload) => typeof payload.value === 'string';

/** At least `minimum` characters (code points), checked on strings only. */
export const minLength = (minimum: number) =>
  new core.$ZodCheckMinLength({ check: 'min_length', minimum, when: isString });

/** At most `maximum` characters (code points), checked on strings only. */
export const maxLength = (maximum: number) =>
  new core.$ZodCheckMaxLength({ check: 'max_length', maximum, when: isString });
