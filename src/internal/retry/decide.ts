import type { CrmSideEffects } from '../../core/errors';
import { isRefusal } from '../call/failure';

/**
 * Whether and when a call is tried again, from what its last attempt came to: a pure function,
 * tested as a table (test/request/retry-decision.test.ts). The loop around it is the transport's.
 *
 * GET, PUT and DELETE (`crm.request()`'s) are safe to repeat: they are retried on 408, 429, 5xx,
 * network errors and timeouts. The API has no idempotency keys, so a POST (or `crm.request()`'s
 * PATCH) is retried only when the attempt did nothing (`sideEffectsOf()`, the classification
 * `CrmError.sideEffects` reports) and asked to be tried again: a refusal (429, or 503 with
 * `Retry-After`), or a connection that never opened.
 */

/** What an attempt came to, as the decision needs it. */
export interface Attempted {
  readonly method: string;
  /** The status of the answer; undefined when none came. */
  readonly status: number | undefined;
  /** Without an answer: its own timer ran out (`timeout`), the connection failed (`network`), or something else threw. */
  readonly failed?: 'timeout' | 'network' | 'other' | undefined;
  /** Whether the answer had a `Retry-After` header, and its wait in ms from now when it could be read. */
  readonly retryAfter: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * What the request may have done on the server (`sideEffectsOf()`): `'unknown'` too when a
   * redirect made a GET of it (a 303, or a 301 or 302 to a POST), whatever the GET came to.
   */
  readonly sideEffects: CrmSideEffects;
}

/** The call so far. */
export interface Tries {
  /** Retries made so far. */
  readonly retries: number;
  /** Of those, how many followed a refusal that a pacer waited out (they do not use up maxRetries). */
  readonly refusals: number;
  readonly maxRetries: number;
  readonly maxRetryAfter: number;
  /** What `totalTimeout` leaves, in ms; undefined without one. */
  readonly msLeft: number | undefined;
  /**
   * The call is paced (`throttle: 'auto'`), and whether its pacer waits out this refusal
   * (`KeyPacer.waitsOut()`); else it counts against maxRetries, as without a pacer: the key
   * refused whatever its pace, or a request of a phase refused with nothing accepted.
   */
  readonly paced: { readonly waitsOut: boolean } | undefined;
}

/** Try again after `waitMs` (a refusal a pacer waits out has none of its own), or stop. */
export type Decision =
  | { readonly retry: false }
  | { readonly retry: true; readonly waitMs: number; readonly refusal: boolean };

const STOP: Decision = { retry: false };
const RETRIED_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
/** The most refusals a paced call is retried after, beside its maxRetries: a bound, should the pace never settle. */
const PACED_REFUSALS = 20;
const BACKOFF_LIMIT = 8_000;

export function decide(attempted: Attempted, tries: Tries, random: () => number = Math.random): Decision {
  const { method, status, retryAfterMs } = attempted;
  if (status === undefined && attempted.failed === 'other') return STOP;
  const refusal = isRefusal(status, attempted.retryAfter);
  const pacedRefusal = refusal && tries.paced?.waitsOut === true;
  if (tries.retries >= tries.maxRetries + (tries.paced ? PACED_REFUSALS : 0)) return STOP;
  if (!pacedRefusal && tries.retries - tries.refusals >= tries.maxRetries) return STOP;
  // A POST or PATCH is repeated only when it provably did nothing, and the failure is one to try
  // again: a refusal, or a connection that never opened. A 400 did nothing too, but would again.
  if (
    (method === 'POST' || method === 'PATCH') &&
    (attempted.sideEffects !== 'none' || !(refusal || attempted.failed === 'network'))
  )
    return STOP;
  if (status !== undefined && !RETRIED_STATUSES.has(status)) return STOP;
  const hint = status === 429 || status === 503 ? retryAfterMs : undefined;
  // A wait the call's totalTimeout cannot afford is not waited for: the caller gets the server's hint now.
  if (hint !== undefined && tries.msLeft !== undefined && Math.min(hint, tries.maxRetryAfter) >= tries.msLeft)
    return STOP;
  // A paced call's refusal is its turn to wait, at its key's pace: its pacer holds it, not a timer of its own.
  if (pacedRefusal) return { retry: true, waitMs: 0, refusal: true };
  // The server's wait in whole seconds, a fraction rounded up, at most maxRetryAfter; else the backoff.
  const waitMs =
    hint === undefined
      ? backoff(tries.retries - tries.refusals + 1, random)
      : Math.min(Math.ceil(hint / 1000) * 1000, tries.maxRetryAfter);
  return { retry: true, waitMs, refusal: false };
}

/** Exponential, 0.3 s doubled per retry up to 8 s, keeping at least half of it, so that a burst of retries spreads out. */
const backoff = (retry: number, random: () => number): number =>
  Math.min(BACKOFF_LIMIT, 300 * 2 ** (retry - 1) * (0.5 + random() * 0.5));
