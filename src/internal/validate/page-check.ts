import type { Endpoint } from '../endpoint/define';
import { issuesOf } from '../endpoint/issues';
import { parseContext } from '../endpoint/parse-context';
import { type Checked, zodCheck } from './zod-check';

/** At most this many bad records are named in an error: the rest of the page is not parsed. */
const BAD_RECORDS_NAMED = 10;

/**
 * A page that its generated validator refused, checked record by record: zod parses the frame
 * and only the records that the record's validator refuses, so that one bad record in a page of
 * a million costs about what a good page does, rather than a parse of the whole page
 * (PERFORMANCE.md, "Generated response validators"). The result is what zod would return; the
 * issues are those of the frame and of the first bad records.
 */
export function checkPage(endpoint: Endpoint, json: unknown, validRecord: (record: unknown) => boolean): Checked {
  const records = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(records)) return zodCheck(endpoint, json);
  const frame = endpoint.envelope.safeParse({ ...(json as object), data: [] }, parseContext);
  const issues = frame.success ? [] : issuesOf(frame.error);
  let parsed: unknown[] | undefined;
  let bad = 0;
  for (let i = 0; i < records.length && bad < BAD_RECORDS_NAMED; i++) {
    if (validRecord(records[i])) continue;
    const record = endpoint.data.safeParse(records[i], parseContext);
    if (record.success) {
      // Accepted by zod all the same (a key zod does not keep): its copy is the record.
      parsed ??= records.slice();
      parsed[i] = record.data;
      continue;
    }
    bad += 1;
    for (const { path, message } of issuesOf(record.error)) {
      const at = ['data', i, ...path];
      issues.push({ field: at.join('.'), path: at, message });
    }
  }
  if (issues.length > 0 || !frame.success) return { success: false, issues };
  return { success: true, data: { ...(frame.data as object), data: parsed ?? records } };
}
