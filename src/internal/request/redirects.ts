import { AttemptFailure, type Received } from '../call/failure';
import type { Target } from './attempt';

/** The statuses fetch itself would follow. */
const FOLLOWED = new Set([301, 302, 303, 307, 308]);
/** fetch's own limit. */
export const MAX_HOPS = 20;

/**
 * Where a redirect leads, when it is one to follow: only within the origin the call was sent to.
 *
 * Requests go out with `redirect: 'manual'` because fetch, following a redirect to another
 * origin, drops `Authorization` but keeps `x-api-key` and `x-tenant-id`: a server (or anything
 * that can answer for it) could send the API key anywhere. A redirect that is not followed comes
 * back as the answer it is, and the request path reports it as a `CrmApiError` with its status.
 *
 * Each hop is an attempt of its own (logged, traced), and not a retry.
 */
export function redirectOf({ response }: Received, from: Target, origin: string): Target | undefined {
  if (response.type === 'opaqueredirect') {
    // Browsers hide a manual redirect's Location, so there is no telling whether it stays on the origin.
    const cause = new Error(
      'a redirect that this runtime does not let the SDK read was not followed: set baseUrl to its target',
    );
    throw new AttemptFailure({ kind: 'network', cause });
  }
  const location = response.headers.get('location');
  const target = location !== null && FOLLOWED.has(response.status) ? urlOf(location, from.href) : undefined;
  if (!target || target.origin !== origin) return undefined;
  return { href: target.href, init: becomesGet(response.status, from.init.method) ? asGet(from.init) : from.init };
}

/** fetch's rule: a 303 is followed with a GET (unless HEAD), and so is a 301 or 302 answering a POST. */
const becomesGet = (status: number, method = 'GET'): boolean =>
  status === 303 ? method !== 'HEAD' && method !== 'GET' : status <= 302 && method === 'POST';

/** A Location against the URL it answered, or undefined when it is not a URL. */
function urlOf(location: string, base: string): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

function asGet({ body: _body, headers, ...init }: Target['init']): Target['init'] {
  const { 'content-type': _type, ...rest } = headers;
  return { ...init, method: 'GET', headers: rest };
}

/** Why an answer that failed the call is a redirect that was not followed; undefined when it is not one. */
export function unfollowedNote({ status, headers }: Response, baseUrl: string): string | undefined {
  const location = headers.get('location');
  if (status < 300 || status >= 400 || location === null) return undefined;
  const base = new URL(baseUrl);
  const target = urlOf(location, baseUrl);
  if (!target) return 'redirect to an invalid Location not followed';
  // The query is left out: a redirect's query can carry tokens of its own.
  const where = `redirect to ${target.origin}${target.pathname} not followed`;
  return target.origin === base.origin
    ? where
    : `${where}: the SDK sends credentials only to ${base.origin} (if the API has moved, set baseUrl)`;
}
