import type { Outcome } from '../call/failure';
import type { CallState, PreparedRequest } from '../call/prepared';
import type { TransportOptions } from '../call/settings';
import { onTheWire } from '../call/unsent';
import type { Reporter } from '../report/reporter';
import type { CallTrace } from '../tracing/trace';
import type { KeyPacer, Ticket } from '../waiting/pacer';
import { AttemptBound } from './bound';
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
  settings.signal?.throwIfAborted();
  // Once sent, an attempt is stopped by the signals that stop one on the wire (call/unsent.ts).
  const signal = onTheWire(settings.signal);
  state.attempts += 1;
  const started = options.logger ? performance.now() : 0;
  const limit = deadline === undefined ? settings.timeout : Math.min(settings.timeout, deadline - Date.now());
  const bound = new AttemptBound(Math.max(0, limit), signal);
  let status = 0;
  let failure: unknown;
  try {
    const init: RequestInit = { ...options.fetchOptions, ...target.init, signal: bound.signal };
    // Looked up at call time, so that a fetch patched later (MSW, instrumentation) is the one used.
    const fetch = options.fetch ?? globalThis.fetch;
    // Its time at the pacer is when it goes, not when its turn was given: the awaits between the two
    // are long while a job's first calls are being queued, and a slow bucket was measured low by them.
    paced?.pacer.sent(paced.ticket);
    const heard = (response: Response): Promise<string> => {
      status = response.status;
      if (paced) paced.pacer.learned(paced.ticket, status, response.headers, settings.maxRetryAfter);
      return readBodyText(response, options.maxResponseBytes, bound);
    };
    // The answer and its body end with the attempt whatever fetch does with its signal (bound.ts).
    if (trace) {
      return await trace.attempt(target.href, init, async (href, init) => {
        const response = await bound.response(exchange(fetch, href, init));
        return { response, text: await heard(response) };
      });
    }
    // Untraced, in this frame: an async function less per call (PERFORMANCE.md, "Few async frames per call").
    const response = await bound.response(exchange(fetch, target.href, init));
    return { response, text: await heard(response) };
  } catch (error) {
    failure = error;
    // Aborted in flight: the request may have reached the server.
    if (signal?.aborted) {
      state.sideEffects = 'unknown';
      throw error;
    }
    return { error, timedOut: bound.timedOut };
  } finally {
    bound.dispose();
    const { logger } = options;
    if (logger) reporter.log(logger, request, state, target, status, failure, performance.now() - started);
  }
}
