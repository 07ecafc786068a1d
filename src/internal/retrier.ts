import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options, TimeoutError } from 'ky';
import type { Outcome, Received } from './attempt';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';
import { followRedirects, unfollowedNote } from './redirects';
import { retryPolicy } from './retry-policy';

/**
 * Every attempt after a first that failed, driven by ky: it replays the first attempt's outcome
 * into ky, which decides whether, when and how often to try again. Resolves with the answer that
 * succeeded, or rejects with an `AttemptFailure`: ky's own errors never leave this module.
 */
export type Retrier = (call: PreparedCall, first: Outcome) => Promise<Received>;

type Send = (input: RequestInfo | URL, init: RequestInit | undefined, call: PreparedCall) => Promise<Received>;

/** Loaded on demand, with ky (see PERFORMANCE.md, "the first attempt outside ky"). */
export function createRetrier(baseUrl: string, send: Send, kit: Kit): Retrier {
  const { AttemptFailure } = kit;
  // Bodies are read inside fetch, so ky gets bodiless copies; the answers themselves are kept here.
  const originals = new WeakMap<Response, Received>();
  const bare = (received: Received, maxRetryAfter: number): Response => {
    const { ok, status, statusText, headers } = received.response;
    // ky takes a retry's wait from the answer's headers. It is shown Retry-After alone, in whole
    // seconds rounded up: ky would also read RateLimit-Reset and X-RateLimit-*, which the spec
    // never mentions, and ignores a fractional Retry-After (README, "Retries and timeouts").
    // Capped here, so that what ky reads back is a small whole number (1e21 seconds would not be).
    const wait = ok ? undefined : Math.min(kit.retryAfterMsOf(headers) ?? Number.NaN, maxRetryAfter);
    const timing: Record<string, string> =
      wait === undefined || Number.isNaN(wait) ? {} : { 'retry-after': String(Math.ceil(wait / 1000)) };
    const copy = new Response(null, { status, statusText, headers: timing });
    originals.set(copy, received);
    return copy;
  };
  const client: KyInstance = ky.create({ retry: retryPolicy(kit) });

  const failureOf = (error: unknown): Error => {
    if (isHTTPError(error)) {
      const original = originals.get(error.response);
      const response = original?.response ?? error.response;
      const { status, statusText, headers } = response;
      return new AttemptFailure({
        kind: 'http',
        status,
        statusText,
        headers,
        text: original?.text,
        note: unfollowedNote(response, baseUrl),
      });
    }
    if (isTimeoutError(error)) return new AttemptFailure({ kind: 'timeout' });
    if (isNetworkError(error)) return new AttemptFailure({ kind: 'network', cause: error.cause });
    // Ours already (a body over the limit, a redirect not followed), or what the caller's signal
    // aborted with, which the transport recognises by the signal.
    return error instanceof AttemptFailure ? error : new AttemptFailure({ kind: 'network', cause: error });
  };

  return async (call, first) => {
    let replay: Outcome | undefined = first;
    const { settings, deadline } = call;
    const options: Options = {
      ...call.init,
      fetch: async (input, init) => {
        const outcome = replay;
        replay = undefined;
        if (outcome !== undefined && !('response' in outcome)) {
          throw outcome.timedOut ? new TimeoutError(input as Request) : outcome.error;
        }
        const received = outcome ?? (await send(input, init, call));
        // Within the attempt, so ky's timeout and the caller's signal cover the redirects too.
        if (received.response.ok) return bare(received, settings.maxRetryAfter);
        return bare(
          await followRedirects(received, call, (input as Request).signal, send, kit),
          settings.maxRetryAfter,
        );
      },
      timeout: settings.timeout,
      retry: { limit: settings.maxRetries, maxRetryAfter: settings.maxRetryAfter },
      context: { deadline, maxRetryAfter: settings.maxRetryAfter },
    };
    if (settings.signal) options.signal = settings.signal;
    if (deadline !== undefined) options.totalTimeout = Math.max(1, deadline - Date.now());
    try {
      const response = await client(call.href, options);
      return originals.get(response) ?? { response, text: '' };
    } catch (error) {
      throw failureOf(error);
    }
  };
}
