// What an attempt comes to, for the request path and for the modules it loads on demand.
import type { CrmValidationIssue } from '../core/errors';

/** An answer, with its body already read. */
export interface Received {
  readonly response: Response;
  readonly text: string;
}

/** What one attempt ended with: an answer, or what it threw (`timedOut` when its own timer stopped it). */
export type Outcome = Received | { readonly error: unknown; readonly timedOut: boolean };

/**
 * Why a call failed, in terms the transport turns into a `CrmError` without knowing who found
 * out: the first attempt, ky, the body reader or the limiter.
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
  | { readonly kind: 'timeout' | 'queued' }
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

/**
 * The one error the machinery below the transport throws for a failed call. The transport alone
 * makes `CrmError`s out of it, in the call's own async frame, so that every error's stack runs on
 * to the code that awaited the call.
 */
export class AttemptFailure extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.kind);
    this.failure = failure;
  }
}

/**
 * `Retry-After` in milliseconds from now: seconds (a fraction allowed) or an HTTP date
 * (`Sun, 06 Nov 1994 08:49:37 GMT`); undefined for anything else, which `Date.parse` alone would
 * read as some date (`-1`, `2 3`).
 */
export function retryAfterMsOf(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
