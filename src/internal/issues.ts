import type * as z from 'zod/mini';
import type { CrmValidationIssue } from '../core/errors';

/** zod's issues as the SDK reports them; `skip` drops leading path segments (`body`, `query`). */
export function issuesOf(error: z.core.$ZodError, skip = 0): CrmValidationIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.slice(skip);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: [...path, key].join('.'),
        path: [...path, key],
        message: key === 'tenantId' ? 'Not accepted: the client supplies the tenant' : 'Unknown field',
      }));
    }
    return [{ field: path.map(String).join('.'), path, message: issue.message }];
  });
}
