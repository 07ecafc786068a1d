import {
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  type CrmSideEffects,
  CrmTimeoutError,
} from '../../core/errors';
import type { CrmLogger, CrmRequestLog } from '../../core/log';
import { AttemptFailure, type Failure, type Waited } from '../call/failure';
import { type CallState, keepsNoBody, type PreparedRequest } from '../call/prepared';
import type { TransportOptions } from '../call/settings';
import { onTheWire } from '../call/unsent';
import { credentialParts, MASK, maskKeyLike, type Redact, redactor } from './redaction';

/** The most of a server's words an error message quotes. */
const SERVER_WORDS = 500;

/** Reports failed calls as `CrmError`s, and attempts to the logger, with every secret masked. */
export interface Reporter {
  /** The `CrmError` a failed call rejects with (an `AttemptFailure`, or what else stopped it). */
  error(error: unknown, call: Call): CrmError;
  /** Hands one attempt of a call, sent to `target`, to the logger, as a line and as facts. */
  log(
    logger: CrmLogger,
    request: PreparedRequest,
    state: CallState,
    target: {
      readonly href: string;
      readonly init: { readonly method: string; readonly headers: Readonly<Record<string, string>> };
    },
    status: number,
    failure: unknown,
    ms: number,
  ): void;
  /** Masks a call's secrets in a value: strings, and the strings in arrays and plain objects. */
  redact(call: Call): Redact;
  /** A copy of a failure that is safe to show: masked, and with none of its objects' fields. */
  copy(call: Call, failure: unknown): unknown;
}

/** A call, as the reporter reads it: what it sends, and the secrets it carries. */
interface Call {
  readonly request: PreparedRequest;
  readonly state: CallState;
}

/** What a timeout says a call was waiting for; a retry's wait goes unsaid, as an attempt's timeout. */
const WAITING_FOR: Record<Waited, string> = {
  slot: ' (queued for a maxConcurrency slot)',
  pace: ' (queued for its turn at the rate limit)',
  key: ' (waiting for the apiKey function)',
  retry: '',
};

/** What reports a call to people, its errors and its log lines: one per transport. */
export function createReporter(options: TransportOptions): Reporter {
  // One masking function per set of secrets and headers: a scope's calls with the same headers share it.
  const redacts = new WeakMap<readonly string[], WeakMap<object, Redact>>();
  const redactOf = ({ state: { secrets }, request: { settings } }: Call): Redact => {
    let byHeaders = redacts.get(secrets);
    if (!byHeaders) {
      byHeaders = new WeakMap();
      redacts.set(secrets, byHeaders);
    }
    let redact = byHeaders.get(settings.headers);
    if (!redact) {
      // The values of the headers masked by name are credentials too, which a server may echo in
      // a body, whole or in part (one cookie of several, a token without its scheme).
      const values = Object.entries(settings.headers)
        .filter(
          ([name]) => /^(proxy-authorization|cookie)$/i.test(name) || options.secretHeaders?.has(name.toLowerCase()),
        )
        .flatMap(([name, value]) => credentialParts(name, value));
      redact = redactor([...secrets, ...values]);
      byHeaders.set(settings.headers, redact);
    }
    return redact;
  };
  const factsOf = (status: number, headers: Headers, call: Call) => ({
    status,
    headers: redactHeaders(headers, redactOf(call), options.secretHeaders, keepsNoBody(call.request)),
    sideEffects: call.state.sideEffects,
  });
  /** A server's body as an error keeps it: masked, and wholly for key management. */
  const bodyOf = (body: unknown, call: Call, text: string | undefined) => {
    if (keepsNoBody(call.request)) return MASK;
    const redact = redactOf(call);
    // A body whose text has no escape holds only the strings of its text: when none of them has a
    // secret, the body need not be walked (a page of 100,000 records takes as long to walk as to parse).
    if (text !== undefined && !text.includes('\\') && redact(text) === text) return body;
    return redact(body);
  };
  /**
   * A server's text as a message quotes it: masked, bounded, and unable to forge log lines. Key
   * management's may quote a key the SDK does not know (a new one): every token shaped like a key
   * is masked there.
   */
  const quoted = (text: string, call: Call, max = SERVER_WORDS) =>
    loggable(redactOf(call)(keepsNoBody(call.request) ? maskKeyLike(text) : text), max);

  return {
    error(error, call) {
      const { settings, deadline, where: path } = call.request;
      let failure: Failure | undefined;
      try {
        failure = error instanceof AttemptFailure ? error.failure : undefined;
      } catch {
        // A Proxy that a signal aborted with, whose traps throw: not a failure of ours.
      }
      // The path may hold what a caller passed as an id: masked like the rest.
      const where = redactOf(call)(path);
      // What any attempt of the call may have done, as the transport classified each (core/errors.ts).
      const { sideEffects } = call.state;
      const notDone = `Not done within totalTimeout (${settings.totalTimeout} ms), retries included`;
      // A signal that stops a call only before it is sent (call/unsent.ts) did not end an answered attempt.
      const { signal } = settings;
      if (signal?.aborted && (failure === undefined || failure.kind === 'queued' || onTheWire(signal)?.aborted)) {
        const queued = failure?.kind === 'queued' && (failure.waiting === 'slot' || failure.waiting === 'pace');
        return abortErrorOf(signal, where, queued ? ' while queued' : '', sideEffects);
      }
      switch (failure?.kind) {
        case 'http':
        case 'refused': {
          const { status, headers } = failure;
          const parsed = failure.kind === 'http' ? parseLenient(failure.text) : failure.body;
          const body = bodyOf(parsed, call, failure.text);
          const fallback = failure.kind === 'http' ? failure.statusText : 'success: false';
          const note = failure.kind === 'http' ? failure.note : undefined;
          // Key management keeps no body, since a 2xx body may hold a new key; the words of a 4xx
          // or 5xx hold none, and a message without them ("Forbidden" for "admins only") misleads.
          const words = !keepsNoBody(call.request) || status >= 400 ? serverMessageOf(parsed) : undefined;
          const said = quoted(note ?? words ?? fallback, call);
          const ErrorClass = apiErrorClassFor(status);
          // A key used with another tenant's id reads as a wrong key: the tenant, not a secret, says which.
          const { tenantId } = call.request;
          const refused =
            status === 401 && call.request.endpoint.auth === 'apiKey' && tenantId
              ? `: the API key was refused for tenant '${quoted(tenantId, call, 100)}'`
              : '';
          return new ErrorClass(`${status} from ${where}${refused}${said ? `: ${said}` : ''}`, {
            ...factsOf(status, headers, call),
            body,
          });
        }
        case 'not-json': {
          const type = quoted(failure.headers.get('content-type') ?? 'no content type', call, 100);
          const shown = keepsNoBody(call.request) ? MASK : quoted(failure.text, call, 200);
          return new CrmResponseValidationError(
            `Expected a JSON envelope from ${where}, got ${type}: ${shown}`,
            { ...factsOf(failure.status, failure.headers, call), body: bodyOf(failure.text, call, undefined) },
            [{ field: '', path: [], message: `Not JSON (${type})` }],
          );
        }
        case 'invalid': {
          const issues = failure.issues ?? [];
          return new CrmResponseValidationError(
            `Unexpected response from ${where}: ${issues.map((i) => `${i.field || '(body)'}: ${i.message}`).join('; ')}`,
            { ...factsOf(failure.status, failure.headers, call), body: bodyOf(failure.body, call, failure.text) },
            issues,
          );
        }
        case 'too-large':
          return new CrmResponseTooLargeError(
            `Response body of at least ${failure.size} bytes exceeds maxResponseBytes (${options.maxResponseBytes}); the rest was not read`,
            { ...factsOf(failure.status, failure.headers, call), body: undefined },
          );
        case 'key': {
          // The function's own error, as it is, unless masking changes a word of what it prints
          // (or some of it cannot be read): then the masked copy.
          const redact = redactOf(call);
          let masked = false;
          const copy = safeCause(failure.cause, (value) => {
            const out = redact(value);
            masked ||= out !== value || value === UNREAD;
            return out;
          });
          return new CrmError(`The apiKey function failed for tenant "${call.request.tenantId}"; nothing was sent`, {
            cause: masked ? copy : failure.cause,
            sideEffects,
          });
        }
        case 'queued':
          // A call whose totalTimeout ran out before an attempt could go (its first, or a retry).
          return new CrmTimeoutError(
            call.state.attempts === 0
              ? `Not started within totalTimeout${WAITING_FOR[failure.waiting]}: ${where}`
              : `${notDone}${WAITING_FOR[failure.waiting]}: ${where}`,
            { sideEffects },
          );
        case 'timeout':
          // A timer may fire a millisecond or two early, hence the tolerance.
          return new CrmTimeoutError(
            deadline !== undefined && Date.now() >= deadline - 10
              ? `${notDone}: ${where}`
              : `No response within ${settings.timeout} ms: ${where}`,
            { sideEffects },
          );
      }
      const cause = safeCause(failure?.kind === 'network' ? failure.cause : error, redactOf(call));
      // Masked once joined: its parts, each masked, could join into a secret.
      const reason = cause instanceof Error ? `: ${loggable(redactOf(call)(reasonOf(cause)), SERVER_WORDS)}` : '';
      return new CrmConnectionError(`Connection failed: ${where}${reason}`, { cause, sideEffects });
    },

    redact: redactOf,
    copy: (call, failure) => safeCause(failure, redactOf(call)),

    log(logger, request, state, target, status, failure, ms) {
      const redact = redactOf({ request, state });
      const url = new URL(target.href);
      const entry: CrmRequestLog = {
        method: target.init.method,
        url: redact(`${url.pathname}${url.search}`),
        status,
        error: failure === undefined ? undefined : redact(failureText(failure)),
        durationMs: ms,
        attempt: state.attempts,
        headers: Object.fromEntries(redactHeaders(new Headers(target.init.headers), redact, options.secretHeaders)),
      };
      const outcome = [status || '', entry.error === undefined ? '' : `failed (${entry.error})`]
        .filter(Boolean)
        .join(' ');
      const line = `crm ${entry.method} ${entry.url} ${outcome} ${Math.round(ms)}ms attempt=${entry.attempt} headers=${JSON.stringify(entry.headers)}`;
      // A failing log sink must not turn an answered call into a failure (and a create into a
      // retry), nor an async one's rejection into an unhandled rejection that ends the process.
      try {
        (logger(loggable(line, Number.POSITIVE_INFINITY), entry) as unknown as Promise<unknown> | undefined)?.then?.(
          undefined,
          () => {},
        );
      } catch {}
    },
  };
}

/**
 * A copy of `headers` with every credential header, and every header named in `secret`
 * (lower-case names, the `redactHeaders` option), masked (with `keyLike`, every token shaped
 * like a key in the others' values). A header whose name carries a secret
 * is left out: a mask is not a legal header name.
 */
function redactHeaders(
  headers: Headers,
  redact: Redact,
  secret: ReadonlySet<string> | undefined,
  keyLike = false,
): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    if (redact(name) !== name) continue;
    const masked = /^(authorization|proxy-authorization|x-api-key|cookie|set-cookie)$/.test(name) || secret?.has(name);
    // Key management's answer may carry a new key in any header; its request id stays readable.
    const shown = keyLike && !REQUEST_ID.test(name) ? maskKeyLike(value) : value;
    out.set(name, masked ? MASK : redact(shown));
  }
  return out;
}

/** The headers `requestId` is read from, which support asks for. */
const REQUEST_ID = /^(x-request-id|request-id|x-correlation-id)$/;

/** What stands for a failure, or the part of one, that could not be read: a getter threw, or it nests too deep. */
const UNREAD = 'A failure that could not be read';

/**
 * What a failure may keep as `cause`: a copy, whatever it was (a custom fetch may reject with
 * anything). An error keeps its name, message, stack, causes (an `AggregateError` its errors) and
 * its fields of text or number, such as `code` and `port`, enumerable or not; any other field (a
 * `request`, a `config.headers`) is dropped, its text passed to `redact` all the same, so that a
 * caller's `redact` sees every word the failure prints. Anything else becomes an error of its JSON
 * text. Secrets are masked.
 */
function safeCause(failure: unknown, redact: Redact, depth = 0): unknown {
  try {
    if (failure === undefined) return undefined;
    if (depth > 4) return void redact(UNREAD);
    if (!(failure instanceof Error)) return new Error(redact(textOf(failure)));
    const cause = safeCause(failure.cause, redact, depth + 1);
    const copy = new Error(redact(String(failure.message)), cause === undefined ? undefined : { cause }) as Error &
      Record<string, unknown>;
    copy.name = redact(String(failure.name));
    if (typeof failure.stack === 'string') copy.stack = redact(failure.stack);
    for (const name of Object.getOwnPropertyNames(failure)) {
      if (/^(message|stack|cause|errors)$/.test(name)) continue;
      const value = (failure as unknown as Record<string, unknown>)[name];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        copy[redact(name)] = redact(value);
      else redact(textOf(value));
    }
    const { errors } = failure as { errors?: unknown };
    if (Array.isArray(errors)) copy.errors = errors.map((each) => safeCause(each, redact, depth + 1));
    return copy;
  } catch {
    // A failure whose getters throw, a Proxy: nothing of it can be read safely.
    return new Error(redact(UNREAD));
  }
}

/** What a network error and its causes have that says what failed. */
type NetworkFacts = Error & { code?: unknown; errors?: unknown; address?: unknown; port?: unknown; hostname?: unknown };

/**
 * What failed, as a connection error's message says it: the innermost cause with a `code`, as
 * Node's own words put it (`connect ECONNREFUSED 127.0.0.1:59999`, `getaddrinfo ENOTFOUND
 * crm.example.invalid`), with the code and the host (and port) added where those words lack them;
 * without such a cause, the error's own message (`fetch failed`, `Failed to fetch`).
 */
function reasonOf(error: Error): string {
  let found: NetworkFacts | undefined;
  for (let each: unknown = error, depth = 0; each instanceof Error && depth < 5; each = each.cause, depth++) {
    if (typeof (each as NetworkFacts).code === 'string') found = each;
  }
  if (!found) return error.message;
  const { code, errors, address, port, hostname } = found;
  // An AggregateError (every address of a host refused) has no message of its own: its first error has.
  const first: unknown = Array.isArray(errors) ? errors[0] : undefined;
  let text = found.message || (first instanceof Error ? first.message : '');
  if (!text.includes(code as string)) text = `${code} ${text}`.trim();
  const host =
    typeof address === 'string'
      ? `${address}${typeof port === 'number' || typeof port === 'string' ? `:${port}` : ''}`
      : typeof hostname === 'string'
        ? hostname
        : '';
  return host && !text.includes(host) ? `${text} ${host}` : text;
}

/** The error of a call its caller's signal stopped: a timeout when the signal's reason is one (`AbortSignal.timeout()`). */
function abortErrorOf(signal: AbortSignal, where: string, queued: string, sideEffects: CrmSideEffects): CrmError {
  const cause: unknown = signal.reason;
  let timedOut = false;
  try {
    // An error (a DOMException is one) named so; not any object that says it is.
    timedOut = cause instanceof Error && cause.name === 'TimeoutError';
  } catch {}
  return timedOut
    ? new CrmTimeoutError(`Timed out by the caller's signal${queued}: ${where}`, { cause, sideEffects })
    : new CrmAbortError(`Aborted${queued}: ${where}`, { cause, sideEffects });
}

/** A failure as a log line gives it: `name: message`, or its text; whatever it is, and whatever its getters do. */
function failureText(failure: unknown): string {
  try {
    return failure instanceof Error ? `${failure.name}: ${failure.message}` : textOf(failure);
  } catch {
    return 'A failure that could not be read';
  }
}

/** A value that is not an error, as text: JSON where it can be. */
function textOf(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}

/**
 * Text a message or a log line quotes: at most `max` characters, with line breaks and other
 * control characters escaped, so that it cannot forge lines in a log.
 */
const loggable = (text: string, max: number) =>
  text
    .slice(0, max)
    .replace(CONTROL, (c) =>
      c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );

// biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is escaped
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;

/** The server's own words from an error body, in the shapes APIs commonly use. */
function serverMessageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() || undefined;
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === 'object' && error !== null) {
    const nested = (error as { message?: unknown }).message;
    if (typeof nested === 'string') return nested;
  }
  if (typeof message === 'string') return message;
  if (typeof error === 'string') return error;
  return undefined;
}

/** An error body: parsed JSON, else the text, else undefined. */
function parseLenient(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
