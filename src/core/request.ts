import type * as z from 'zod/mini';
import type { RequestOptions, ResolvedOptions } from '../options';
import { checkRequestOptions } from '../options';
import type { Pagination } from '../schemas/pagination';
import { readBodyText } from './body';
import { type Call, type Outcome, type Received, Unretried } from './call';
import { type Endpoint, type EndpointInput, loadValidators } from './endpoint';
import {
  apiErrorClassFor,
  CrmAbortError,
  CrmConnectionError,
  CrmError,
  CrmResponseValidationError,
  CrmTimeoutError,
  CrmValidationError,
  serverMessageOf,
} from './errors';
import { issuesOf } from './issues';
import type { Limiter } from './limiter';
import { type CrmRequestLog, formatLogLine } from './log';
import { redactError, redactHeaders, redactor } from './redact';
import type { Retrier } from './retrier';
import { Timeouts } from './timeouts';

/** What one call brings back: the envelope's `data`, its `pagination` on lists, and the response. */
export interface RawResult<T> {
  readonly data: T;
  readonly pagination: Pagination | undefined;
  readonly response: Response;
}

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-tenant-id'];

/**
 * THE request path. Every endpoint goes through `request()`: check credentials and input, place
 * the tenant, fill the path, send, unwrap the envelope, and turn every failure into a
 * `CrmError`. One Transport is shared by a client and its `withTenant()` clients.
 *
 * The first attempt is a plain fetch: most calls succeed at once, and ky's per-call set-up
 * costs more than the rest of the SDK on that path (see bench/RESULTS.md). Any other outcome is
 * handed to ky, which replays it and owns every decision from there: whether to retry, when
 * (backoff, jitter, Retry-After), timeouts and totalTimeout. ky is loaded in the background when
 * the client is made, so importing the SDK does not wait for it, and no call waits for it unless
 * its first attempt failed before ky arrived.
 */
export class Transport {
  #retrier: Retrier | undefined;
  #retrierLoad: Promise<Retrier> | undefined;
  readonly #options: ResolvedOptions;
  readonly #redact: <T>(value: T) => T;
  #limiter: Promise<Limiter> | undefined;
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #timeouts = new Timeouts();
  #lastHeaders: { auth: Endpoint['auth']; tenantId: string | undefined; headers: Record<string, string> } | undefined;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#redact = redactor([options.apiKey, options.adminToken]);
    // Loaded on demand, like ky: only clients with maxConcurrency need it.
    if (options.maxConcurrency) this.#loadLimiter().catch(() => {});
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#headers = { accept: 'application/json', ...withoutCredentials(options.headers) };
    // Errors are ignored here: a call that needs ky loads it again and reports the failure.
    this.#loadRetrier().catch(() => {});
    if (options.validateResponses) loadValidators();
  }

  /** The base URL, for display. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  /** One call of `endpoint`: checked, sent, and unwrapped, or rejected with a `CrmError`. */
  request<E extends Endpoint>(
    endpoint: E,
    input: EndpointInput<E>,
    tenantId: string | undefined,
    options: RequestOptions | undefined,
  ): Promise<RawResult<z.output<E['data']>>> {
    let call: Call;
    try {
      call = this.#prepare(endpoint, input, tenantId, options);
    } catch (error) {
      // Bad input and missing credentials: nothing was sent.
      return Promise.reject(error);
    }
    return this.#options.maxConcurrency ? this.#limited(endpoint, call) : this.#send(endpoint, call);
  }

  /** The call, checked and built: what every attempt sends. Throws on bad input. */
  #prepare(
    endpoint: Endpoint,
    input: unknown,
    tenantId: string | undefined,
    options: RequestOptions | undefined,
  ): Call {
    const shared = this.#headersFor(endpoint, tenantId);
    if (options) checkRequestOptions(options);
    const parsed = endpoint.parseInput(input);
    if (!parsed.success) throw new CrmValidationError(issuesOf(parsed.error, 1));
    const { path, query, body } = parsed.data;

    const url = path ? endpoint.fill(path) : endpoint.path;
    const payload = endpoint.tenantIn === 'body' ? { tenantId, ...(body as object) } : body;
    // Per-call headers cannot replace credentials: they are stripped of them.
    const headers = options?.headers ? { ...shared, ...withoutCredentials(options.headers) } : shared;
    // Redirects are followed only within the origin (see redirects.ts), so no credential leaves it.
    const init: Call['init'] = { method: endpoint.method, headers, redirect: 'manual' };
    if (payload !== undefined) {
      init.body = JSON.stringify(payload);
      init.headers = { ...headers, 'content-type': 'application/json' };
    }
    const total = options?.totalTimeout ?? this.#options.totalTimeout;
    return {
      href: `${this.#base}/${url}${queryString(query as Record<string, unknown> | undefined, endpoint.tenantIn === 'query' ? tenantId : undefined)}`,
      init,
      where: `${endpoint.method} /${url}`,
      options,
      timeout: options?.timeout ?? this.#options.timeout,
      deadline: total === undefined ? undefined : Date.now() + total,
      // Attempts are counted per call, so each log line can say which one it was.
      attempts: this.#options.logger ? { count: 0 } : undefined,
    };
  }

  /** The call, in one of the maxConcurrency slots shared by this client and its withTenant() clients. */
  async #limited<E extends Endpoint>(endpoint: E, call: Call): Promise<RawResult<z.output<E['data']>>> {
    let limiter: Limiter;
    try {
      limiter = await this.#loadLimiter();
    } catch (error) {
      throw this.#toCrmError(error, call);
    }
    return limiter.run(() => this.#send(endpoint, call), call.options?.signal, call.where, call.deadline);
  }

  #loadLimiter(): Promise<Limiter> {
    this.#limiter ??= import('./limiter').then(
      // Only loaded for a client with maxConcurrency set.
      ({ Limiter }) => new Limiter(this.#options.maxConcurrency as number),
      (error: unknown) => {
        // A chunk that failed to load is tried again by the next call, which fails meanwhile.
        this.#limiter = undefined;
        throw error;
      },
    );
    return this.#limiter;
  }

  #loadRetrier(): Promise<Retrier> {
    this.#retrierLoad ??= import('./retrier').then(
      ({ createRetrier }) => {
        this.#retrier = createRetrier(this.#options, (input, init, call) =>
          this.#fetchText(input, init, call?.attempts),
        );
        return this.#retrier;
      },
      (error: unknown) => {
        // A chunk that failed to load (a flaky network, in a browser) is tried again by the next call.
        this.#retrierLoad = undefined;
        throw error;
      },
    );
    return this.#retrierLoad;
  }

  /**
   * A call from its first attempt to its data, or to a `CrmError`. The first attempt is a plain
   * fetch, bounded by the attempt's timeout and the caller's signal; anything but a 2xx goes to
   * ky. One async frame from fetch to the envelope: this is every call's path, and each frame
   * is a promise, a context and a microtask per call.
   */
  async #send<E extends Endpoint>(endpoint: E, call: Call): Promise<RawResult<z.output<E['data']>>> {
    const user = call.options?.signal;
    try {
      user?.throwIfAborted();
      const limit = call.deadline === undefined ? call.timeout : Math.min(call.timeout, call.deadline - Date.now());
      const timer = new AbortController();
      const timeout = this.#timeouts.start(timer, Math.max(0, limit));
      let first: Outcome;
      try {
        const init = { ...call.init, signal: user ? AbortSignal.any([user, timer.signal]) : timer.signal };
        if (call.attempts) {
          first = await this.#fetchText(call.href, init, call.attempts);
        } else {
          // #fetchText without its logging.
          const response = await (this.#options.fetch ?? globalThis.fetch)(call.href, init);
          first = { response, text: await readBodyText(response, this.#options.maxResponseBytes) };
        }
      } catch (error) {
        if (user?.aborted || error instanceof CrmError) throw error;
        first = { error, timedOut: timer.signal.aborted };
      } finally {
        this.#timeouts.end(timeout);
      }
      const { response, text } = 'response' in first && first.response.ok ? first : await this.#retried(call, first);
      return this.#unwrap(endpoint, call.where, text, response);
    } catch (error) {
      throw this.#toCrmError(error, call);
    }
  }

  /** Every attempt after a first that failed, by ky; without ky, the first attempt's outcome as it is. */
  async #retried(call: Call, first: Outcome): Promise<Received> {
    const retrier = this.#retrier ?? (await this.#loadRetrier().catch(() => undefined));
    if (!retrier) throw new Unretried(first);
    return retrier.run(call, first);
  }

  /** One attempt: fetch, read the body within the size limit, log. */
  async #fetchText(input: RequestInfo | URL, init: RequestInit | undefined, attempts: { count: number } | undefined) {
    const started = performance.now();
    let status = 0;
    let failure: unknown;
    try {
      // Looked up at call time, so a fetch patched later (MSW, instrumentation) is the one used.
      const response = await (this.#options.fetch ?? globalThis.fetch)(input, init);
      status = response.status;
      return { response, text: await readBodyText(response, this.#options.maxResponseBytes) };
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      if (attempts) {
        attempts.count += 1;
        const request = input instanceof Request ? input : new Request(input, init);
        this.#log(request, status, failure, performance.now() - started, attempts.count);
      }
    }
  }

  #log(request: Request, status: number, failure: unknown, durationMs: number, attempt: number) {
    const url = new URL(request.url);
    const entry: CrmRequestLog = {
      method: request.method,
      url: `${url.pathname}${url.search}`,
      status,
      error:
        failure === undefined
          ? undefined
          : this.#redact(failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure)),
      durationMs,
      attempt,
      headers: Object.fromEntries(redactHeaders(request.headers, this.#redact)),
    };
    try {
      this.#options.logger?.(formatLogLine(entry), entry);
    } catch {
      // A failing log sink must not turn an answered call into a failure (and a create into a retry).
    }
  }

  /**
   * The client's headers and the call's credentials. Most calls have the same ones as the call
   * before (one tenant, no per-call headers, no body): they share one object, never changed,
   * instead of building it again.
   */
  #headersFor(endpoint: Endpoint, tenantId: string | undefined): Readonly<Record<string, string>> {
    const last = this.#lastHeaders;
    if (last?.auth === endpoint.auth && last.tenantId === tenantId) return last.headers;
    const headers = { ...this.#headers, ...this.#credentials(endpoint, tenantId) };
    this.#lastHeaders = { auth: endpoint.auth, tenantId, headers };
    return headers;
  }

  #credentials(endpoint: Endpoint, tenantId: string | undefined): Record<string, string> {
    const { apiKey, adminToken } = this.#options;
    if (endpoint.auth === 'admin') {
      if (!adminToken) throw missing('adminToken', 'CRM_ADMIN_TOKEN');
      return { authorization: `Bearer ${adminToken}` };
    }
    if (!apiKey) throw missing('apiKey', 'CRM_API_KEY');
    if (!tenantId) throw missing('tenantId', 'CRM_TENANT_ID');
    return { 'x-api-key': apiKey, 'x-tenant-id': tenantId };
  }

  #unwrap<E extends Endpoint>(
    endpoint: E,
    where: string,
    text: string,
    response: Response,
  ): RawResult<z.output<E['data']>> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      const type = response.headers.get('content-type') ?? 'no content type';
      throw new CrmResponseValidationError(
        `Expected a JSON envelope from ${where}, got ${type}: ${this.#redact(text.slice(0, 200))}`,
        { ...this.#facts(response), body: this.#redact(text) },
        [{ field: '', path: [], message: `Not JSON (${type})` }],
      );
    }
    if (typeof json === 'object' && json !== null && (json as { success?: unknown }).success === false) {
      throw this.#apiError(response.status, json, response.headers, where, 'success: false');
    }
    if (!this.#options.validateResponses && isFramed(endpoint, json)) {
      return {
        data: json.data as z.output<E['data']>,
        pagination: json.pagination as Pagination | undefined,
        response,
      };
    }
    // Unvalidated responses that are not even an envelope get the full check, for its precise error.
    const result = endpoint.parseEnvelope(json);
    if (!result.success) {
      const issues = issuesOf(result.error);
      throw new CrmResponseValidationError(
        `Unexpected response from ${where}: ${issues.map((i) => `${i.field || '(body)'}: ${i.message}`).join('; ')}`,
        { ...this.#facts(response), body: this.#redact(json) },
        issues,
      );
    }
    const envelope = result.data as { data: z.output<E['data']>; pagination?: Pagination };
    return { data: envelope.data, pagination: envelope.pagination, response };
  }

  #toCrmError(error: unknown, { where, options, deadline }: Call): CrmError {
    if (error instanceof CrmError) return error;
    if (options?.signal?.aborted) return new CrmAbortError(`Aborted: ${where}`, { cause: options.signal.reason });
    const failure = error instanceof Unretried ? error.failure : this.#retrier?.failureOf(error);
    if (failure?.kind === 'http') {
      const { status, headers, statusText, text, note } = failure;
      return this.#apiError(status, parseLenient(text), headers, where, statusText, note);
    }
    if (failure?.kind === 'timeout') {
      // ky's timer may fire a millisecond or two early, hence the tolerance.
      if (deadline !== undefined && Date.now() >= deadline - 10) {
        const total = options?.totalTimeout ?? this.#options.totalTimeout;
        return new CrmTimeoutError(`Not done within totalTimeout (${total} ms), retries included: ${where}`);
      }
      return new CrmTimeoutError(`No response within ${options?.timeout ?? this.#options.timeout} ms: ${where}`);
    }
    const cause = redactError(failure?.kind === 'network' ? failure.cause : error, this.#redact);
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    return new CrmConnectionError(`Connection failed: ${where}${reason}`, { cause });
  }

  #apiError(status: number, body: unknown, headers: Headers, where: string, fallback: string, note?: string) {
    const safeBody = this.#redact(body);
    const said = this.#redact(note ?? serverMessageOf(safeBody) ?? fallback);
    const ErrorClass = apiErrorClassFor(status);
    return new ErrorClass(`${status} from ${where}${said ? `: ${said}` : ''}`, {
      status,
      body: safeBody,
      headers: this.#safeHeaders(headers),
    });
  }

  /** The facts of an answer that failed the call; only failures mask a copy of its headers. */
  #facts(response: Response) {
    return { status: response.status, headers: this.#safeHeaders(response.headers) };
  }

  #safeHeaders(headers: Headers): Headers {
    return redactHeaders(headers, this.#redact);
  }
}

/** Drops credential headers from caller-supplied headers: the client's own always win. */
function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.includes(name.toLowerCase())) out[name] = value;
  }
  return out;
}

/** `?tenantId=t&a=1&b=2` from the tenant and the defined values, percent-encoded; empty when there are none. */
function queryString(params: Record<string, unknown> | undefined, tenantId: string | undefined): string {
  let text = tenantId === undefined ? '' : `?tenantId=${encodeURIComponent(tenantId)}`;
  // Concatenation rather than URLSearchParams: this runs on every call, and costs a third as much.
  for (const name in params) {
    const value = params[name];
    if (value !== undefined)
      text += `${text ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
  }
  return text;
}

/** An envelope's frame: success, and data of the right kind; the records' fields are not looked at. */
function isFramed(endpoint: Endpoint, json: unknown): json is { data: unknown; pagination?: unknown } {
  const envelope = json as { success?: unknown; data?: unknown } | null;
  if (typeof envelope !== 'object' || envelope === null || envelope.success !== true) return false;
  return endpoint.list ? Array.isArray(envelope.data) : typeof envelope.data === 'object' && envelope.data !== null;
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

function missing(field: string, variable: string): CrmValidationError {
  return new CrmValidationError(
    [{ field, path: [field], message: `Required for this call: pass ${field} to new CrmClient() or set ${variable}` }],
    'Missing credential',
  );
}
