import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options, TimeoutError } from 'ky';
import type { TransportOptions } from '../options';
import type { Outcome, Received } from './attempt';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';
import { followRedirects, unfollowedNote } from './redirects';
import type { Reporter } from './reporting';
import { PACED_WAIT, retryPolicy } from './retry-policy';

/**
 * Every attempt after a first that failed, driven by ky: it replays the first attempt's outcome
 * into ky, which decides whether, when and how often to try again. Resolves with the answer that
 * succeeded, or rejects with an `AttemptFailure`: ky's own errors never leave this module.
 */
export type Retrier = (call: PreparedCall, first: Outcome) => Promise<Received>;

/** One attempt: fetch, read the body within the size limit, log. */
export type Attempt = (
  input: RequestInfo | URL,
  init: RequestInit | undefined,
  call: PreparedCall,
) => Promise<Received>;

/**
 * One attempt of a call: waited for, when the call is paced; fetched (through the tracing
 * channel, when traced); its body read within `maxResponseBytes`; its outcome told to the pacer,
 * and logged. Every retry's, and the first one's of a call that is logged, traced or paced (the
 * others' first attempt is `Transport.#send`'s own plain fetch).
 */
export function createAttempt(
  options: TransportOptions,
  report: () => Promise<Reporter | undefined>,
  { readBodyText }: Kit,
): Attempt {
  return async (input, init, call) => {
    const started = performance.now();
    call.attempts += 1;
    let status = 0;
    let failure: unknown;
    try {
      const { pacer, settings } = call;
      const exchange = async (input: RequestInfo | URL, init: RequestInit | undefined): Promise<Received> => {
        // Looked up at call time, so a fetch patched later (MSW, instrumentation) is the one used.
        const response = await (options.fetch ?? globalThis.fetch)(input, init);
        status = response.status;
        pacer?.learned(call.ticket, status, response.headers, settings.maxRetryAfter);
        return { response, text: await readBodyText(response, options.maxResponseBytes) };
      };
      // A traced attempt is published from its request to its body read (tracing.ts).
      return await (call.trace ? call.trace.attempt(input, init, exchange) : exchange(input, init));
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const { logger } = options;
      if (logger) {
        const ms = performance.now() - started;
        const request = input instanceof Request ? input : new Request(input, init);
        // Without the reporter, nothing can be masked, so nothing is logged.
        (await report())?.log(logger, call, request, status, failure, ms);
      }
    }
  };
}

/** The most refusals a paced call is retried after, beside its maxRetries: a bound, should the pace never settle. */
const PACED_REFUSALS = 20;

/** Loaded on demand, with ky (see PERFORMANCE.md, "the first attempt outside ky"). */
export function createRetrier(baseUrl: string, send: Attempt, kit: Kit): Retrier {
  const { AttemptFailure } = kit;
  // Bodies are read inside fetch, so ky gets bodiless copies; the answers themselves are kept here.
  const originals = new WeakMap<Response, Received>();
  const bare = (received: Received, maxRetryAfter: number, paced: boolean): Response => {
    const { ok, status, statusText, headers } = received.response;
    // ky takes a retry's wait from the answer's headers. It is shown Retry-After alone, in whole
    // seconds rounded up: ky would also read RateLimit-Reset and X-RateLimit-*, which the spec
    // never mentions, and ignores a fractional Retry-After (README, "Retries and timeouts").
    // Capped here, so that what ky reads back is a small whole number (1e21 seconds would not be).
    // A paced call's wait is its credential's (pacer.ts), which the retry waits for: ky adds none,
    // and the policy reads the server's wait, against the deadline, from a header of its own.
    const wait = ok ? undefined : Math.min(kit.retryAfterMsOf(headers) ?? Number.NaN, maxRetryAfter);
    const timing: Record<string, string> =
      wait === undefined || Number.isNaN(wait)
        ? {}
        : paced
          ? { 'retry-after': '0', [PACED_WAIT]: String(wait) }
          : { 'retry-after': String(Math.ceil(wait / 1000)) };
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
        const paced = call.pacer !== undefined;
        // Within the attempt, so ky's timeout and the caller's signal cover the redirects too.
        if (received.response.ok) return bare(received, settings.maxRetryAfter, paced);
        return bare(
          await followRedirects(received, call, (input as Request).signal, send, kit),
          settings.maxRetryAfter,
          paced,
        );
      },
      timeout: settings.timeout,
      // A paced call's refusals are turns to wait for, not failures: they do not use up maxRetries
      // (retry-policy.ts), up to PACED_REFUSALS of them.
      retry: {
        limit: settings.maxRetries + (call.pacer ? PACED_REFUSALS : 0),
        maxRetryAfter: settings.maxRetryAfter,
      },
      context: {
        deadline,
        maxRetryAfter: settings.maxRetryAfter,
        maxRetries: settings.maxRetries,
        pacer: call.pacer,
      },
    };
    const { pacer } = call;
    // A paced call's retry waits for its turn, as every call of its key does after a refusal:
    // before the attempt, so that a long pause does not count against the attempt's timeout.
    if (pacer) {
      options.hooks = {
        beforeRetry: [
          async () => {
            call.ticket = await pacer.turn(true, settings.signal, deadline);
          },
        ],
      };
    }
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
