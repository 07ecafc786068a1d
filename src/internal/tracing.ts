import type { CrmAttemptContext, CrmCallContext } from '../core/trace';
import type { TransportOptions } from '../options';
import type { Endpoint } from './endpoint';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/**
 * What the SDK uses of a `TracingChannel` of `node:diagnostics_channel`, typed here: the source
 * does not depend on Node's types, since it runs where there is no Node.
 */
export interface TracingChannelOf<C extends object> {
  readonly start: { readonly hasSubscribers: boolean };
  tracePromise<A extends unknown[], R>(
    fn: (...args: A) => Promise<R>,
    context: C,
    thisArg: unknown,
    ...args: A
  ): Promise<R>;
}

/** What the SDK uses of `node:diagnostics_channel`. */
export interface DiagnosticsChannel {
  tracingChannel: (name: string) => TracingChannelOf<object>;
}

/** The two tracing channels of README.md, "Tracing". */
export interface Channels {
  readonly call: TracingChannelOf<CrmCallContext>;
  readonly attempt: TracingChannelOf<CrmAttemptContext>;
}

/** What a traced call carries, for its attempts to publish themselves. */
export interface CallTrace {
  readonly context: CrmCallContext;
  /** One HTTP attempt, published on the attempt channel; `fetch` is the client's. */
  attempt(input: RequestInfo | URL, init: RequestInit | undefined, fetch: typeof globalThis.fetch): Promise<Response>;
}

/** Each endpoint's operation, by its method and path: the SDK method that calls it. */
const OPERATIONS: Readonly<Record<string, string>> = {
  'GET integrations/v1/opportunities/{id}': 'opportunities.get',
  'POST integrations/v1/opportunities': 'opportunities.create',
  'PUT integrations/v1/opportunities/{id}': 'opportunities.update',
  'GET integrations/v1/activities': 'activities.list',
  'POST integrations/v1/activities': 'activities.create',
  'POST integrations/v1/accounts': 'accounts.create',
  'PUT integrations/v1/accounts/{id}': 'accounts.update',
  'POST integrations/v1/contacts': 'contacts.create',
  'PUT integrations/v1/contacts/{id}': 'contacts.update',
  'GET integrations/v1/contacts': 'contacts.list',
  'GET integrations/v1/grants/resolve': 'grants.resolve',
  'GET integrations/api-key': 'apiKey.status',
  'POST integrations/api-key/generate': 'apiKey.generate',
};

/** Headers a subscriber neither sees nor sets: the credentials, and the tenant they go with. */
const PROTECTED = /^(x-api-key|authorization|proxy-authorization|cookie|x-tenant-id)$/i;

/** Whether a header is one a subscriber neither sees nor sets: a credential, or one `redactHeaders` names. */
const hidden = (name: string, secret: ReadonlySet<string> | undefined) =>
  PROTECTED.test(name) || secret?.has(name.toLowerCase()) === true;

/**
 * Runs `send`, the whole call, published on the call channel, and makes its attempts publish
 * themselves on the attempt channel. Loaded on demand, by the first call made while someone
 * subscribes (PERFORMANCE.md, "Chunks loaded on demand"): without a subscriber, none of it runs.
 */
export function trace<T>(
  channels: Channels,
  endpoint: Endpoint,
  call: PreparedCall,
  send: () => Promise<T>,
  { secretHeaders }: TransportOptions,
  kit: Kit,
): Promise<T> {
  const context: CrmCallContext = {
    // crm.request()'s endpoints are not in the table.
    operation: OPERATIONS[endpoint.key] ?? 'request',
    method: endpoint.method,
    urlTemplate: `/${endpoint.path}`,
    tenantId: call.scope.tenantId,
  };
  call.trace = {
    context,
    attempt: (input, init, fetch) => {
      const request = input instanceof Request ? input : undefined;
      const shown: Record<string, string> = {};
      for (const [name, value] of new Headers(init?.headers ?? request?.headers)) {
        if (!hidden(name, secretHeaders)) shown[name] = value;
      }
      const attemptContext: CrmAttemptContext = {
        call: context,
        attempt: call.attempts - 1,
        method: request?.method ?? init?.method ?? endpoint.method,
        url: request?.url ?? String(input),
        headers: shown,
      };
      return channels.attempt.tracePromise(
        attempt,
        attemptContext,
        undefined,
        attemptContext,
        input,
        init,
        fetch,
        secretHeaders,
      );
    },
  };
  return channels.call.tracePromise(
    async (): Promise<T> => {
      try {
        const data = await send();
        const response = call.response;
        context.status = response?.status;
        context.requestId = response && kit.requestIdOf(response.headers);
        return data;
      } catch (error) {
        const { status, requestId } = error as { status?: unknown; requestId?: unknown };
        if (typeof status === 'number') context.status = status;
        if (typeof requestId === 'string') context.requestId = requestId;
        throw error;
      } finally {
        context.attempts = call.attempts;
      }
    },
    context,
    undefined,
  );
}

/** One HTTP attempt: the headers a subscriber added are sent; the credentials stay the client's. */
async function attempt(
  context: CrmAttemptContext,
  input: RequestInfo | URL,
  init: RequestInit | undefined,
  fetch: typeof globalThis.fetch,
  secretHeaders: ReadonlySet<string> | undefined,
): Promise<Response> {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  for (const [name, value] of Object.entries(context.headers)) {
    if (hidden(name, secretHeaders)) continue;
    // A header that is not valid is left out rather than failing the call.
    try {
      if (headers.get(name) !== String(value)) headers.set(name, String(value));
    } catch {}
  }
  const response = await fetch(input, { ...init, headers });
  context.status = response.status;
  return response;
}
