import { CrmValidationError, type CrmValidationIssue } from '../../core/errors';
import type { Endpoint } from '../endpoint/define';
import { isPlainObject, jsonOf, NOT_JSON, queryOf, tenantIssues } from './extras';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const PLACES = ['query', 'body', 'none'];
const KEYS = ['method', 'path', 'query', 'body', 'tenantIn'];

/** What is wrong with a path for `crm.request()`, if anything. */
function pathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.replace(/^\//, '')) return 'Required: a path such as integrations/v1/widgets';
  if (/^[a-z][\w+.-]*:|^\/?\/\/|\\/i.test(path)) {
    return 'Must be a path relative to baseUrl, such as integrations/v1/widgets, not a URL';
  }
  if (/[?#]/.test(path)) return 'Must not contain a query string or a fragment: pass the parameters as query';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is refused
  if (/[\x00-\x20\x7f]/.test(path)) return 'Must not contain spaces or control characters: percent-encode them';
  // URL parsing resolves `..` and `.`, percent-encoded or not, which would leave the base path.
  const dots = path.replace(/%2e/gi, '.');
  if (dots.includes('..') || /(^|\/)\.(\/|$)/.test(dots)) return 'Must not contain ".." or "." segments';
}

/** A request's fields, each read once, and what is wrong with it, field by field. */
function checked(request: unknown) {
  let fields: Partial<Record<string, unknown>>;
  let keys: string[];
  try {
    if (!isPlainObject(request)) return { issues: [issue('', 'Expected an object: { method, path }')] };
    keys = Object.keys(request);
    fields = Object.fromEntries(KEYS.map((key) => [key, request[key]]));
  } catch {
    return { issues: [issue('', 'Could not be read')] };
  }
  const { method, path, query, body, tenantIn = 'query' } = fields;
  // Read once, as JSON will send it: what is checked is what is sent.
  const json = body === undefined ? undefined : jsonOf(body);
  const object = typeof json === 'object' && json !== null && !Array.isArray(json);
  const parameters = query === undefined ? undefined : queryOf(query, 'query');
  const problems: [string, string | undefined][] = [
    ['method', METHODS.includes(method as string) ? undefined : `Expected one of ${METHODS.join('|')}`],
    ['path', pathProblem(path)],
    ['tenantIn', PLACES.includes(tenantIn as string) ? undefined : `Expected one of ${PLACES.join('|')}`],
    [
      'tenantIn',
      tenantIn === 'body' && method === 'GET' ? "Not accepted with GET, which sends no body: use 'query'" : undefined,
    ],
    ['body', json === NOT_JSON ? 'Must be a value JSON can send' : undefined],
    ['body', body !== undefined && method === 'GET' ? 'Not accepted: a GET request sends no body' : undefined],
    [
      'body',
      tenantIn === 'body' && body !== undefined && !object ? "Must be an object when tenantIn is 'body'" : undefined,
    ],
    ...keys.map((key): [string, string | undefined] => [key, KEYS.includes(key) ? undefined : 'Unknown field']),
  ];
  const issues = problems.flatMap(([field, message]) => (message ? [issue(field, message)] : []));
  issues.push(...(parameters?.issues ?? []), ...(object ? tenantIssues(json as object, 'body') : []));
  return { issues, method, path, query: parameters?.fields, body: json, tenantIn };
}

const issue = (field: string, message: string): CrmValidationIssue => ({
  field,
  path: field ? [field] : [],
  message,
});

/** The envelope of an endpoint the SDK does not describe: `success: true` and a `data`, of any kind. */
const envelope = {
  safeParse: (json: unknown) =>
    typeof json === 'object' && json !== null && (json as { success?: unknown }).success === true && 'data' in json
      ? { success: true, data: json }
      : { success: false, error: { issues: [{ code: 'custom', path: [], message: NOT_AN_ENVELOPE }] } },
};
const NOT_AN_ENVELOPE = 'Expected an envelope: { "success": true, "data": ... }';

/**
 * `crm.request()`'s call as an endpoint of its own, its body and its query, checked: the one
 * request path then serves it as it serves the described ones, and adds the query as it adds an
 * `extraQuery`. Throws `CrmValidationError`, so nothing is sent.
 */
export function adHocCall(request: unknown): {
  endpoint: Endpoint;
  body: unknown;
  query: Record<string, unknown> | undefined;
} {
  const { issues, method, path, query, body, tenantIn } = checked(request);
  if (issues.length > 0) throw new CrmValidationError(issues, 'Invalid request');
  const relative = (path as string).replace(/^\//, '');
  const endpoint = {
    sdkMethod: 'request',
    method,
    path: relative,
    tenantIn,
    auth: 'apiKey',
    envelope,
    // Not `METHOD path`, which would find a generated validator when the path is a described one's.
    key: `request ${method} ${relative}`,
    fill: () => relative,
    // Checked above: the request path takes the parts as they are.
    parseInput: (value: unknown) => ({ success: true, data: value }),
  } as unknown as Endpoint;
  return { endpoint, body, query };
}

/** The `extraQuery` of `crm.request()`'s call: its `query`, with the call's own `extraQuery` over it. */
export function adHocQuery(
  query: Record<string, unknown> | undefined,
  extraQuery: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (query && extraQuery !== undefined && !isPlainObject(extraQuery)) {
    throw new CrmValidationError([issue('extraQuery', 'Must be a plain object')], 'Invalid request options');
  }
  return query ? { ...query, ...extraQuery } : extraQuery;
}
