// What an attempt comes to, and why a call failed, in terms every step below the transport shares.
import type { CrmValidationIssue } from '../../core/errors';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/** An answer, with its body already read. */
export interface Received {
  readonly response: Response;
  readonly text: string;
}

/** What one attempt ended with: an answer, or what it threw (`timedOut` when its own timer stopped it). */
export type Outcome = Received | { readonly error: unknown; readonly timedOut: boolean };

/** What a call waited for before an attempt, as a timeout names it. */
export type Waited = 'slot' | 'pace' | 'key' | 'retry';

/**
 * Why a call failed, in terms the transport turns into a `CrmError` without knowing who found
 * out: an attempt, the retry decision, the body reader or a wait.
 */
export type Failure =
  | {
      readonly kind: 'http';
      readonly status: number;
      readonly statusText: string;
      readonly headers: Headers;
      readonly text: string | undefined;
      /** Why the answer was not acted on, when the status alone does not say (a redirect not followed). */
      readonly note?: string | undefined;
    }
  | { readonly kind: 'timeout' }
  /** The deadline passed, or the signal aborted, while the call waited before an attempt. */
  | { readonly kind: 'queued'; readonly waiting: Waited }
  | { readonly kind: 'network' | 'key'; readonly cause: unknown }
  | { readonly kind: 'too-large'; readonly status: number; readonly headers: Headers; readonly size: number }
  /** A 2xx whose body is not JSON. */
  | { readonly kind: 'not-json'; readonly status: number; readonly headers: Headers; readonly text: string }
  /** A body that is JSON but says `success: false`, or is not the endpoint's envelope (`issues`). */
  | {
      readonly kind: 'refused' | 'invalid';
      readonly status: number;
      readonly headers: Headers;
      readonly body: unknown;
      /** The text the body was parsed from. */
      readonly text: string;
      readonly issues?: readonly CrmValidationIssue[];
    };

/** A refusal: the server says it did not act, and when to come back (429, or 503 with `Retry-After`). */
export const isRefusal = (status: number | undefined, hasRetryAfter: boolean): boolean =>
  status === 429 || (status === 503 && hasRetryAfter);

/**
 * The one error the steps below the transport throw for a failed call. The transport alone makes
 * `CrmError`s out of it, in the call's own async frame, so that every error's stack runs on to the
 * code that awaited the call (src/internal/README.md, "Stacks").
 */
export class AttemptFailure extends Error {
  declare readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.kind);
    this.failure = failure;
  }
}

/** What fetch implementations reject with for a failed connection, as ky's `isNetworkError` tells (is-network-error 1.3). */
const NETWORK_MESSAGES = new Set([
  'network error', // Chrome
  'NetworkError when attempting to fetch resource.', // Firefox
  'The Internet connection appears to be offline.', // Safari 16
  'Network request failed', // cross-fetch
  'fetch failed', // undici (Node)
  'terminated', // undici, a body cut off
  ' A network error occurred.', // Bun
  'Network connection lost', // Cloudflare Workers
]);

/**
 * A failed connection, told apart from a bug in a custom `fetch` (a `TypeError` too: `Cannot read
 * properties of undefined`), as ky tells them apart: only the first is worth a retry.
 */
export function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const { message } = error;
  return (
    NETWORK_MESSAGES.has(message) ||
    /^(error sending request for url|Failed to fetch( \(.*\))?$)/.test(message) || // Deno; Chrome
    // Safari 17 and later: a generic message, without a stack
    (/^Load failed( \(.*\))?$/.test(message) && error.stack === undefined)
  );
}
