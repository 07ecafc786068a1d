import type * as z from 'zod/mini';
import { endpoints } from '../endpoints';
import type { Endpoint } from '../internal/endpoint/define';
import { issuesOf } from '../internal/endpoint/issues';
import { FakeHttpError } from './http-error';
import { type Bucket, checkRateLimit, type FakeRateLimit, take } from './rate-limit';
import type { FakeSeed } from './records';
import { type FakeRoute, routes } from './routes';
import { checkStorage, type FakeStorage, normalized } from './storage';
import { FakeStore } from './store';
import { servedTenantsOf } from './tenants';

/**
 * The name of an endpoint, as in the SDK's endpoint table (`getOpportunity`, `listContacts`, ...).
 * @useDeclaredType
 */
export type FakeEndpointName = keyof typeof endpoints;

/** A failure the fake answers instead of handling the next matching calls. */
export interface FakeFault {
  /** Only calls of this endpoint; every endpoint when omitted. */
  endpoint?: FakeEndpointName | undefined;
  /** How many calls answer with this fault. Default 1. */
  times?: number | undefined;
  /** Answer with this HTTP status (and a JSON error body). */
  status?: number | undefined;
  /** `Retry-After` to send with the status: seconds, or an HTTP date. */
  retryAfter?: number | string | undefined;
  /**
   * Wait this long before answering (or before handling, when there is no status). With
   * `applied`, the request is handled at once and only its answer waits: past a client's timeout,
   * a create that exists although the client gave up on it.
   */
  delayMs?: number | undefined;
  /** Drop the connection: no response at all. */
  drop?: boolean | undefined;
  /**
   * Handle the request first (a create stores its record), then answer with the fault: with
   * `drop`, the connection drops after the record is stored; with `status`, the record is stored
   * and the answer is that status; with `delayMs` alone, the true answer comes late. What the
   * in-doubt paths of a client (and `crm-integration-sdk/sync`) must survive.
   */
  applied?: boolean | undefined;
  /** A body to send instead of the fake's JSON error (a string is sent as HTML). */
  body?: unknown;
}

/** One request the fake received, for assertions. */
export interface FakeRequest {
  /** The endpoint it matched, or null for an unknown route. */
  readonly endpoint: FakeEndpointName | null;
  readonly method: string;
  /** The path below the base URL, such as `/integrations/v1/contacts`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, or undefined. */
  readonly body: unknown;
  /** The status the fake answered (0 for a dropped connection). */
  status: number;
  /** The `x-request-id` the fake answered with (a dropped connection sends none). */
  readonly requestId: string;
  /** When the fake received it: milliseconds since the epoch, by the fake's clock (`now`). */
  readonly receivedAt: number;
}

/** Options of `createFakeCrm()`. */
export interface FakeCrmOptions {
  /** The base URL the MSW handlers answer under. Default `https://crm.fake`. */
  baseUrl?: string | undefined;
  /** The tenant created up front, the fake's own. Default: the first of `seed.tenants`, else `tenant_demo`. */
  tenantId?: string | undefined;
  /** Its integration API key; `null` for a tenant that has none until an admin generates it. */
  apiKey?: string | null | undefined;
  /** The bearer token of the tenant's administrator. */
  adminToken?: string | undefined;
  /**
   * Tenants and records to start with (see also `generateFakeData()`), as `crm-fake --seed` serves
   * them: a tenant without `apiKey` gets `fake-api-key-<id>` (`null`: none yet), and each tenant
   * but the fake's own without an administrator gets one whose token is `fake-admin-token-<id>`.
   */
  seed?: FakeSeed | undefined;
  /**
   * The fake's clock, for deterministic timestamps; the rate limit's buckets refill by it too (a
   * clock that stands still never refills them). Default: `new Date()`, which fake timers control.
   */
  now?: (() => Date) | undefined;
  /** Page size when a list call sends no `limit` (the spec does not show the default). Default 20. */
  defaultLimit?: number | undefined;
  /**
   * Limits the requests of each credential (each `x-api-key`; for the admin endpoints, each bearer
   * token) with a token bucket of `burst` requests that refills at `perSecond`. A request over the
   * limit is answered 429 `RATE_LIMITED` with `Retry-After` (whole seconds until a request would
   * be accepted, at least 1), and changes nothing. A tenant's own `rateLimit` (see `FakeTenant`)
   * replaces this one for its API key. Default: no limit.
   *
   * @example
   * ```ts
   * const fake = createFakeCrm({ rateLimit: { perSecond: 200, burst: 20 } });
   * ```
   */
  rateLimit?: FakeRateLimit | undefined;
  /** Milliseconds every answer is delayed by, errors and 429s included, as a distant server's would be. Default 0. */
  latencyMs?: number | undefined;
  /**
   * The largest request body the fake reads, in bytes, as an API gateway caps them. A larger one
   * is answered 413 `PAYLOAD_TOO_LARGE` once this much of it has arrived (at once, when its
   * `content-length` says so), and the rest is not read. Default 4 MiB (4,194,304).
   */
  maxRequestBytes?: number | undefined;
  /**
   * The most requests the `requests` log keeps: past it, the oldest go first, and
   * `requests.dropped` counts them. A fake left running as a shared server would otherwise grow
   * with every request. 0 keeps none. Default 10,000.
   */
  maxLoggedRequests?: number | undefined;
  /**
   * The most bytes of requests (bodies, paths, queries and headers, as received) the `requests`
   * log keeps: past it, the oldest go first, and `requests.dropped` counts them. 60 bodies of
   * 4 MiB held 362 MiB. Default 64 MiB (67,108,864); the newest request is kept whatever its size.
   */
  maxLoggedBytes?: number | undefined;
  /**
   * How created and updated records are stored: `'as-sent'` (the default) keeps every value as
   * sent; `'normalizing'` stores them as a server that reformats them would (strings trimmed,
   * emails in lower case, phones as `+` and digits, date-times to the second, in UTC), since the
   * spec does not show how the service stores what it is sent. See {@link FakeStorage}.
   *
   * @example
   * ```ts
   * const fake = createFakeCrm({ storage: 'normalizing' });
   * // activities.create({ ..., activityDate: '2026-11-02T11:00:00.250+01:00' }) stores '2026-11-02T10:00:00Z'
   * ```
   */
  storage?: FakeStorage | undefined;
}

/** `FakeCrmOptions.maxRequestBytes`'s default: 4 MiB, between nginx's 1 and API Gateway's 10. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** `FakeCrmOptions.maxLoggedRequests`'s default. */
const MAX_LOGGED_REQUESTS = 10_000;
/** `FakeCrmOptions.maxLoggedBytes`'s default: 64 MiB. */
const MAX_LOGGED_BYTES = 64 * 1024 * 1024;

/**
 * The requests a fake received, oldest first, within `maxLoggedRequests` and `maxLoggedBytes`:
 * an array, with `dropped`, the number of older requests it let go.
 */
export interface FakeRequestLog extends Array<FakeRequest> {
  /** How many requests, the oldest, were dropped to keep the log within its bounds (0 after `reset()`). */
  readonly dropped: number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const errorBody = (code: string, message: string, details?: unknown) => ({
  success: false,
  error: { code, message, ...(details === undefined ? {} : { details }) },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A request's body as text, read up to `max` bytes: undefined when it is longer, and then the
 * rest is not read (a 256 MiB POST would otherwise be held whole in memory).
 */
async function textOf(request: Request, max: number): Promise<{ text: string | undefined; bytes: number }> {
  if (Number(request.headers.get('content-length') ?? 0) > max) {
    await request.body?.cancel().catch(() => {});
    return { text: undefined, bytes: 0 };
  }
  if (!request.body) return { text: '', bytes: 0 };
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), bytes: size };
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return { text: undefined, bytes: 0 };
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** A bound given as an option: a whole number, 0 or more. */
function wholeOption(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number, 0 or more, not ${value}`);
  }
  return value;
}

/** A new `x-request-id`, unique per answer across fakes, as a service's would be. */
export function newRequestId(): string {
  // getRandomValues, not randomUUID: the latter exists only in secure contexts in browsers.
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `req_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const compiled = Object.entries(endpoints).map(([name, endpoint]) => ({
  name: name as FakeEndpointName,
  endpoint: endpoint as Endpoint,
  pattern: new RegExp(`^/${endpoint.path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}/?$`),
}));

/**
 * The fake CRM without any transport: `handle()` turns a fetch `Request` into a `Response` by
 * the spec's rules. `createFakeCrm()` puts MSW handlers around it; `startFakeCrmServer()` a
 * node:http server.
 */
export class FakeCrmCore {
  readonly store: FakeStore;
  /**
   * The requests received, oldest first: the newest `maxLoggedRequests`, within `maxLoggedBytes`.
   * `requests.dropped` says how many older ones were let go.
   */
  readonly requests: FakeRequestLog;
  readonly baseUrl: string;
  readonly tenantId: string;
  readonly adminToken: string;
  readonly #basePath: string;
  readonly #faults: (FakeFault & { left: number })[] = [];
  readonly #defaultLimit: number;
  readonly #clock: () => Date;
  readonly #storage: FakeStorage;
  #rateLimit: FakeRateLimit | undefined;
  // By credential, with its kind in front so that an API key and a bearer token never share one.
  readonly #buckets = new Map<string, Bucket>();
  /** Milliseconds every answer is delayed by (`FakeCrmOptions.latencyMs`). */
  readonly latencyMs: number;
  readonly #maxRequestBytes: number;
  readonly #maxLogged: { readonly requests: number; readonly bytes: number };
  /** The log's bytes, and each entry's, so that dropping one takes its size off. */
  readonly #logged = { bytes: 0, dropped: 0, sizes: new WeakMap<FakeRequest, number>() };

  /**
   * Throws a RangeError for an invalid `rateLimit`, `latencyMs`, `maxRequestBytes`,
   * `maxLoggedRequests`, `maxLoggedBytes` or `storage`.
   */
  constructor(options: FakeCrmOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'https://crm.fake').replace(/\/+$/, '');
    this.#basePath = new URL(this.baseUrl).pathname.replace(/\/+$/, '');
    // The same tenants as `crm-fake --seed` serves from the same JSON (tenants.ts).
    const served = options.seed ? servedTenantsOf(options.seed, options) : undefined;
    this.tenantId = served?.tenantId ?? options.tenantId ?? 'tenant_demo';
    this.adminToken = options.adminToken ?? `fake-admin-token-${this.tenantId}`;
    this.#defaultLimit = options.defaultLimit ?? 20;
    this.#clock = options.now ?? (() => new Date());
    this.#storage = checkStorage(options.storage);
    checkRateLimit(options.rateLimit, 'rateLimit');
    this.#rateLimit = options.rateLimit;
    const latency = options.latencyMs ?? 0;
    // setTimeout fires at once for a delay past 2^31 - 1 ms.
    if (!Number.isFinite(latency) || latency < 0 || latency > 2 ** 31 - 1) {
      throw new RangeError(`latencyMs must be a number of milliseconds from 0 to 2147483647, not ${latency}`);
    }
    this.latencyMs = latency;
    const max = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxRequestBytes must be a whole number of bytes, 0 or more, not ${max}`);
    }
    this.#maxRequestBytes = max;
    this.#maxLogged = {
      requests: wholeOption('maxLoggedRequests', options.maxLoggedRequests ?? MAX_LOGGED_REQUESTS),
      bytes: wholeOption('maxLoggedBytes', options.maxLoggedBytes ?? MAX_LOGGED_BYTES),
    };
    const logged = this.#logged;
    // Not enumerable: the log compares, spreads and prints as the array it is.
    this.requests = Object.defineProperty([] as FakeRequest[], 'dropped', {
      get: () => logged.dropped,
      enumerable: false,
    }) as FakeRequestLog;
    this.store = new FakeStore(options.now, this.tenantId);
    this.store.addTenant({
      id: this.tenantId,
      apiKey: options.apiKey === undefined ? `fake-api-key-${this.tenantId}` : options.apiKey,
    });
    this.store.users.set('usr_admin', {
      id: 'usr_admin',
      tenantId: this.tenantId,
      name: 'Demo Admin',
      token: this.adminToken,
      role: 'admin',
    });
    this.store.grants.set('grant_demo', {
      id: 'grant_demo',
      tenantId: this.tenantId,
      status: 'active',
      scopes: ['crm.read', 'crm.write'],
    });
    if (served) this.store.seed(served.seed);
  }

  /** The credentials the fake accepts now (the API key changes when it is rotated). */
  get credentials(): { baseUrl: string; tenantId: string; apiKey: string | undefined; adminToken: string } {
    const apiKey = this.store.tenants.get(this.tenantId)?.apiKey ?? undefined;
    return { baseUrl: this.baseUrl, tenantId: this.tenantId, apiKey, adminToken: this.adminToken };
  }

  /**
   * The rate limit of every credential whose tenant has none of its own (`FakeCrmOptions.rateLimit`);
   * undefined for none. Set it to raise, lower or lift the limit mid-test: each bucket keeps the
   * tokens it held at its last request (at most the new `burst`), and refills from then on at the
   * new pace.
   */
  get rateLimit(): FakeRateLimit | undefined {
    return this.#rateLimit;
  }

  /** Changes the rate limit, as described above; throws a RangeError for an invalid one. */
  set rateLimit(limit: FakeRateLimit | undefined) {
    checkRateLimit(limit, 'rateLimit');
    this.#rateLimit = limit;
  }

  /** Makes the next `times` matching calls fail as described. */
  failNext(fault: FakeFault): void {
    this.#faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Forgets pending faults and the request log, and fills every rate limit's bucket again. */
  reset(): void {
    this.#faults.length = 0;
    this.requests.length = 0;
    this.#logged.bytes = 0;
    this.#logged.dropped = 0;
    this.#buckets.clear();
  }

  /** Adds a request to the log, and lets the oldest go while the log is over either bound. */
  #log(entry: FakeRequest, size: number): void {
    const log = this.requests;
    const logged = this.#logged;
    // A test may empty the log itself (`requests.length = 0`).
    if (log.length === 0) logged.bytes = 0;
    let bytes = size;
    for (const [name, value] of Object.entries(entry.headers)) bytes += name.length + value.length;
    logged.sizes.set(entry, bytes);
    logged.bytes += bytes;
    log.push(entry);
    let over = 0;
    let freed = 0;
    const { requests, bytes: most } = this.#maxLogged;
    // The newest is kept whatever its size (not with maxLoggedRequests: 0): a test reads its own request.
    while (
      over < log.length &&
      (log.length - over > requests || (over < log.length - 1 && logged.bytes - freed > most))
    ) {
      freed += logged.sizes.get(log[over] as FakeRequest) ?? 0;
      over++;
    }
    if (over === 0) return;
    // One splice for the run of oldest entries: shifting them one at a time is quadratic.
    log.splice(0, over);
    logged.bytes -= freed;
    logged.dropped += over;
  }

  /**
   * Removes every record (accounts, contacts, opportunities, activities) consistently, lists
   * included; tenants, keys, users and grants stay, and so do faults and the request log
   * (`reset()` clears those).
   *
   * @example
   * ```ts
   * afterEach(() => {
   *   fake.clear();
   *   fake.reset();
   * });
   * ```
   */
  clear(): void {
    this.store.clear();
  }

  /** Answers one request. A dropped connection is `Response.error()` (status 0). */
  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname.startsWith(this.#basePath) ? url.pathname.slice(this.#basePath.length) : url.pathname;
    const match = compiled.find((c) => c.endpoint.method === request.method && c.pattern.test(path));
    const { text, bytes } =
      request.method === 'GET' || request.method === 'HEAD'
        ? { text: '', bytes: 0 }
        : await textOf(request, this.#maxRequestBytes);
    let body: unknown;
    let badJson = false;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      badJson = true;
    }
    const entry: FakeRequest = {
      endpoint: match?.name ?? null,
      method: request.method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(request.headers),
      body: badJson ? text : body,
      status: 0,
      requestId: newRequestId(),
      receivedAt: this.#clock().getTime(),
    };
    this.#log(entry, bytes + url.pathname.length + url.search.length);

    let response: Response;
    try {
      response =
        text === undefined
          ? json(
              413,
              errorBody('PAYLOAD_TOO_LARGE', `Request body over ${this.#maxRequestBytes} bytes: the rest was not read`),
              { connection: 'close' },
            )
          : await this.#respond(entry, match, badJson);
    } catch (error) {
      // A bug of the fake: answered like any error, so that both transports report it the same way.
      response = json(500, errorBody('FAKE_CRASHED', String(error)));
    }
    if (response.type !== 'error') response.headers.set('x-request-id', entry.requestId);
    entry.status = response.status;
    if (this.latencyMs > 0) await sleep(this.latencyMs);
    return response;
  }

  async #respond(entry: FakeRequest, match: (typeof compiled)[number] | undefined, badJson: boolean) {
    const fault = this.#takeFault(entry.endpoint);
    if (fault?.applied) {
      const answer = await this.#handled(entry, match, badJson);
      if (fault.delayMs) await sleep(fault.delayMs);
      if (fault.drop) return Response.error();
      return fault.status ? this.#faultResponse(fault) : answer;
    }
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault?.drop) return Response.error();
    if (fault?.status) return this.#faultResponse(fault);
    return this.#handled(entry, match, badJson);
  }

  /** The request handled as the API would: rate limited, routed, checked, applied. */
  async #handled(entry: FakeRequest, match: (typeof compiled)[number] | undefined, badJson: boolean) {
    const wait = this.#throttle(entry, match);
    if (wait > 0) {
      return json(429, errorBody('RATE_LIMITED', `Too many requests: retry after ${wait} s`), {
        'retry-after': String(wait),
      });
    }
    try {
      if (!match) throw new FakeHttpError(404, 'NOT_FOUND', `No endpoint ${entry.method} ${entry.path}`);
      if (badJson) throw new FakeHttpError(400, 'INVALID_JSON', 'The body is not valid JSON');
      const groups = match.pattern.exec(entry.path)?.groups ?? {};
      const params = Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, decodeSegment(v)]));
      const route = routes[match.name] as FakeRoute;
      const result = route(this.#context(match.endpoint, entry, params));
      return json(match.endpoint.method === 'POST' ? 201 : 200, { success: true, ...result });
    } catch (error) {
      if (error instanceof FakeHttpError)
        return json(error.status, errorBody(error.code, error.message, error.details));
      throw error;
    }
  }

  /**
   * Takes a token from the bucket of the request's credential: 0 when it may go on, else the
   * seconds to send in `Retry-After`. A request without a credential is not limited (it gets 401).
   */
  #throttle(entry: FakeRequest, match: (typeof compiled)[number] | undefined): number {
    const key = entry.headers['x-api-key'];
    let id: string;
    let limit = this.#rateLimit;
    if (key !== undefined && match?.endpoint.auth !== 'admin') {
      id = `key ${key}`;
      for (const tenant of this.store.tenants.values()) {
        if (tenant.rateLimit && tenant.apiKey === key) limit = tenant.rateLimit;
      }
    } else {
      const token = /^Bearer (.+)$/.exec(entry.headers.authorization ?? '')?.[1];
      if (token === undefined) return 0;
      id = `bearer ${token}`;
    }
    if (!limit) return 0;
    let bucket = this.#buckets.get(id);
    if (!bucket) {
      bucket = { tokens: limit.burst, at: entry.receivedAt };
      this.#buckets.set(id, bucket);
    }
    return take(bucket, limit, entry.receivedAt);
  }

  #takeFault(endpoint: FakeEndpointName | null) {
    const fault = this.#faults.find((f) => f.endpoint === undefined || f.endpoint === endpoint);
    if (!fault) return undefined;
    fault.left -= 1;
    if (fault.left <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1);
    return fault;
  }

  #faultResponse(fault: FakeFault): Response {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    if (typeof fault.body === 'string') {
      return new Response(fault.body, {
        status: fault.status ?? 500,
        headers: { ...headers, 'content-type': 'text/html' },
      });
    }
    const body = fault.body ?? errorBody('INJECTED_FAULT', `Injected fault: status ${fault.status}`);
    return json(fault.status ?? 500, body, headers);
  }

  /** Authenticates, finds the tenant, and validates the inputs with the SDK's own schemas. */
  #context(endpoint: Endpoint, entry: FakeRequest, params: Record<string, string>) {
    const { store } = this;
    if (endpoint.auth === 'admin') {
      const token = /^Bearer (.+)$/.exec(entry.headers.authorization ?? '')?.[1];
      const user = [...store.users.values()].find((u) => u.token !== undefined && u.token === token);
      if (!user) throw new FakeHttpError(401, 'UNAUTHORIZED', 'A valid administrator bearer token is required');
      if (user.role !== 'admin') throw new FakeHttpError(403, 'FORBIDDEN', 'Only an administrator may manage API keys');
      return { store, tenantId: user.tenantId, params, query: {}, body: undefined, defaultLimit: this.#defaultLimit };
    }

    const key = entry.headers['x-api-key'];
    if (!key) throw new FakeHttpError(401, 'UNAUTHORIZED', 'The x-api-key header is required');
    const { tenantId: queryTenant, ...query } = entry.query;
    const rawBody = (entry.body ?? {}) as Record<string, unknown>;
    const { tenantId: bodyTenant, ...body } = typeof rawBody === 'object' && rawBody !== null ? rawBody : {};
    const located = endpoint.tenantIn === 'body' ? bodyTenant : queryTenant;
    const header = entry.headers['x-tenant-id'];
    if (located !== undefined && header !== undefined && located !== header) {
      throw new FakeHttpError(400, 'TENANT_MISMATCH', 'tenantId and x-tenant-id name different tenants');
    }
    const tenantId = located ?? header;
    if (typeof tenantId !== 'string' || tenantId === '') {
      throw new FakeHttpError(400, 'VALIDATION_ERROR', 'tenantId is required', [
        { field: 'tenantId', message: `Required in the ${endpoint.tenantIn}` },
      ]);
    }
    const tenant = store.tenants.get(tenantId);
    if (!tenant || tenant.apiKey !== key) {
      throw new FakeHttpError(401, 'UNAUTHORIZED', 'A valid x-api-key for the tenant is required');
    }
    tenant.keyLastUsedAt = store.now();

    const parsed = endpoint.parseInput({
      path: Object.keys(params).length ? params : undefined,
      query: endpoint.query ? coerceNumbers(knownOnly(endpoint.query, query)) : undefined,
      body: endpoint.body ? knownOnly(endpoint.body, body) : undefined,
    });
    if (!parsed.success) {
      const details = issuesOf(parsed.error, 1).map(({ field, message }) => ({ field, message }));
      throw new FakeHttpError(
        400,
        'VALIDATION_ERROR',
        details.map((d) => `${d.field}: ${d.message}`).join('; '),
        details,
      );
    }
    const input = parsed.data as { path?: Record<string, string>; query?: unknown; body?: unknown };
    return {
      store,
      tenantId,
      params: input.path ?? {},
      query: (input.query ?? {}) as Record<string, unknown>,
      body:
        input.body !== undefined && this.#storage === 'normalizing'
          ? normalized(input.body as Record<string, unknown>)
          : (input.body as Record<string, unknown> | undefined),
      defaultLimit: this.#defaultLimit,
    };
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new FakeHttpError(400, 'VALIDATION_ERROR', 'The path is not valid percent-encoding');
  }
}

/**
 * The fields `schema` names, checked as the SDK checks them; the others are accepted and ignored,
 * as a server ignores what it does not use: they are what `extraQuery` and `extraBody` send, for
 * fields the spec does not show, and a README example must run against the fake as written.
 * They are not stored (one could name `id` or `tenantId`, which are the fake's to set).
 */
function knownOnly<T>(schema: z.ZodMiniType, fields: Record<string, T>): Record<string, T> {
  // A pipe (activities.create()) checks its fields with the object it starts with.
  const def = schema._zod.def as { type: string; in?: z.ZodMiniType; shape?: Record<string, unknown> };
  const shape =
    def.type === 'pipe' && def.in ? (def.in._zod.def as { shape?: Record<string, unknown> }).shape : def.shape;
  if (!shape) return fields;
  return Object.fromEntries(Object.entries(fields).filter(([name]) => Object.hasOwn(shape, name)));
}

// Query strings carry text; the shared schemas expect numbers for `page` and `limit`.
function coerceNumbers(query: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...query };
  for (const key of ['page', 'limit']) {
    const value = query[key];
    if (value !== undefined && /^-?\d+(\.\d+)?$/.test(value)) out[key] = Number(value);
  }
  return out;
}
