import type { Endpoint } from './endpoint';
import { issuesOf } from './issues';
import type { Checked } from './page-check';
import { parseContext } from './parse-context';

/** The whole body by the endpoint's zod schema. */
export function zodCheck(endpoint: Endpoint, json: unknown): Checked {
  const result = endpoint.envelope.safeParse(json, parseContext);
  return result.success ? result : { success: false, issues: issuesOf(result.error) };
}
