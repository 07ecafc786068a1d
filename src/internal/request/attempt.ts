import type { Outcome } from '../call/failure';
import type { CallState, PreparedRequest } from '../call/prepared';
import type { TransportOptions } from '../call/settings';
import type { Reporter } from '../report/reporter';
import type { CallTrace } from '../tracing/trace';
import type { KeyPacer, Ticket } from '../waiting/pacer';
import { readBodyText } from './read-body';

/** Where an attempt goes: the call's own URL and request, or a redirect's. */
export interface Target {
  readonly href: string;
  readonly init: PreparedRequest['init'];
}

/** Sends a request: `fetch` for a first attempt, ky for a retry (src/internal/exchange/ky.ts). */
export type Exchange = (fetch: typeof globalThis.fetch, href: string, init: RequestInit) => Promise<Response>;

/** The pacer a paced attempt tells what the server made of it, and the turn it went at. */
export interface Paced {
  readonly pacer: KeyPacer;
  readonly ticket: Ticket;
}

/** What an attempt is made with, besides its request: the transport's. */
export interface AttemptContext {
  readonly options: TransportOptions;
  readonly reporter: Reporter;
}

/**
 * One attempt of a call, every try the same: sent within its timeout (the attempt's, or what
 * `totalTimeout` leaves) and the caller's signal, through the tracing channel when traced; its
 * body read within `maxResponseBytes`; its answer told to the pacer; logged. An answer of any
 * status is an outcome, and so is an error the exchange or the body reader threw (a body too large
 * included); the caller's abort is thrown.
 */
export async function attempt(
  { options, reporter }: AttemptContext,
  request: PreparedRequest,
  target: Target,
  state: CallState,
  exchange: Exchange,
  paced: Paced | undefined,
  trace: CallTrace | undefined,
): Promise<Outcome> {
  const { settings, deadline } = request;
  const { signal } = settings;
  signal?.throwIfAborted();
  state.attempts += 1;
  const started = options.logger ? performance.now() : 0;
  const limit = deadline === undefined ? settings.timeout : Math.min(settings.timeout, deadline - Date.now());
  const controller = new AbortController();
  const timer = controller.signal;
  const clock = setTimeout(() => controller.abort(), Math.max(0, limit));
  let status = 0;
  let failure: unknown;
  try {
    const stop = signal ? AbortSignal.any([signal, timer]) : timer;
    const init: RequestInit = { ...options.fetchOptions, ...target.init, signal: stop };
    // Looked up at call time, so that a fetch patched later (MSW, instrumentation) is the one used.
    const fetch = options.fetch ?? globalThis.fetch;
    // A fetch of the caller's may not listen to its signal: its answer and its body are raced
    // against it, so that the timeout and the caller's abort still end the attempt and free its slot.
    const bounded = options.fetch === undefined ? asItIs : <T>(promise: Promise<T>) => until(promise, stop);
    // Its time at the pacer is when it goes, not when its turn was given: the awaits between the two
    // are long while a job's first calls are being queued, and a slow bucket was measured low by them.
    paced?.pacer.sent(paced.ticket);
    const heard = (response: Response): Promise<string> => {
      status = response.status;
      if (paced) paced.pacer.learned(paced.ticket, status, response.headers, settings.maxRetryAfter);
      return bounded(readBodyText(response, options.maxResponseBytes));
    };
    if (trace) {
      return await trace.attempt(target.href, init, async (href, init) => {
        const response = await bounded(exchange(fetch, href, init));
        return { response, text: await heard(response) };
      });
    }
    // Untraced, in this frame: an async function less per call (PERFORMANCE.md, "Few async frames per call").
    const response = await bounded(exchange(fetch, target.href, init));
    return { response, text: await heard(response) };
  } catch (error) {
    failure = error;
    // Aborted in flight: the request may have reached the server.
    if (signal?.aborted) {
      state.sideEffects = 'unknown';
      throw error;
    }
    return { error, timedOut: timer.aborted };
  } finally {
    clearTimeout(clock);
    const { logger } = options;
    if (logger) reporter.log(logger, request, state, target, status, failure, performance.now() - started);
  }
}

/** The global fetch (undici, MSW, a browser's) ends its promise and its body when its signal aborts. */
const asItIs = <T>(promise: Promise<T>): Promise<T> => promise;

/**
 * `promise`, or the signal's reason once it aborts; what it settles with later is dropped, a
 * rejection included.
 */
function until<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
