import * as z from 'zod/mini';
import { CrmValidationError } from './core/errors';
import { issuesOf } from './core/issues';
import { minLength } from './core/length';
import type { CrmLogger } from './core/log';
import { parseContext } from './core/parse-context';

/** A header value: no CR, LF or other control characters (they would split or forge headers). */
const HeaderValue = z
  .string()
  .check(z.regex(/^[\t\x20-\x7e\x80-\xff]*$/, { error: 'Must not contain CR, LF or other control characters' }));
const Credential = HeaderValue.check(minLength(1));
const HeaderName = /^[!#$%&'*+.^_`|~\w-]+$/;
// Values checked as the object's catchall, names by the check: z.record() would do both, and add
// 0.5 KiB gzipped to every app's bundle.
const Headers = z.catchall(z.object({}), HeaderValue).check(
  z.superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      if (!HeaderName.test(name))
        ctx.addIssue({ code: 'custom', message: 'Not a valid header name', path: [name], input: name });
    }
  }),
);
const MAX_TIMER = 2_147_483_647;
const Timeout = z.int().check(z.gte(1), z.lte(MAX_TIMER));
const MaxRetries = z.int().check(z.gte(0), z.lte(10));
const Prefetch = z.int().check(z.gte(0), z.lte(16));
const BASE_URL = 'Required: an http(s) URL (pass baseUrl or set CRM_BASE_URL)';
// The one URL check the SDK needs. zod's z.url() covers far more (hostname patterns,
// normalisation) and adds 0.5 KiB gzipped to every app's bundle.
const isHttpUrl = (value: string) => /^https?:\/\/[^/]/i.test(value) && URL.canParse(value);
const fn = <T>() => z.custom<T>((value) => typeof value === 'function', { error: 'Must be a function' });

/** Options of `new CrmClient()`. Credentials fall back to `CRM_*` environment variables. */
export interface ClientOptions {
  /** Root of the API, such as `https://crm.example.com` or `https://host/api/`. Default: `CRM_BASE_URL`. */
  baseUrl?: string | undefined;
  /** The tenant's integration API key, sent as `x-api-key`. Default: `CRM_API_KEY`. */
  apiKey?: string | undefined;
  /** The tenant every integration call is scoped to. Default: `CRM_TENANT_ID`. */
  tenantId?: string | undefined;
  /** An administrator's bearer token, for `apiKey.status()` and `apiKey.generate()`. Default: `CRM_ADMIN_TOKEN`. */
  adminToken?: string | undefined;
  /** Milliseconds one attempt may wait for a response. Default: 30 000. */
  timeout?: number | undefined;
  /** How many times a failed call is retried, where retrying is safe. Default: 2. */
  maxRetries?: number | undefined;
  /** A `fetch` to use instead of the global one (instrumentation, proxies, tests). */
  fetch?: typeof globalThis.fetch | undefined;
  /** Headers added to every request. They cannot replace the credential headers. */
  headers?: Record<string, string> | undefined;
  /** Milliseconds the whole call may take, retries and their waits included. Default: none. */
  totalTimeout?: number | undefined;
  /** The longest `Retry-After` honoured, in milliseconds; a longer one is shortened to it. Default: 60 000. */
  maxRetryAfter?: number | undefined;
  /** At most this many calls in flight at once, across this client and its `withTenant()` clients. Default: no limit. */
  maxConcurrency?: number | undefined;
  /** The largest response body read, in bytes; a larger one fails with `CrmResponseTooLargeError`. Default: 10 MiB. */
  maxResponseBytes?: number | undefined;
  /** Called once per attempt with a line and its facts; credentials are masked. */
  logger?: CrmLogger | undefined;
  /** Pages a `for await` loop fetches ahead of the caller, for every list (see `ListOptions`). Default: 0. */
  prefetch?: number | undefined;
  /**
   * Parse responses with the schemas (the default). `false` trusts the server: the envelope is
   * unwrapped without checking field types, which saves a little time on very large lists.
   */
  validateResponses?: boolean | undefined;
}

/** Options of a `list()` call: those of every call, and how many pages to fetch ahead. */
export interface ListOptions extends RequestOptions {
  /**
   * While a `for await` loop works on one page, keep up to this many further pages in flight
   * (never past `pagination.pages`). Default: the client's `prefetch`, which defaults to 0.
   */
  prefetch?: number | undefined;
}

/** Options every method takes as its last argument; they override the client's for that call. */
export interface RequestOptions {
  /** Cancels the call (and, for lists, any further page requests). */
  signal?: AbortSignal | undefined;
  /** Milliseconds one attempt may wait for a response. */
  timeout?: number | undefined;
  /** How many times the call is retried, where retrying is safe. */
  maxRetries?: number | undefined;
  /** Extra headers for this call. They cannot replace the credential headers. */
  headers?: Record<string, string> | undefined;
  /** Milliseconds the whole call may take, retries and their waits included. */
  totalTimeout?: number | undefined;
}

export const ClientOptionsSchema = z.object({
  baseUrl: z.string(BASE_URL).check(z.trim(), z.refine(isHttpUrl, BASE_URL)),
  apiKey: z.optional(Credential),
  tenantId: z.optional(Credential),
  adminToken: z.optional(Credential),
  timeout: z.optional(Timeout),
  maxRetries: z.optional(MaxRetries),
  fetch: z.optional(fn<typeof globalThis.fetch>()),
  headers: z.optional(Headers),
  totalTimeout: z.optional(Timeout),
  maxRetryAfter: z.optional(z.int().check(z.gte(0), z.lte(MAX_TIMER))),
  maxConcurrency: z.optional(z.int().check(z.gte(1))),
  maxResponseBytes: z.optional(z.int().check(z.gte(1))),
  logger: z.optional(fn<CrmLogger>()),
  prefetch: z.optional(Prefetch),
  validateResponses: z.optional(z.boolean()),
});

// Strict, so that a misspelt option (`timout`) is an error rather than silently ignored.
export const RequestOptionsSchema = z.strictObject({
  signal: z.optional(
    z.custom<AbortSignal>((value) => value instanceof AbortSignal, { error: 'Must be an AbortSignal' }),
  ),
  timeout: z.optional(Timeout),
  maxRetries: z.optional(MaxRetries),
  headers: z.optional(Headers),
  totalTimeout: z.optional(Timeout),
  // Checked again, with its range, by list(); accepted here because list() passes its options on.
  prefetch: z.optional(z.unknown()),
});

// Wrapped in an object so that an issue names the option.
const PrefetchOption = z.object({ prefetch: Prefetch });
const TenantOption = z.object({ tenantId: Credential });

/**
 * The defaults, applied after the check. Written here rather than with z._default(), which adds
 * 0.2 KiB gzipped to every app's bundle for what these lines say.
 */
const withDefaults = (options: z.output<typeof ClientOptionsSchema>) => ({
  ...options,
  timeout: options.timeout ?? 30_000,
  maxRetries: options.maxRetries ?? 2,
  headers: options.headers ?? {},
  maxRetryAfter: options.maxRetryAfter ?? 60_000,
  maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
  prefetch: options.prefetch ?? 0,
  validateResponses: options.validateResponses ?? true,
});

/** Client options with every default applied and every value checked. */
export type ResolvedOptions = ReturnType<typeof withDefaults>;

const env = (): Record<string, string | undefined> =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

/** Applies the environment fallbacks and defaults, once, at construction. */
export function resolveOptions(options: ClientOptions): ResolvedOptions {
  const vars = env();
  const result = ClientOptionsSchema.safeParse(
    {
      ...options,
      baseUrl: options.baseUrl ?? vars.CRM_BASE_URL,
      apiKey: options.apiKey ?? (vars.CRM_API_KEY || undefined),
      tenantId: options.tenantId ?? (vars.CRM_TENANT_ID || undefined),
      adminToken: options.adminToken ?? (vars.CRM_ADMIN_TOKEN || undefined),
    },
    parseContext,
  );
  if (!result.success) throw new CrmValidationError(issuesOf(result.error), 'Invalid CrmClient options');
  return withDefaults(result.data);
}

/** Checks per-call options; only called when a call passes some. */
export function checkRequestOptions(options: RequestOptions): void {
  const result = RequestOptionsSchema.safeParse(options, parseContext);
  if (!result.success) throw new CrmValidationError(issuesOf(result.error), 'Invalid request options');
}

/** Checks a `prefetch` given to a list call; returns the error, since list() reports it on its promise. */
export function checkPrefetch(prefetch: unknown): CrmValidationError | undefined {
  const result = PrefetchOption.safeParse({ prefetch }, parseContext);
  return result.success ? undefined : new CrmValidationError(issuesOf(result.error), 'Invalid request options');
}

/** Checks a tenant id given to `withTenant()`. */
export function checkTenantId(tenantId: unknown): string {
  const result = TenantOption.safeParse({ tenantId }, parseContext);
  if (!result.success) throw new CrmValidationError(issuesOf(result.error), 'Invalid tenant');
  return result.data.tenantId;
}
