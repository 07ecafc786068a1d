import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options, TimeoutError } from 'ky';
import type { ResolvedOptions } from '../options';
import { type Call, type Failure, httpFailure, type Outcome, type Received } from './call';
import { followRedirects, unfollowedNote } from './redirects';
import { retryPolicy } from './retry';

/** Every attempt after the first, driven by ky. */
export interface Retrier {
  /** Replays the first attempt's outcome into ky, which decides whether, when and how often to try again. */
  readonly run: (call: Call, first: Outcome) => Promise<Received>;
  /** What a rejection of `run` means, or undefined when it is not ky's. */
  readonly failureOf: (error: unknown) => Failure | undefined;
}

type Send = (input: RequestInfo | URL, init: RequestInit | undefined, call: Call | undefined) => Promise<Received>;

/**
 * This module is loaded on demand (see `request.ts`): a call that succeeds at once never needs ky,
 * and not loading it keeps `import 'crm-integration-sdk'` fast and the entry chunk small.
 */
export function createRetrier(options: ResolvedOptions, send: Send): Retrier {
  // Bodies are read inside fetch, so ky gets bodiless Responses; their text is kept here.
  const bodies = new WeakMap<Response, string>();
  const bare = ({ response, text }: Received): Response => {
    const { status, statusText, headers } = response;
    const copy = new Response(null, { status, statusText, headers });
    bodies.set(copy, text);
    return copy;
  };
  const client: KyInstance = ky.create({
    timeout: options.timeout,
    retry: retryPolicy(options.maxRetries, options.maxRetryAfter),
  });

  return {
    async run(call, first) {
      let replay: Outcome | undefined = first;
      const { options: perCall, deadline } = call;
      const kyOptions: Options = {
        ...call.init,
        fetch: async (input, init) => {
          const outcome = replay;
          replay = undefined;
          if (outcome !== undefined && !('response' in outcome)) {
            throw outcome.timedOut ? new TimeoutError(input as Request) : outcome.error;
          }
          const received = outcome ?? (await send(input, init, call));
          // Within the attempt, so ky's timeout and the caller's signal cover the redirects too.
          if (received.response.ok) return bare(received);
          return bare(await followRedirects(received, call, (input as Request).signal, send));
        },
      };
      if (perCall?.signal) kyOptions.signal = perCall.signal;
      if (perCall?.timeout !== undefined) kyOptions.timeout = perCall.timeout;
      if (perCall?.maxRetries !== undefined) kyOptions.retry = { limit: perCall.maxRetries };
      if (deadline !== undefined) {
        kyOptions.context = { deadline };
        kyOptions.totalTimeout = Math.max(1, deadline - Date.now());
      }
      const response = await client(call.href, kyOptions);
      return { response, text: bodies.get(response) ?? '' };
    },
    failureOf(error) {
      if (isHTTPError(error)) {
        const { response } = error;
        return { ...httpFailure(response, bodies.get(response)), note: unfollowedNote(response, options.baseUrl) };
      }
      if (isTimeoutError(error)) return { kind: 'timeout' };
      if (isNetworkError(error)) return { kind: 'network', cause: error.cause };
      return undefined;
    },
  };
}
