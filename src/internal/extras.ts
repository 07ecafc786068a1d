import type { CrmValidationIssue } from '../core/errors';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/** A value a query parameter can carry: sent as its text (a Date as its ISO string); null and undefined are left out. */
const isParameter = (value: unknown) =>
  value == null || /^(string|number|boolean|bigint)$/.test(typeof value) || value instanceof Date;

/** A plain object: what `extraQuery`, `extraBody` and `crm.request()`'s `query` must be. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * What is wrong with fields the SDK does not describe (`extraQuery`, `extraBody`, `crm.request()`'s
 * `query` and `body`), named as `at.name`: `tenantId`, which the client supplies, and in a query,
 * a value no parameter can carry.
 */
export function extraIssues(
  fields: Record<string, unknown>,
  at: string,
  query: boolean,
  kit: Kit,
): CrmValidationIssue[] {
  const issues: CrmValidationIssue[] = [];
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    const message =
      name === 'tenantId'
        ? kit.NOT_THE_TENANT
        : query && !isParameter(value) && !(Array.isArray(value) && value.every(isParameter))
          ? 'Must be a string, number, boolean or Date, or an array of them'
          : undefined;
    if (message) issues.push({ field: `${at}.${name}`, path: [at, name], message });
  }
  return issues;
}

/** The issues of an `extraQuery` or `extraBody`: none when it is absent. */
const fieldIssues = (fields: unknown, at: string, query: boolean, kit: Kit): CrmValidationIssue[] =>
  fields === undefined
    ? []
    : isPlainObject(fields)
      ? extraIssues(fields, at, query, kit)
      : [{ field: at, path: [at], message: 'Must be a plain object' }];

/**
 * Checks a call's `extraQuery` and `extraBody` and adds them to what it sends, over the call's
 * own parameters and fields of the same names. Throws `CrmValidationError`, so nothing is sent.
 */
export function addExtras(call: PreparedCall, kit: Kit): void {
  const { extraQuery, extraBody } = call.settings;
  const { init } = call;
  const sent: unknown = init.body === undefined ? {} : JSON.parse(init.body);
  const issues = [
    ...fieldIssues(extraQuery, 'extraQuery', true, kit),
    ...fieldIssues(extraBody, 'extraBody', false, kit),
  ];
  if (extraBody && (init.method === 'GET' || !isPlainObject(sent))) {
    const message =
      init.method === 'GET' ? 'Not accepted: a GET request sends no body' : 'Not accepted: the body is not an object';
    issues.push({ field: 'extraBody', path: ['extraBody'], message });
  }
  if (issues.length > 0) throw new kit.CrmValidationError(issues, 'Invalid request options');
  if (extraQuery) call.href = withQuery(call.href, extraQuery);
  if (extraBody) {
    init.body = JSON.stringify({ ...(sent as object), ...extraBody });
    init.headers = { ...init.headers, 'content-type': 'application/json' };
  }
}

/** `href` with `extra`'s parameters in place of its own of the same names: each value percent-encoded, an array's repeated. */
function withQuery(href: string, extra: Readonly<Record<string, unknown>>): string {
  const at = href.indexOf('?');
  const path = at < 0 ? href : href.slice(0, at);
  const pairs = at < 0 ? [] : href.slice(at + 1).split('&');
  const kept = pairs.filter((pair) => !Object.hasOwn(extra, decodeURIComponent(pair.split('=')[0] as string)));
  for (const [name, given] of Object.entries(extra)) {
    for (const value of Array.isArray(given) ? given : [given]) {
      if (value == null) continue;
      const text = value instanceof Date ? value.toISOString() : String(value);
      kept.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
    }
  }
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}
