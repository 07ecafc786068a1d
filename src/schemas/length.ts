import * as z from 'zod/mini';
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

/**
 * What `z.int()` checks, as a check of `z.number()`: a whole number in the safe range, with zod's
 * issues (`Expected int, received number`; too big or small for `int` past the safe range) and its
 * JSON Schema (`integer`: the check is zod's `number_format` of `safeint`). z.int() brings zod's
 * number formats and their table into the bundle (0.18 KiB net of this check): the SDK needs only this one.
 */
function safeInt(): core.$ZodCheck<number> {
  const inst = new core.$ZodCheck({ check: 'number_format', format: 'safeint' } as core.$ZodCheckDef);
  const note = 'Integers must be within the safe integer range.';
  const range = { note, inst, origin: 'int', inclusive: true, continue: true } as const;
  inst._zod.check = (payload) => {
    const input = payload.value as number;
    if (!Number.isInteger(input)) {
      payload.issues.push({ expected: 'int', format: 'safeint', code: 'invalid_type', continue: false, input, inst });
    } else if (input > Number.MAX_SAFE_INTEGER) {
      payload.issues.push({ input, code: 'too_big', maximum: Number.MAX_SAFE_INTEGER, ...range });
    } else if (input < Number.MIN_SAFE_INTEGER) {
      payload.issues.push({ input, code: 'too_small', minimum: Number.MIN_SAFE_INTEGER, ...range });
    }
  };
  return inst;
}

/** What `z.int().check(...checks)` is: a whole number in the safe range (safeInt()), then `checks`. */
export const int = (...checks: core.$ZodCheck<number>[]): z.ZodMiniNumber<number> =>
  z.number().check(safeInt(), ...checks);
