import type { RequestOptions } from '../options';

/** A call, fully built: every attempt sends exactly this. */
export interface Call {
  readonly href: string;
  readonly init: { method: string; headers: Readonly<Record<string, string>>; redirect: 'manual'; body?: string };
  readonly where: string;
  readonly options: RequestOptions | undefined;
  readonly timeout: number;
  readonly deadline: number | undefined;
  /** Counted per call, so each log line can say which attempt it was; absent without a logger. */
  readonly attempts: { count: number } | undefined;
}

/** An answer, with its body already read. */
export interface Received {
  readonly response: Response;
  readonly text: string;
}

/** What a failed call came to, in terms the request path maps to a `CrmError` without knowing ky. */
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
  | { readonly kind: 'network'; readonly cause: unknown };

/** A first attempt's failure, as it is: thrown when ky, which would retry it, could not be loaded. */
export class Unretried extends Error {
  readonly failure: Failure;
  constructor(first: Outcome) {
    super('Not retried');
    this.failure =
      'response' in first
        ? httpFailure(first.response, first.text)
        : first.timedOut
          ? { kind: 'timeout' }
          : { kind: 'network', cause: first.error };
  }
}

/** An answer that failed the call, with the body read from it. */
export const httpFailure = ({ status, statusText, headers }: Response, text: string | undefined): Failure => ({
  kind: 'http',
  status,
  statusText,
  headers,
  text,
});

/** What one attempt ended with: an answer, or what it threw (`timedOut` when its own timer stopped it). */
export type Outcome = Received | { readonly error: unknown; readonly timedOut: boolean };
