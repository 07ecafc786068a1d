import * as z from 'zod/mini';

// z.refine() and z.custom() bring zod's custom schema into every app's bundle (0.17 KiB); the
// exported schemas use z.superRefine() already, so the SDK's own checks are written with it
// (PERFORMANCE.md, "zod features left out"; test/performance/refinement.test.ts holds them equal).

/**
 * What `z.refine(ok, { error: message })` checks: an issue of code `custom` with `message` when
 * `ok` is false of the value. `abort`: no check of the value runs after a failed one, as with
 * `z.custom()`.
 */
export function refinement<T>(ok: (value: T) => boolean, message: string, abort = false): z.core.$ZodCheck<T> {
  return z.superRefine<T>((value, ctx) => {
    if (!ok(value)) ctx.addIssue({ code: 'custom', message, input: value, path: [], continue: !abort });
  });
}

/** What `z.custom<T>(ok, { error: message })` accepts: any value that `ok` is true of, typed `T`. */
export const valueThat = <T>(ok: (value: unknown) => boolean, message: string): z.ZodMiniType<T, T> =>
  (z.unknown() as z.ZodMiniType as z.ZodMiniType<T, T>).check(refinement(ok, message, true));
