import ky, { isHTTPError, isNetworkError, isTimeoutError, type KyInstance, type Options } from 'ky';
import type * as z from 'zod';
import type { RequestOptions, ResolvedOptions } from '../options';
import { checkRequestOptions } from '../options';
import type { Pagination } from '../schemas/pagination';
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

/**
 * THE request path. Every endpoint goes through `request()`: check credentials and input, place
 * the tenant, fill the path, call ky (which owns retries and timeouts), unwrap the envelope, and
 * turn every failure into a `CrmError`. One Transport is shared by a client and its `withTenant()` clients.
 */
export class Transport {
  readonly #ky: KyInstance;
  readonly #options: ResolvedOptions;
  readonly #redact: <T>(value: T) => T;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#redact = redactor([options.apiKey, options.adminToken]);
    const headers = Object.fromEntries(
      Object.entries(options.headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
    );
    this.#ky = ky.create({
      prefix: options.baseUrl,
      timeout: options.timeout,
      retry: retryPolicy(options.maxRetries),
      // ky parses error bodies with this; keeping unparsable text means a broken JSON error body is not lost.
      parseJson: (text) => {
        try {
          return JSON.parse(text);
        } catch {
          return text;
        }
      },
      headers: { accept: 'application/json', ...headers },
      ...(options.fetch ? { fetch: options.fetch } : {}),
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

    const where = `${endpoint.method} /${url}`;
    const call = this.#ky(url, kyOptions);
    let text: string;
    let response: Response;
    try {
      text = await call.text();
      response = await call;
    } catch (error) {
      throw this.#toCrmError(error, where, options);
    }
    return this.#unwrap(endpoint, where, text, response);
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

  #toCrmError(error: unknown, where: string, options: RequestOptions | undefined): CrmError {
    if (error instanceof CrmError) return error;
    if (options?.signal?.aborted) return new CrmAbortError(`Aborted: ${where}`, { cause: options.signal.reason });
    if (isHTTPError(error)) {
      const { status, headers, statusText } = error.response;
      return this.#apiError(status, error.data, headers, where, statusText);
    }
    if (isTimeoutError(error)) {
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

function missing(field: string, variable: string): CrmValidationError {
  return new CrmValidationError(
    [{ field, path: [field], message: `Required for this call: pass ${field} to new CrmClient() or set ${variable}` }],
    'Missing credential',
  );
}
