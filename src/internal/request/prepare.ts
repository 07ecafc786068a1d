import { CrmValidationError } from '../../core/errors';
import type { ApiKeyProvider } from '../../options';
import type { PreparedRequest } from '../call/prepared';
import type { CallSettings } from '../call/settings';
import { check } from '../endpoint/check';
import type { Endpoint } from '../endpoint/define';
import { issuesOf } from '../endpoint/issues';
import { optionSchemas } from './settings';

/** Who a call is made as: its scope's part of what is sent. */
export interface Sender {
  /** The base URL, without a trailing slash. */
  readonly base: string;
  readonly tenantId: string | undefined;
  /** The `apiKey` function that looks the key up, when one gives the key. */
  readonly keyFrom: ApiKeyProvider | undefined;
}

/**
 * The call, checked and built: what every attempt sends. Synchronous, so that bad input throws
 * `CrmValidationError` in the caller's own stack, before anything is sent: the input checked by
 * the endpoint's schemas, the path filled, the tenant placed, the query string, the body.
 */
export function prepare(
  endpoint: Endpoint,
  input: unknown,
  settings: CallSettings,
  headers: Readonly<Record<string, string>>,
  sender: Sender,
): PreparedRequest {
  const parsed = endpoint.parseInput(input);
  if (!parsed.success) throw new CrmValidationError(issuesOf(parsed.error, 1));
  const { path, query, body } = parsed.data;
  const { tenantId } = sender;
  const url = path ? endpoint.fill(path) : endpoint.path;
  const payload = endpoint.tenantIn === 'body' ? { tenantId, ...(body as object) } : body;
  // Redirects are followed only within the origin (redirects.ts), so no credential leaves it.
  const init: { method: string; headers: Readonly<Record<string, string>>; redirect: 'manual'; body?: string } =
    payload === undefined
      ? { method: endpoint.method, headers, redirect: 'manual' }
      : {
          method: endpoint.method,
          headers: { ...headers, 'content-type': 'application/json' },
          redirect: 'manual',
          body: JSON.stringify(payload),
        };
  const search = queryString(
    query as Record<string, unknown> | undefined,
    endpoint.tenantIn === 'query' ? tenantId : undefined,
  );
  return {
    endpoint,
    href: `${sender.base}/${url}${search}`,
    init,
    where: `${endpoint.method} /${url}`,
    tenantId,
    settings,
    deadline: settings.totalTimeout === undefined ? undefined : Date.now() + settings.totalTimeout,
    keyFrom: endpoint.auth === 'apiKey' ? sender.keyFrom : undefined,
  };
}

/**
 * The call with the key its `apiKey` function returned, held to the rules of a configured key.
 * Throws a `CrmValidationError` that does not show the key.
 */
export function withKey(request: PreparedRequest, key: unknown): { request: PreparedRequest; key: string } {
  const { apiKey } = check(optionSchemas().apiKey, { apiKey: key }, 'The apiKey function returned an unusable key');
  const init = { ...request.init, headers: { ...request.init.headers, 'x-api-key': apiKey } };
  return { request: { ...request, init, keyFrom: undefined }, key: apiKey };
}

/** `?tenantId=t&a=1&b=2` from the tenant and the defined values, percent-encoded; empty when there are none. */
function queryString(params: Record<string, unknown> | undefined, tenantId: string | undefined): string {
  let text = tenantId === undefined ? '' : `?tenantId=${encodeURIComponent(tenantId)}`;
  // Concatenated, not URLSearchParams: PERFORMANCE.md, "Small things on every call".
  for (const name in params) {
    const value = params[name];
    if (value !== undefined)
      text += `${text ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
  }
  return text;
}
