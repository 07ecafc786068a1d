import type { Received } from './attempt';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/** Sends one request and reads its answer (the request path's own fetch, with its logging). */
type Send = (href: string, init: RequestInit, call: PreparedCall) => Promise<Received>;

/** The statuses fetch itself would follow. */
const FOLLOWED = new Set([301, 302, 303, 307, 308]);
/** fetch's own limit. */
const MAX_HOPS = 20;

/**
 * Follows the redirects of an answer, but only within the origin the call was sent to.
 *
 * Requests go out with `redirect: 'manual'` because fetch, following a redirect to another
 * origin, drops `Authorization` but keeps `x-api-key` and `x-tenant-id`: a server (or anything
 * that can answer for it) could send the API key anywhere. A redirect that is not followed comes
 * back as the answer it is, and the request path reports it as a `CrmApiError` with its status.
 *
 * Loaded with ky, on demand: a redirect is an answer that is not a 2xx, so it takes the same path
 * as a retry.
 */
export async function followRedirects(
  first: Received,
  call: PreparedCall,
  signal: AbortSignal,
  send: Send,
  { AttemptFailure }: Kit,
): Promise<Received> {
  // Set up at the first redirect: this runs for every attempt that failed, and most are not redirects.
  let origin: string | undefined;
  let init: RequestInit | undefined;
  let received = first;
  let href = call.href;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const { response } = received;
    if (response.type === 'opaqueredirect') {
      // Browsers hide a manual redirect's Location, so there is no telling whether it stays on the origin.
      const cause = new Error(
        'the server answered with a redirect that this runtime does not let the SDK read, so it was not followed: set baseUrl to the address it redirects to',
      );
      throw new AttemptFailure({ kind: 'network', cause });
    }
    const location = response.headers.get('location');
    const target = location !== null && FOLLOWED.has(response.status) ? urlOf(location, href) : undefined;
    if (!target) return received;
    origin ??= new URL(call.href).origin;
    if (target.origin !== origin) return received;
    href = target.href;
    init ??= { ...call.init, signal };
    if (becomesGet(response.status, init.method)) init = asGet(init);
    received = await send(href, init, call);
  }
  return received;
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

function asGet({ body: _body, headers, ...init }: RequestInit): RequestInit {
  const { 'content-type': _type, ...rest } = headers as Record<string, string>;
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
