// The options of a client and of a call, checked and resolved once into the settings every step reads.
import * as z from 'zod/mini';
import { CrmValidationError } from '../../core/errors';
import type { CrmLogger } from '../../core/log';
import type {
  ApiKeyProvider,
  AppInfo,
  ClientDefaults,
  ClientOptions,
  FetchOptions,
  ListOptions,
  RequestOptions,
  TenantOptions,
  ThrottleOptions,
} from '../../options';
import { int, minLength } from '../../schemas/length';
import type { CallSettings, TransportOptions } from '../call/settings';
import { gateOf, isUnsentOnly, onTheWire, unsentOnly } from '../call/unsent';
import { check } from '../endpoint/check';
import { valueThat } from '../endpoint/refinement';
import { sharedPacerOf } from '../waiting/pacer';
import { userAgent } from './user-agent';

const HeaderName = /^[!#$%&'*+.^_`|~\w-]+$/;
const MAX_TIMER = 2_147_483_647;
const BASE_URL = 'Required: an http(s) URL (pass baseUrl or set CRM_BASE_URL)';
/**
 * What is wrong with a base URL, if anything; not z.url() (PERFORMANCE.md, "zod features left
 * out"). A user name or password would show in every error and in the client's inspect output
 * (the message does not repeat it); a query or fragment would move every endpoint onto the base path.
 */
function baseUrlProblem(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value)) return 'Must start with http:// or https://';
  if (!/^https?:\/\/[^/]/i.test(value) || !URL.canParse(value)) return 'Not a valid URL';
  if (/^[^/]+\/\/[^/?#]*@/.test(value)) return 'Must not contain a user name or password: pass apiKey or adminToken';
  if (/[?#]/.test(value)) return 'Must not contain a query string or a fragment';
}
const fn = <T>() => valueThat<T>((value) => typeof value === 'function', 'Must be a function');
/** Text a User-Agent carries as it is: printable ASCII (no CR, LF or other control character), bounded. */
const UserAgentPart = (max: number) =>
  z.string().check(
    z.regex(new RegExp(`^[\\x20-\\x7e]{1,${max}}$`), {
      error: `Must be 1 to ${max} printable ASCII characters: no CR, LF or other control characters`,
    }),
  );
// The option schemas are built at their first use, all at once, not at import: the client's
// construction is the first (PERFORMANCE.md, "Schemas built when first needed").
let schemas: ReturnType<typeof buildSchemas> | undefined;
/** The option schemas: a client's, a call's, a list call's, `withOptions()`'s, `withTenant()`'s, an `apiKey` function's key's. */
export const optionSchemas = () => (schemas ??= buildSchemas());

function buildSchemas() {
  /** A header value: no CR, LF or other control characters (they would split or forge headers). */
  const HeaderValue = z
    .string()
    .check(z.regex(/^[\t\x20-\x7e\x80-\xff]*$/, { error: 'Must not contain CR, LF or other control characters' }));
  /**
   * A credential or tenant id, as fetch sends it: fetch trims a header value on the wire, so a
   * value with spaces around it would be sent as another string than the one in the query and the
   * one masked in errors and logs. No control character (C0 or C1), no surrounding white space.
   */
  const Credential = z.string().check(
    minLength(1),
    z.regex(/^(?!\s)[\x20-\x7e\xa0-\xff]*(?<!\s)$/, {
      error: 'Must not have spaces around it or control characters',
    }),
  );
  // Values checked as the object's catchall, names by the check; not z.record() (PERFORMANCE.md, "zod features left out").
  const Headers = z.catchall(z.object({}), HeaderValue).check(
    z.superRefine((headers, ctx) => {
      for (const name of Object.keys(headers)) {
        if (!HeaderName.test(name))
          ctx.addIssue({ code: 'custom', message: 'Not a valid header name', path: [name], input: name });
      }
    }),
  );
  const Timeout = int(z.gte(1), z.lte(MAX_TIMER));
  // An object here; a plain one, and its contents, are checked when a call uses it, by the module that adds it (extras.ts).
  const Extras = valueThat<Record<string, unknown>>(
    (value) => typeof value === 'object' && value !== null,
    'Must be a plain object',
  );
  const signal = z.optional(valueThat<AbortSignal>((value) => value instanceof AbortSignal, 'Must be an AbortSignal'));
  const perCall = {
    timeout: z.optional(Timeout),
    totalTimeout: z.optional(Timeout),
    maxRetries: z.optional(int(z.gte(0), z.lte(10))),
    headers: z.optional(Headers),
    signal,
  };
  const prefetch = z.optional(int(z.gte(0), z.lte(16)));
  const defaults = {
    ...perCall,
    maxRetryAfter: z.optional(int(z.gte(0), z.lte(MAX_TIMER))),
    prefetch,
    // One check rather than a union of shapes: the main entry stays small (the store is checked by its entry).
    throttle: z.optional(
      valueThat<ThrottleOptions | 'off' | 'auto'>(
        (value) =>
          value === 'off' ||
          value === 'auto' ||
          ((value as ThrottleOptions)?.mode === 'auto' &&
            ((value as ThrottleOptions).store === undefined || !!sharedPacerOf((value as ThrottleOptions).store))),
        "Must be 'off', 'auto' or { mode: 'auto', store } (crm-integration-sdk/redis)",
      ),
    ),
  };
  const request = { ...perCall, extraQuery: z.optional(Extras), extraBody: z.optional(Extras) };
  const apiKey = z.optional(Credential);
  // Strict, like every object of options: a misspelt one (`timout`) is refused, with the nearest
  // option named, rather than silently ignored. Shapes spread, not z.extend() (PERFORMANCE.md, "zod features left out").
  return {
    client: z.strictObject({
      ...defaults,
      // Trimmed before the check (resolveOptions()), not by z.trim() (PERFORMANCE.md, "zod features left out").
      baseUrl: z.string(BASE_URL).check(
        z.superRefine((value, ctx) => {
          const message = baseUrlProblem(value);
          if (message) ctx.addIssue({ code: 'custom', message, input: '' });
        }),
      ),
      apiKey,
      tenantId: apiKey,
      adminToken: apiKey,
      fetch: z.optional(fn<typeof globalThis.fetch>()),
      maxConcurrency: z.optional(int(z.gte(1))),
      maxResponseBytes: z.optional(int(z.gte(1))),
      logger: z.optional(fn<CrmLogger>()),
      redactHeaders: z.optional(z.array(z.string().check(z.regex(HeaderName, 'Not a valid header name')))),
      validateResponses: z.optional(z.boolean()),
      appInfo: z.optional(
        z.strictObject({
          name: UserAgentPart(100),
          version: z.optional(UserAgentPart(100)),
          url: z.optional(UserAgentPart(300)),
        }),
      ),
      // What fetch is sent with that is the SDK's own is refused.
      fetchOptions: z.optional(
        valueThat<FetchOptions>(
          (value) =>
            typeof value === 'object' &&
            value !== null &&
            !Object.keys(value).some((name) => /^(method|body|headers|signal|redirect)$/.test(name)),
          'Must be an object without method, body, headers, signal or redirect: the SDK sets those',
        ),
      ),
    }),
    request: z.strictObject(request),
    list: z.strictObject({ ...request, prefetch }),
    defaults: z.strictObject(defaults),
    tenant: z.strictObject({ apiKey, signal }),
    tenantId: z.object({ tenantId: Credential }),
    /** A key as a function returns it: the same rules as a configured one. */
    apiKey: z.object({ apiKey: Credential }),
  };
}

/** `new CrmClient()`'s options, resolved: what its calls share, its tenant and key, its call defaults. */
export interface ResolvedOptions {
  readonly transport: TransportOptions;
  readonly tenantId: string | undefined;
  readonly apiKey: string | ApiKeyProvider | undefined;
  readonly defaults: CallSettings;
}

const CREDENTIAL_HEADERS = /^(authorization|x-api-key|x-tenant-id)$/i;

/**
 * Caller-supplied headers by lower-case name, as fetch sends them, so that a call's `x-job`
 * replaces a client's `X-Job`; without credential headers: the client's own always win.
 */
function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!CREDENTIAL_HEADERS.test(name)) out[name.toLowerCase()] = value;
  return out;
}

/** Both signals: the client's (or its scope's) and the call's; one `AbortSignal.any()` only when there are two. */
function both(base: AbortSignal | undefined, own: AbortSignal | undefined): AbortSignal | undefined {
  if (!(own && base)) return own ?? base;
  const combined = AbortSignal.any([base, own]);
  if (!isUnsentOnly(own)) return combined;
  // A call's signal that stops it only before it is sent (call/unsent.ts) still does so beside the
  // client's, which stops it anywhere.
  const wire = onTheWire(own);
  return unsentOnly(combined, wire ? AbortSignal.any([base, wire]) : base, gateOf(own));
}

/**
 * `base` with the given options over it; `options` must be checked already. Headers add to the
 * base's, which is how client, derived-client and per-call headers combine.
 */
function merge(base: CallSettings, options: RequestOptions & ClientDefaults): CallSettings {
  return {
    timeout: options.timeout ?? base.timeout,
    totalTimeout: options.totalTimeout ?? base.totalTimeout,
    maxRetries: options.maxRetries ?? base.maxRetries,
    maxRetryAfter: options.maxRetryAfter ?? base.maxRetryAfter,
    headers: options.headers ? { ...base.headers, ...withoutCredentials(options.headers) } : base.headers,
    prefetch: options.prefetch ?? base.prefetch,
    // 'auto' has no store (`'auto'.store` is undefined): true.
    throttle: options.throttle
      ? options.throttle !== 'off' && ((options.throttle as ThrottleOptions).store ?? true)
      : base.throttle,
    signal: both(base.signal, options.signal),
    extraQuery: options.extraQuery,
    extraBody: options.extraBody,
  };
}

/**
 * The defaults, applied after the check, not by z._default() (PERFORMANCE.md, "zod features left
 * out"). Only those merge() reads from its base: no total timeout and no signal are undefined there.
 */
const BUILT_IN = {
  timeout: 30_000,
  maxRetries: 2,
  maxRetryAfter: 60_000,
  headers: {},
  prefetch: 0,
  throttle: false,
} as CallSettings;

const env = (): Record<string, string | undefined> =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

/** `value` checked by `schema`, but for an `apiKey` function, which is checked by what it returns. */
function checkWithKey<S extends z.ZodMiniType<{ apiKey?: string | undefined }>>(
  schema: S,
  value: Record<string, unknown>,
  prefix: string,
): Omit<z.output<S>, 'apiKey'> & { apiKey: string | ApiKeyProvider | undefined } {
  const { apiKey } = value;
  const keyFunction = typeof apiKey === 'function' ? (apiKey as ApiKeyProvider) : undefined;
  const checked = check(schema, keyFunction ? { ...value, apiKey: undefined } : value, prefix);
  return { ...checked, apiKey: keyFunction ?? checked.apiKey };
}

/**
 * Applies the environment fallbacks and defaults, once, at construction. Options that are not an
 * object (a key passed alone) are refused: the environment's credentials would be sent instead.
 */
export function resolveOptions(options: ClientOptions): ResolvedOptions {
  // A plain object, of this realm or another, or Object.create(null): not a string, an array or a class's instance.
  const proto = typeof options === 'object' && options !== null ? Object.getPrototypeOf(options) : 0;
  if (proto !== null && (proto === 0 || Object.getPrototypeOf(proto) !== null))
    throw new CrmValidationError(
      [{ field: '', path: [], message: 'Must be an object of options: new CrmClient({ baseUrl, apiKey, tenantId })' }],
      'Invalid CrmClient options',
    );
  const vars = env();
  const baseUrl = options.baseUrl ?? vars.CRM_BASE_URL;
  const checked = checkWithKey(
    optionSchemas().client,
    {
      ...options,
      // Spaces and line breaks around it, as a value read from a file often has, are not the URL's.
      baseUrl: typeof baseUrl === 'string' ? baseUrl.trim() : baseUrl,
      apiKey: options.apiKey ?? (vars.CRM_API_KEY || undefined),
      tenantId: options.tenantId ?? (vars.CRM_TENANT_ID || undefined),
      adminToken: options.adminToken ?? (vars.CRM_ADMIN_TOKEN || undefined),
    },
    'Invalid CrmClient options',
  );
  return {
    transport: {
      ...checked,
      maxResponseBytes: checked.maxResponseBytes ?? 10 * 1024 * 1024,
      validateResponses: checked.validateResponses ?? true,
      secretHeaders: checked.redactHeaders && new Set(checked.redactHeaders.map((name) => name.toLowerCase())),
    },
    tenantId: checked.tenantId,
    apiKey: checked.apiKey,
    // The User-Agent goes with the client's headers: built once per client, not per call.
    defaults: merge(BUILT_IN, { ...checked, headers: withUserAgent(checked.headers, checked.appInfo) }),
  };
}

/** The client's headers with the SDK's User-Agent first (none in a browser); a `user-agent` of the caller's replaces it. */
function withUserAgent(headers: Record<string, string> | undefined, app: AppInfo | undefined) {
  const agent = userAgent(app);
  return agent ? { 'user-agent': agent, ...headers } : headers;
}

/** A call's settings: the client's defaults, or the call's checked options over them. */
export function settingsFor(
  defaults: CallSettings,
  options: ListOptions | undefined,
  schema: 'request' | 'list',
): CallSettings {
  return options ? merge(defaults, check(optionSchemas()[schema], options, 'Invalid request options')) : defaults;
}

/** The defaults of a `withOptions()` client: its parent's, with the given ones over them. */
export const withDefaults = (defaults: CallSettings, options: ClientDefaults): CallSettings =>
  merge(defaults, check(optionSchemas().defaults, options, 'Invalid options'));

/** The tenant and options given to `withTenant()`, checked; a `signal` joins the parent's `defaults`. */
export function checkTenant(tenantId: string, options: TenantOptions | undefined, defaults: CallSettings) {
  const { signal, ...checked } = checkWithKey(
    optionSchemas().tenant,
    (options ?? {}) as Record<string, unknown>,
    'Invalid tenant options',
  );
  return {
    ...checked,
    tenantId: check(optionSchemas().tenantId, { tenantId }, 'Invalid tenant').tenantId,
    defaults: signal && merge(defaults, { signal }),
  };
}
