import ky, { isNetworkError } from 'ky';

/**
 * ky, as the HTTP exchange of every retry: one request, sent as ky sends it, through the client's
 * `fetch`. Only its documented options: no retries of its own, no timeout, no statuses thrown, so
 * that the loop, the attempt's timer and the retry decision stay the SDK's (src/internal/README.md).
 * Loaded on demand, at a call's first retry: ky builds a `Request` when it is imported, which
 * loads Node's fetch machinery (PERFORMANCE.md, "One bundle, ky on demand").
 */
const client = ky.create({ retry: 0, timeout: false, throwHttpErrors: false });

export function kyExchange(fetch: typeof globalThis.fetch, href: string, init: RequestInit): Promise<Response> {
  return client(href, { ...init, fetch }).catch((error: unknown) => {
    // ky wraps a failed connection in a NetworkError: the failure itself is what the caller sees.
    throw isNetworkError(error) ? error.cause : error;
  });
}
