import type { CrmLogger } from './core/log';
import type { PaceStore } from './core/pace-store';

/** What an `apiKey` function is called with: the tenant of the call. */
export interface ApiKeyContext {
  /** The tenant the call is for. */
  readonly tenantId: string;
}

/**
 * Looks up the API key of a tenant, once per call (not per attempt), so that one client can
 * serve tenants whose keys live in a store of yours. The key it returns is masked like a
 * configured one; if it throws or rejects, the call rejects with a `CrmError` whose `cause` is
 * that error, and nothing is sent.
 *
 * @example
 * ```ts
 * const crm = new CrmClient({ baseUrl, apiKey: ({ tenantId }) => vault.read(`crm/${tenantId}`) });
 * ```
 */
export type ApiKeyProvider = (context: ApiKeyContext) => string | Promise<string>;

/**
 * Your application, named in the User-Agent of every request after the SDK's own:
 * `crm-integration-sdk/0.1.0 (node/24.1.0; linux) invoice-sync/2.3.0 (+https://example.com/sync)`.
 * Each part is printable ASCII (no CR or LF); `name` and `version` up to 100 characters, `url` up to 300.
 */
export interface AppInfo {
  /** Your application's name. */
  readonly name: string;
  /** Its version. */
  readonly version?: string | undefined;
  /** Where to learn about it, or reach its team. */
  readonly url?: string | undefined;
}

/**
 * What `fetch` takes beyond what the SDK sends, merged into every request (first attempts and
 * retries): undici's `dispatcher` (a proxy, connection pools), `keepalive`, `priority`, ... The
 * SDK's own are refused: `method`, `body`, `headers`, `signal` (pass `headers` and `signal` as
 * options of the client) and `redirect` (redirects are followed only within the base URL's origin).
 *
 * @example
 * ```ts
 * import { ProxyAgent } from 'undici';
 * const crm = new CrmClient({ fetchOptions: { dispatcher: new ProxyAgent('http://proxy.corp:3128') } });
 * ```
 */
export type FetchOptions = Omit<RequestInit, 'method' | 'body' | 'headers' | 'signal' | 'redirect'> & {
  readonly [option: string]: unknown;
};

/**
 * Options of `new CrmClient()`: an object (anything else is refused). Credentials fall back to
 * `CRM_*` environment variables; an unknown option is refused with the nearest one named.
 */
export interface ClientOptions extends ClientDefaults {
  /** Root of the API, such as `https://crm.example.com` or `https://host/api/`. Default: `CRM_BASE_URL`. */
  baseUrl?: string | undefined;
  /**
   * The tenant's integration API key, sent as `x-api-key`, or a function that returns the key of
   * the call's tenant. Default: `CRM_API_KEY`.
   */
  apiKey?: string | ApiKeyProvider | undefined;
  /** The tenant every integration call is scoped to. Default: `CRM_TENANT_ID`. */
  tenantId?: string | undefined;
  /** An administrator's bearer token, for `apiKey.status()` and `apiKey.generate()`. Default: `CRM_ADMIN_TOKEN`. */
  adminToken?: string | undefined;
  /** A `fetch` to use instead of the global one (instrumentation, proxies, tests). */
  fetch?: typeof globalThis.fetch | undefined;
  /**
   * At most this many calls in flight at once, across this client and the clients derived from it.
   * Default: no limit. Look-ups of an `apiKey` function are bounded apart, per tenant: at most this
   * many of one tenant's at once, each holding its place until the function answers (even after
   * its call gave up), so that one tenant's hung provider holds its own tenant's places only.
   */
  maxConcurrency?: number | undefined;
  /** The largest response body read, in bytes; a larger one fails with `CrmResponseTooLargeError`. Default: 10 MiB. */
  maxResponseBytes?: number | undefined;
  /**
   * Called once per attempt with a line and its facts; credentials are masked. A logger that
   * throws, or returns a promise that rejects, is ignored.
   */
  logger?: CrmLogger | undefined;
  /**
   * More headers to mask in errors and log lines, by name (any case), beside those always masked:
   * `authorization`, `proxy-authorization`, `x-api-key`, `cookie`, `set-cookie`.
   */
  redactHeaders?: readonly string[] | undefined;
  /**
   * Parse responses with the schemas (the default). `false` trusts the server: the envelope is
   * unwrapped without checking field types, which saves a little time on very large lists.
   */
  validateResponses?: boolean | undefined;
  /** Your application, named in the User-Agent after the SDK (Node, Bun and Deno; a browser sends its own). */
  appInfo?: AppInfo | undefined;
  /** Merged into every request's `fetch` options: undici's `dispatcher` for a proxy, `keepalive`, ... */
  fetchOptions?: FetchOptions | undefined;
}

/**
 * The defaults of every call, which `crm.withOptions()` can change for a derived client (and a
 * call's own options for that call).
 */
export interface ClientDefaults {
  /** Milliseconds one attempt may wait for a response. Default: 30 000. */
  timeout?: number | undefined;
  /** Milliseconds the whole call may take, retries and their waits included. Default: none. */
  totalTimeout?: number | undefined;
  /** How many times a failed call is retried, where retrying is safe. Default: 2. */
  maxRetries?: number | undefined;
  /** The longest `Retry-After` honoured, in milliseconds; a longer one is shortened to it. Default: 60 000. */
  maxRetryAfter?: number | undefined;
  /**
   * Headers added to every request (`withOptions()` adds to the client's, a call's to both). Names
   * are matched in any case: the later one replaces the earlier (`x-job` replaces `X-Job`). They
   * cannot replace the credential headers.
   */
  headers?: Record<string, string> | undefined;
  /**
   * Stops every call of this client and of the clients derived from it once it aborts: calls
   * queued (for a slot, a turn, a key, a retry) at once, calls in flight as their own signal
   * would. A call's own `signal` stops that call too; `withOptions({ signal })` and
   * `withTenant(id, { signal })` add one to the parent's.
   */
  signal?: AbortSignal | undefined;
  /** Pages a `for await` loop fetches ahead of the caller, for every list (see `ListOptions`). Default: 0. */
  prefetch?: number | undefined;
  /**
   * `'auto'` paces the calls of each tenant's key to the rate its server accepts, learned from its
   * 429s (and 503s with `Retry-After`): after a refusal every call of that key waits, then they go
   * just below the rate (README.md, "Bulk work and rate limits"). `{ mode: 'auto', store }` does
   * the same with what is learned kept in `store`, so that every process using that store paces
   * each key as one (`redisStore()` of `crm-integration-sdk/redis`). `'off'`: each call retries
   * on its own. Default: `'off'`.
   */
  throttle?: 'off' | 'auto' | ThrottleOptions | undefined;
}

/** `throttle: { mode: 'auto', store }`: calls paced as with `'auto'`, with the pace shared through a store. */
export interface ThrottleOptions {
  /** `'auto'`, the only mode with a store. */
  mode: 'auto';
  /** Where the pace of each key is kept, shared by every process that uses it. Default: this process's memory (`'auto'`). */
  store?: PaceStore | undefined;
}

/** Options of `crm.withTenant()`. */
export interface TenantOptions {
  /** The tenant's own API key (or a function of the tenant that returns it). Default: the parent client's. */
  apiKey?: string | ApiKeyProvider | undefined;
  /** Stops every call of the derived client, as the parent's `signal` does (which stops them too). */
  signal?: AbortSignal | undefined;
}

/** Options every method takes as its last argument; they override the client's for that call. */
export interface RequestOptions {
  /** Cancels the call (and, for lists, any further page requests). */
  signal?: AbortSignal | undefined;
  /** Milliseconds one attempt may wait for a response. */
  timeout?: number | undefined;
  /** How many times the call is retried, where retrying is safe. */
  maxRetries?: number | undefined;
  /** Extra headers for this call, over the client's (names in any case). They cannot replace the credential headers. */
  headers?: Record<string, string> | undefined;
  /** Milliseconds the whole call may take, retries and their waits included. */
  totalTimeout?: number | undefined;
  /**
   * Query parameters the SDK does not describe yet, added after the call's own were checked (a
   * name the call also sends takes this value). Strings, numbers, booleans, `Date`s (sent as ISO
   * strings) or arrays of them (the parameter repeated); `null` and `undefined` are left out.
   * `tenantId` is refused: the client supplies the tenant.
   *
   * @example
   * ```ts
   * await crm.contacts.list({ limit: 50 }, { extraQuery: { updatedSince: '2026-11-01T00:00:00Z' } });
   * ```
   */
  extraQuery?: Record<string, unknown> | undefined;
  /**
   * Body fields the SDK does not describe yet, merged into the JSON body after the call's own
   * were checked (a field the call also sends takes this value), and sent as given. Refused on
   * calls that send no body (GET), and `tenantId` is refused: the client supplies the tenant.
   */
  extraBody?: Record<string, unknown> | undefined;
}

/** Options of a `list()` call: those of every call, and how many pages to fetch ahead. */
export interface ListOptions extends RequestOptions {
  /**
   * While a `for await` loop works on one page, keep up to this many further pages in flight
   * (never past `pagination.pages`). Default: the client's `prefetch`, which defaults to 0.
   */
  prefetch?: number | undefined;
}
