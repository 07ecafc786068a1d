import type * as z from 'zod/mini';
import { CrmValidationError } from '../../core/errors';
import { issuesOf } from './issues';
import { parseContext } from './parse-context';

/**
 * `value` parsed by `schema`, or a `CrmValidationError` that names every offending field; an
 * unknown field of a strict object of options is named with the nearest option.
 */
export function check<S extends z.ZodMiniType>(schema: S, value: unknown, prefix: string): z.output<S> {
  let result: z.core.util.SafeParseResult<z.output<S>>;
  try {
    result = schema.safeParse(value, parseContext);
  } catch {
    // A getter or a Proxy that throws while zod reads the value.
    throw new CrmValidationError([{ field: '', path: [], message: 'Could not be read' }], prefix);
  }
  if (!result.success) {
    const shape = (schema._zod.def as { shape?: object }).shape;
    throw new CrmValidationError(issuesOf(result.error, 0, shape && Object.keys(shape)), prefix);
  }
  return result.data;
}
