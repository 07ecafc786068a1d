import { CrmValidationError, type CrmValidationIssue } from '../../core/errors';
import type { PreparedRequest } from '../call/prepared';
import { NOT_THE_TENANT } from '../endpoint/issues';

/** A plain object: what `extraQuery`, `extraBody` and `crm.request()`'s `query` must be. Not a Proxy that throws. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  try {
    return (
      typeof value === 'object' && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value))
    );
  } catch {
    return false;
  }
}

/** What a value that `JSON.stringify` cannot send becomes. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/**
 * `value` as the JSON a request sends, read once: its getters, its `toJSON` and a Proxy's traps
 * run here and never again, so what is checked is what is sent. `NOT_JSON` when it cannot be sent
 * (a function, a symbol, a BigInt, a cycle, a `toJSON` that throws).
 */
export function jsonOf(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? NOT_JSON : JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

const issue = (at: string, message: string, name?: string): CrmValidationIssue =>
  name === undefined ? { field: at, path: [at], message } : { field: `${at}.${name}`, path: [at, name], message };

/**
 * Whether a server may read `name` as `tenantId`: some read names in any case or form (`TenantId`,
 * full-width letters), and some read `tenantId[]` or `tenantId[0]` as `tenantId`.
 */
const namesTenant = (name: string) => name.replace(/\[.*$/s, '').normalize('NFKC').toLowerCase() === 'tenantid';

/** Whether a string can be percent-encoded: not when it holds a lone UTF-16 surrogate. */
function encodable(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** A query parameter's value as sent (a Date as its ISO string); undefined when no parameter can carry it. */
function parameterText(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  if (!/^(string|number|boolean|bigint)$/.test(typeof value)) return undefined;
  const text = String(value);
  return encodable(text) ? text : undefined;
}

/** The body fields of `fields` a server may read as `tenantId`, as issues. */
export const tenantIssues = (fields: object, at: string): CrmValidationIssue[] =>
  Object.keys(fields)
    .filter(namesTenant)
    .map((name) => issue(at, NOT_THE_TENANT, name));

/**
 * Query parameters the SDK does not describe (`extraQuery`, `crm.request()`'s `query`), read once
 * into `[name, text]` pairs (an array's values each a pair; null and undefined left out), and
 * what is wrong with them: not a plain object, a name a server may read as `tenantId`, a value no
 * parameter can carry.
 */
export function queryOf(
  value: unknown,
  at: string,
): { pairs: [string, string][]; fields: Record<string, unknown>; issues: CrmValidationIssue[] } {
  const pairs: [string, string][] = [];
  const issues: CrmValidationIssue[] = [];
  let entries: [string, unknown][];
  try {
    if (!isPlainObject(value)) return { pairs, fields: {}, issues: [issue(at, 'Must be a plain object')] };
    entries = Object.entries(value).map(([name, given]) => [name, Array.isArray(given) ? [...given] : given]);
  } catch {
    return { pairs, fields: {}, issues: [issue(at, 'Could not be read')] };
  }
  for (const [name, given] of entries) {
    if (namesTenant(name)) {
      issues.push(issue(at, NOT_THE_TENANT, name));
      continue;
    }
    const texts = (Array.isArray(given) ? given : [given]).filter((each) => each != null).map(parameterText);
    if (!encodable(name) || texts.includes(undefined)) {
      issues.push(
        issue(at, 'Must be a string, number, boolean or valid Date, or an array of them, in well-formed Unicode', name),
      );
    } else for (const text of texts) pairs.push([name, text as string]);
  }
  return { pairs, fields: Object.fromEntries(entries), issues };
}

/**
 * The call with its `extraQuery` and `extraBody` added, each read once, over the call's own
 * parameters and fields of the same names. Throws `CrmValidationError`, so nothing is sent.
 */
export function withExtras(request: PreparedRequest): PreparedRequest {
  const { extraQuery, extraBody } = request.settings;
  let { init } = request;
  const query = extraQuery ? queryOf(extraQuery, 'extraQuery') : undefined;
  const issues = [...(query?.issues ?? [])];
  const fields = extraBody && jsonOf(extraBody);
  if (extraBody) {
    const sent: unknown = init.body === undefined ? {} : JSON.parse(init.body);
    if (init.method === 'GET') issues.push(issue('extraBody', 'Not accepted: a GET request sends no body'));
    else if (!isPlainObject(extraBody) || !isPlainObject(fields)) {
      issues.push(issue('extraBody', 'Must be a plain object that JSON can send'));
    } else if (!isPlainObject(sent)) issues.push(issue('extraBody', 'Not accepted: the body is not an object'));
    else {
      issues.push(...tenantIssues(fields, 'extraBody'));
      init = {
        ...init,
        body: JSON.stringify({ ...sent, ...fields }),
        headers: { ...init.headers, 'content-type': 'application/json' },
      };
    }
  }
  if (issues.length > 0) throw new CrmValidationError(issues, 'Invalid request options');
  return { ...request, init, href: query ? withQuery(request.href, query.pairs) : request.href };
}

/** `href` with `pairs` in place of its own parameters of the same names, percent-encoded. */
function withQuery(href: string, pairs: readonly [string, string][]): string {
  const at = href.indexOf('?');
  const path = at < 0 ? href : href.slice(0, at);
  const names = new Set(pairs.map(([name]) => name));
  const kept = (at < 0 ? [] : href.slice(at + 1).split('&')).filter(
    (pair) => !names.has(decodeURIComponent(pair.split('=')[0] as string)),
  );
  for (const [name, text] of pairs) kept.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`);
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}
