import { retryAfterMsOf } from './retry-after';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

const KINDS = Symbol.for('crm-integration-sdk.error-kinds');

type ErrorClass = { readonly kind: string };

function kindsOf(ctor: unknown): string[] {
  const kinds: string[] = [];
  for (let c = ctor; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    if (Object.hasOwn(c, 'kind')) kinds.push((c as unknown as ErrorClass).kind);
  }
  return kinds;
}

function hasKind(value: unknown, kind: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const kinds = (value as { [KINDS]?: unknown })[KINDS];
  return Array.isArray(kinds) && kinds.includes(kind);
}

/**
 * The base of every error this SDK throws. `instanceof` works across duplicate copies of the
 * package (it checks a brand, not the prototype), and so do the `isCrm…Error()` guards.
 *
 * @example
 * ```ts
 * try { await crm.opportunities.get('opp_1'); }
 * catch (error) { if (isCrmError(error)) console.error(error.name, error.message); }
 * ```
 */
export class CrmError extends Error {
  /** The class's name, kept as data so that minified builds and other copies agree. */
  static readonly kind: string = 'CrmError';
  /**
   * Whether the failed call may have changed anything on the server: `'none'` when it was never
   * sent (bad input, aborted while queued, no credential, the connection refused) or the server's
   * answer proves it did nothing (a 4xx, a 429, a 503 with `Retry-After`); `'unknown'` when it may
   * have acted (a timeout or a reset after sending, a 5xx, an abort in flight, a 2xx whose body
   * could not be read). A create that failed with `'unknown'` may exist: this API has no
   * idempotency key, so do not simply send it again (`crm-integration-sdk/sync` reconciles it).
   */
  declare readonly sideEffects: CrmSideEffects;

  constructor(message: string, options?: CrmErrorOptions) {
    super(message, options);
    this.sideEffects = options?.sideEffects ?? 'none';
    const kinds = kindsOf(new.target);
    Object.defineProperty(this, KINDS, { value: kinds });
    Object.defineProperty(this, 'name', { value: kinds[0], configurable: true, writable: true });
  }

  /**
   * The JSON form: `name`, `message` and the error's facts (`status`, `body`, `requestId`,
   * `code`, `issues`, ...), but not `headers`. Credentials are masked already.
   */
  toJSON(): Record<string, unknown> {
    const { headers: _, ...facts } = this as unknown as Record<string, unknown>;
    return { name: this.name, message: this.message, ...facts };
  }

  /**
   * `instanceof` by the prototype chain, as usual (so `SubClass.prototype instanceof CrmError`
   * holds), or by brand, so that it also recognises errors from another copy of the package.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass `instanceof` was asked about
    return isInstance(this, value);
  }
}

/**
 * By the prototype chain, or by the brand of the SDK's own classes only: a subclass of yours,
 * without a kind of its own, must not claim every error of the SDK.
 */
function isInstance(asked: { readonly prototype: object; readonly kind: string }, value: unknown): boolean {
  if (Object.prototype.isPrototypeOf.call(asked.prototype, value as object)) return true;
  return Object.hasOwn(asked, 'kind') && hasKind(value, asked.kind);
}

/** What a failed call may have done on the server: see {@link CrmError.sideEffects}. */
export type CrmSideEffects = 'none' | 'unknown';

/** A `CrmError`'s options: the standard `cause`, and what the call may have done. */
export interface CrmErrorOptions extends ErrorOptions {
  /** Defaults to what the class implies: `'unknown'` for a connection error, else from the status, else `'none'`. */
  readonly sideEffects?: CrmSideEffects | undefined;
}

/** What the server did, as far as its answer (or its absence) shows: the input of {@link sideEffectsOf}. */
type AnswerFacts =
  | {
      readonly status: number;
      /** The answer has a `Retry-After` header. */
      readonly retryAfter: boolean;
      /** Its body says `success: false`. */
      readonly refusedInBody?: boolean;
    }
  | {
      readonly status: undefined;
      /** Why no answer came (what fetch threw, or the timeout). */
      readonly cause: unknown;
    };

/**
 * The one classification of what a request may have done, read by `error.sideEffects` and by the
 * retry decision alike. An answer of 4xx, 429 or 503 with `Retry-After` (or any non-5xx body that
 * says `success: false`) proves nothing was done; a 2xx that could not be read, a 3xx, a 5xx, or
 * no answer at all may have acted, unless the connection provably never opened.
 */
export function sideEffectsOf(answer: AnswerFacts): CrmSideEffects {
  const { status } = answer;
  if (status === undefined) return neverConnected(answer.cause) ? 'none' : 'unknown';
  if (status >= 400 && status < 500) return 'none';
  if (status === 503 && answer.retryAfter) return 'none';
  if (status < 300 && status >= 200 && answer.refusedInBody) return 'none';
  return 'unknown';
}

/** Codes that fail before a connection exists, so before a byte of the request was written. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

function neverConnected(cause: unknown): boolean {
  try {
    for (let each = cause, depth = 0; each instanceof Error && depth < 5; each = each.cause, depth++) {
      const { code } = each as { code?: unknown };
      if (typeof code === 'string' && NOT_CONNECTED.has(code)) return true;
    }
  } catch {
    // A cause whose getters throw proves nothing.
  }
  return false;
}

/** One offending field of a {@link CrmValidationError}. */
export interface CrmValidationIssue {
  /** Dotted name of the field, such as `subject` or `id`; empty for the input as a whole. */
  readonly field: string;
  /** The path as segments. */
  readonly path: readonly PropertyKey[];
  /** What is wrong with it. */
  readonly message: string;
}

/**
 * The input (or the client's configuration) is invalid. Thrown before any request is sent; the
 * message and `issues` name every offending field.
 */
export class CrmValidationError extends CrmError {
  static override readonly kind: string = 'CrmValidationError';
  /** Every offending field. */
  declare readonly issues: readonly CrmValidationIssue[];

  constructor(issues: readonly CrmValidationIssue[], prefix = 'Invalid input') {
    super(`${prefix}: ${issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ')}`);
    this.issues = issues;
  }
}

/** The HTTP response an error was built from: status, parsed body (or text), headers. */
export interface ResponseFacts {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Headers;
  /** What the call may have done; by default what this answer shows (a 4xx, a 429 or a 503 with `Retry-After`: `'none'`). */
  readonly sideEffects?: CrmSideEffects | undefined;
}

/** An error's side effects from its response facts: as given, else what the answer shows. */
const answered = (facts: ResponseFacts): CrmSideEffects =>
  facts.sideEffects ?? sideEffectsOf({ status: facts.status, retryAfter: facts.headers.has('retry-after') });

/**
 * The server answered, but not with a valid envelope for this endpoint (malformed JSON, a body
 * that is not an envelope, documented fields of the wrong type). Carries the issues and the raw body.
 */
export class CrmResponseValidationError extends CrmError {
  static override readonly kind: string = 'CrmResponseValidationError';
  declare readonly status: number;
  /** The raw body: parsed JSON, or the text when it was not JSON. */
  declare readonly body: unknown;
  declare readonly headers: Headers;
  /** What did not match, as `field: message` lines. */
  declare readonly issues: readonly CrmValidationIssue[];

  constructor(message: string, facts: ResponseFacts, issues: readonly CrmValidationIssue[] = []) {
    super(message, { sideEffects: answered(facts) });
    this.status = facts.status;
    this.body = facts.body;
    this.headers = facts.headers;
    this.issues = issues;
  }
}

/** The response body was larger than `maxResponseBytes`; it was not read to the end. */
export class CrmResponseTooLargeError extends CrmResponseValidationError {
  static override readonly kind: string = 'CrmResponseTooLargeError';
}

/**
 * The server said no: a non-2xx status or a `success: false` envelope. Subclasses name the status.
 * The spec shows no error shape, so `body` is whatever came back (parsed JSON, or text).
 */
export class CrmApiError extends CrmError {
  static override readonly kind: string = 'CrmApiError';
  declare readonly status: number;
  /** The response body: parsed JSON, or the text when it was not JSON. */
  declare readonly body: unknown;
  declare readonly headers: Headers;
  /** The server's request id (`x-request-id`, `request-id` or `x-correlation-id`), when it sent one. */
  declare readonly requestId: string | undefined;
  /** How long the server asked to wait (`Retry-After`, on 429 and 503), in milliseconds. */
  declare readonly retryAfterMs: number | undefined;
  /** The server's `error.code` (such as `VALIDATION_ERROR` or `INVALID_REFERENCE`), when the body has a string one. */
  declare readonly code: string | undefined;
  /** The server's `error.details`, when the body has them: their shape is the server's. */
  declare readonly details: unknown;

  constructor(message: string, facts: ResponseFacts) {
    super(message, { sideEffects: answered(facts) });
    this.status = facts.status;
    this.body = facts.body;
    this.headers = facts.headers;
    this.requestId = requestIdOf(facts.headers);
    this.retryAfterMs = facts.status === 429 || facts.status === 503 ? retryAfterMsOf(facts.headers) : undefined;
    // The spec shows no error shape; `{ error: { code, message, details } }` is the common one.
    const error = (facts.body as { error?: { code?: unknown; details?: unknown } } | null)?.error;
    const { code, details } = typeof error === 'object' && error !== null ? error : {};
    this.code = typeof code === 'string' ? code : undefined;
    this.details = details;
  }
}

/** 400 Bad Request. */
export class CrmBadRequestError extends CrmApiError {
  static override readonly kind: string = 'CrmBadRequestError';
}
/** 401: the API key (or admin token) is missing, wrong or revoked. */
export class CrmAuthenticationError extends CrmApiError {
  static override readonly kind: string = 'CrmAuthenticationError';
}
/** 403: the credential is valid but not allowed to do this. */
export class CrmPermissionDeniedError extends CrmApiError {
  static override readonly kind: string = 'CrmPermissionDeniedError';
}
/** 404: no such record for this tenant. */
export class CrmNotFoundError extends CrmApiError {
  static override readonly kind: string = 'CrmNotFoundError';
}
/** 409 Conflict. */
export class CrmConflictError extends CrmApiError {
  static override readonly kind: string = 'CrmConflictError';
}
/** 422 Unprocessable Entity. */
export class CrmUnprocessableEntityError extends CrmApiError {
  static override readonly kind: string = 'CrmUnprocessableEntityError';
}
/** 429: rate limited; `retryAfterMs` carries the server's hint. */
export class CrmRateLimitError extends CrmApiError {
  static override readonly kind: string = 'CrmRateLimitError';
}
/** 5xx: the server failed. */
export class CrmServerError extends CrmApiError {
  static override readonly kind: string = 'CrmServerError';
}

/** No response arrived: connection refused or reset, DNS failure, a body cut off. */
export class CrmConnectionError extends CrmError {
  static override readonly kind: string = 'CrmConnectionError';
  constructor(message: string, options?: CrmErrorOptions) {
    super(message, { ...options, sideEffects: options?.sideEffects ?? 'unknown' });
  }
}
/** No response arrived within `timeout` milliseconds (per attempt). */
export class CrmTimeoutError extends CrmConnectionError {
  static override readonly kind: string = 'CrmTimeoutError';
}
/**
 * The caller's `AbortSignal` cancelled the call. `cause` is the signal's reason. (A signal that
 * aborts with a `TimeoutError`, such as `AbortSignal.timeout()`, gives a `CrmTimeoutError`.)
 */
export class CrmAbortError extends CrmError {
  static override readonly kind: string = 'CrmAbortError';
}

/** The one status -> class ladder. */
export function apiErrorClassFor(status: number): typeof CrmApiError {
  if (status === 400) return CrmBadRequestError;
  if (status === 401) return CrmAuthenticationError;
  if (status === 403) return CrmPermissionDeniedError;
  if (status === 404) return CrmNotFoundError;
  if (status === 409) return CrmConflictError;
  if (status === 422) return CrmUnprocessableEntityError;
  if (status === 429) return CrmRateLimitError;
  if (status >= 500) return CrmServerError;
  return CrmApiError;
}

/** The server's request id: the header the errors and `withResponse()` read. */
export function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? headers.get('request-id') ?? headers.get('x-correlation-id') ?? undefined;
}

/** True for any error thrown by this SDK, whichever copy of the package threw it. */
export const isCrmError = (value: unknown): value is CrmError => hasKind(value, CrmError.kind);
/** True for an error response of the server (any status, or `success: false`). */
export const isCrmApiError = (value: unknown): value is CrmApiError => hasKind(value, CrmApiError.kind);
/** True for invalid input or configuration, refused before any request. */
export const isCrmValidationError = (value: unknown): value is CrmValidationError =>
  hasKind(value, CrmValidationError.kind);
/** True for a response that did not match the endpoint's schema. */
export const isCrmResponseValidationError = (value: unknown): value is CrmResponseValidationError =>
  hasKind(value, CrmResponseValidationError.kind);
/** True when no response arrived (including timeouts). */
export const isCrmConnectionError = (value: unknown): value is CrmConnectionError =>
  hasKind(value, CrmConnectionError.kind);
/** True when the caller's signal aborted the call. */
export const isCrmAbortError = (value: unknown): value is CrmAbortError => hasKind(value, CrmAbortError.kind);
/** True when an attempt got no response within its timeout. */
export const isCrmTimeoutError = (value: unknown): value is CrmTimeoutError => hasKind(value, CrmTimeoutError.kind);
/** True when a response body was over `maxResponseBytes`. */
export const isCrmResponseTooLargeError = (value: unknown): value is CrmResponseTooLargeError =>
  hasKind(value, CrmResponseTooLargeError.kind);
