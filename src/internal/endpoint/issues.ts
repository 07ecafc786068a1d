import type * as z from 'zod/mini';
import type { CrmValidationIssue } from '../../core/errors';

/** Why `tenantId` is refused wherever a caller could set it. */
export const NOT_THE_TENANT = 'Not accepted: the client supplies the tenant';

/** zod's issues as the SDK reports them; `skip` drops leading path segments (`body`, `query`). */
export function issuesOf(error: z.core.$ZodError, skip = 0): CrmValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.slice(skip);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: [...path, key].join('.'),
        path: [...path, key],
        message: key === 'tenantId' ? NOT_THE_TENANT : 'Unknown field',
      }));
    }
    return [{ field: path.map(String).join('.'), path, message: issue.message }];
  });
}
