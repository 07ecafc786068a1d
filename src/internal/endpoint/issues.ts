import type * as z from 'zod/mini';
import type { CrmValidationIssue } from '../../core/errors';
import { nearest } from './suggest';

/** Why `tenantId` is refused wherever a caller could set it. */
export const NOT_THE_TENANT = 'Not accepted: the client supplies the tenant';

/**
 * zod's issues (a ZodError's, or what a schema's `~standard.validate()` gives) as the SDK reports them; `skip` drops leading path segments (`body`, `query`).
 * Given the `options` an object takes, an unknown one is named with the nearest of them, as the
 * CLI names a misspelt flag.
 */
export function issuesOf(
  error: { readonly issues: readonly z.core.$ZodIssue[] },
  skip = 0,
  options?: readonly string[],
): CrmValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.slice(skip);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: [...path, key].join('.'),
        path: [...path, key],
        message: key === 'tenantId' ? NOT_THE_TENANT : options ? unknownOption(String(key), options) : 'Unknown field',
      }));
    }
    return [{ field: path.map(String).join('.'), path, message: issue.message }];
  });
}

function unknownOption(given: string, options: readonly string[]): string {
  const near = nearest(given, options);
  return `Unknown option${near.length ? `; did you mean ${near.map((name) => `"${name}"`).join(' or ')}?` : ''}`;
}
