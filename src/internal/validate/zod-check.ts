import type { CrmValidationIssue } from '../../core/errors';
import type { Endpoint } from '../endpoint/define';
import { issuesOf } from '../endpoint/issues';
import { parseContext } from '../endpoint/parse-context';

export type Checked =
  | { readonly success: true; readonly data: unknown }
  | { readonly success: false; readonly issues: CrmValidationIssue[] };

/** The whole body by the endpoint's zod schema. */
export function zodCheck(endpoint: Endpoint, json: unknown): Checked {
  const result = endpoint.envelope.safeParse(json, parseContext);
  return result.success ? result : { success: false, issues: issuesOf(result.error) };
}
