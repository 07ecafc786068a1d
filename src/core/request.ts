import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options } from 'ky';
import type * as z from 'zod';
import type { RequestOptions, ResolvedOptions } from '../options';
import { checkRequestOptions } from '../options';
import type { Pagination } from '../schemas/pagination';
import { readBodyText } from './body';
import type { Endpoint, EndpointInput } from './endpoint';
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
import { Limiter } from './limiter';
import { type CrmRequestLog, formatLogLine } from './log';
import { fillPath } from './path';
import { redactError, redactHeaders, redactor } from './redact';
import { retryPolicy } from './retry';

/** What one call brings back: the envelope's `data`, its `pagination` on lists, and the response. */
export interface RawResult<T> {
  readonly data: T;
  readonly pagination: Pagination | undefined;
  readonly response: Response;
}

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-tenant-id'];

// Bodies are read inside fetch, so that timeouts, retries (a reset mid-body is a network error)
// and the size limit cover them; ky then gets a bodiless Response, keyed here to its text.
const bodies = new WeakMap<Response, string>();

/**
 * THE request path. Every endpoint goes through `request()`: check credentials and input, place
 * the tenant, fill the path, call ky (which owns retries and timeouts), unwrap the envelope, and
 * turn every failure into a `CrmError`. One Transport is shared by a client and its `withTenant()` clients.
 */
export class Transport {
  readonly #ky: KyInstance;
  readonly #options: ResolvedOptions;
  readonly #redact: <T>(value: T) => T;
  readonly #limiter: Limiter | undefined;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#redact = redactor([options.apiKey, options.adminToken]);
    this.#limiter = options.maxConcurrency ? new Limiter(options.maxConcurrency) : undefined;
    const headers = Object.fromEntries(
      Object.entries(options.headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
    );
    this.#ky = ky.create({
      prefix: options.baseUrl,
      timeout: options.timeout,
      ...(options.totalTimeout ? { totalTimeout: options.totalTimeout } : {}),
      retry: retryPolicy(options.maxRetries, options.maxRetryAfter),
      headers: { accept: 'application/json', ...headers },
      fetch: (input, init) => this.#send(input, init, undefined),
    });
  }

  /** The base URL, for display. */
  get baseUrl(): string {
    return this.#options.baseUrl;
  }

  async request<E extends Endpoint>(
    endpoint: E,
    input: EndpointInput<E>,
    tenantId: string | undefined,
    options: RequestOptions | undefined,
  ): Promise<RawResult<z.output<E['data']>>> {
    const headers = this.#credentials(endpoint, tenantId);
    if (options) checkRequestOptions(options);
    const parsed = endpoint.input.safeParse(input);
    if (!parsed.success) throw new CrmValidationError(issuesOf(parsed.error, 1));
    const { path, query, body } = parsed.data;

    const url = path ? fillPath(endpoint.path, path) : endpoint.path;
    const kyOptions: Options = { method: endpoint.method, headers };
    const inQuery = endpoint.tenantIn === 'query' ? { tenantId, ...(query as object) } : query;
    if (inQuery) kyOptions.searchParams = inQuery as Record<string, string | number | boolean | undefined>;
    if (endpoint.tenantIn === 'body') kyOptions.json = { tenantId, ...(body as object) };
    else if (body !== undefined) kyOptions.json = body;
    if (options) this.#applyCallOptions(kyOptions, options);
    if (this.#options.logger) {
      // Attempts are counted per call, so each log line can say which one it was.
      const attempts = { count: 0 };
      kyOptions.fetch = (input, init) => this.#send(input, init, attempts);
    }

    const where = `${endpoint.method} /${url}`;
    const started = Date.now();
    const total = options?.totalTimeout ?? this.#options.totalTimeout;
    const deadline = total === undefined ? undefined : started + total;
    if (deadline !== undefined) kyOptions.context = { deadline };
    const send = () => {
      // Time spent queued for a slot counts against the whole call's budget.
      if (deadline !== undefined) kyOptions.totalTimeout = Math.max(1, deadline - Date.now());
      return this.#ky(url, kyOptions);
    };
    let response: Response;
    try {
      response = await (this.#limiter ? this.#limiter.run(send, options?.signal, where, deadline) : send());
    } catch (error) {
      throw this.#toCrmError(error, where, options, started);
    }
    return this.#unwrap(endpoint, where, bodies.get(response) ?? '', response);
  }

  /** One attempt: fetch, read the body within the size limit, log. */
  async #send(input: RequestInfo | URL, init: RequestInit | undefined, attempts: { count: number } | undefined) {
    const started = performance.now();
    let status = 0;
    let failure: unknown;
    try {
      // Looked up at call time, so a fetch patched later (MSW, instrumentation) is the one used.
      const response = await (this.#options.fetch ?? globalThis.fetch)(input, init);
      status = response.status;
      const text = await readBodyText(response, this.#options.maxResponseBytes);
      const { statusText, headers } = response;
      const bare = new Response(null, { status, statusText, headers });
      bodies.set(bare, text);
      return bare;
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

  #credentials(endpoint: Endpoint, tenantId: string | undefined): Record<string, string> {
    const { apiKey, adminToken } = this.#options;
    const headers: Record<string, string> = {};
    if (endpoint.auth === 'admin') {
      if (!adminToken) throw missing('adminToken', 'CRM_ADMIN_TOKEN');
      headers.authorization = `Bearer ${adminToken}`;
      return headers;
    }
    if (!apiKey) throw missing('apiKey', 'CRM_API_KEY');
    if (!tenantId) throw missing('tenantId', 'CRM_TENANT_ID');
    headers['x-api-key'] = apiKey;
    headers['x-tenant-id'] = tenantId;
    return headers;
  }

  #applyCallOptions(kyOptions: Options, options: RequestOptions): void {
    if (options.signal) kyOptions.signal = options.signal;
    if (options.timeout !== undefined) kyOptions.timeout = options.timeout;
    if (options.maxRetries !== undefined) kyOptions.retry = { limit: options.maxRetries };
    if (options.totalTimeout !== undefined) kyOptions.totalTimeout = options.totalTimeout;
    if (options.headers) {
      const own = kyOptions.headers as Record<string, string>;
      for (const [name, value] of Object.entries(options.headers)) {
        if (!CREDENTIAL_HEADERS.includes(name.toLowerCase())) own[name] = value;
      }
    }
  }

  #unwrap<E extends Endpoint>(
    endpoint: E,
    where: string,
    text: string,
    response: Response,
  ): RawResult<z.output<E['data']>> {
    const facts = { status: response.status, headers: this.#safeHeaders(response.headers) };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      const type = response.headers.get('content-type') ?? 'no content type';
      throw new CrmResponseValidationError(
        `Expected a JSON envelope from ${where}, got ${type}: ${this.#redact(text.slice(0, 200))}`,
        { ...facts, body: this.#redact(text) },
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
    const result = endpoint.envelope.safeParse(json);
    if (!result.success) {
      const issues = issuesOf(result.error);
      throw new CrmResponseValidationError(
        `Unexpected response from ${where}: ${issues.map((i) => `${i.field || '(body)'}: ${i.message}`).join('; ')}`,
        { ...facts, body: this.#redact(json) },
        issues,
      );
    }
    const envelope = result.data as { data: z.output<E['data']>; pagination?: Pagination };
    return { data: envelope.data, pagination: envelope.pagination, response };
  }

  #toCrmError(error: unknown, where: string, options: RequestOptions | undefined, started: number): CrmError {
    if (error instanceof CrmError) return error;
    if (options?.signal?.aborted) return new CrmAbortError(`Aborted: ${where}`, { cause: options.signal.reason });
    if (isHTTPError(error)) {
      const { status, headers, statusText } = error.response;
      return this.#apiError(status, parseLenient(bodies.get(error.response)), headers, where, statusText);
    }
    if (isTimeoutError(error)) {
      const total = options?.totalTimeout ?? this.#options.totalTimeout;
      // ky's timer may fire a millisecond or two early, hence the tolerance.
      if (total !== undefined && Date.now() - started >= total - 10) {
        return new CrmTimeoutError(`Not done within totalTimeout (${total} ms), retries included: ${where}`);
      }
      return new CrmTimeoutError(`No response within ${options?.timeout ?? this.#options.timeout} ms: ${where}`);
    }
    const cause = redactError(isNetworkError(error) ? error.cause : error, this.#redact);
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    return new CrmConnectionError(`Connection failed: ${where}${reason}`, { cause });
  }

  #apiError(status: number, body: unknown, headers: Headers, where: string, fallback: string) {
    const safeBody = this.#redact(body);
    const said = serverMessageOf(safeBody) ?? this.#redact(fallback);
    const ErrorClass = apiErrorClassFor(status);
    return new ErrorClass(`${status} from ${where}${said ? `: ${said}` : ''}`, {
      status,
      body: safeBody,
      headers: this.#safeHeaders(headers),
    });
  }

  #safeHeaders(headers: Headers): Headers {
    return redactHeaders(headers, this.#redact);
  }
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
