import type { CrmAttemptContext, CrmCallContext } from '../core/trace';
import type { TransportOptions } from '../options';
import type { Received } from './attempt';
import type { Endpoint } from './endpoint';
import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';
import type { Reporter } from './reporting';

/**
 * What the SDK uses of a `TracingChannel` of `node:diagnostics_channel`, typed here: the source
 * does not depend on Node's types, since it runs where there is no Node.
 */
export interface TracingChannelOf<C extends object> {
  readonly start: { readonly hasSubscribers: boolean };
  readonly end: { readonly hasSubscribers: boolean };
  readonly asyncStart: { readonly hasSubscribers: boolean };
  readonly asyncEnd: { readonly hasSubscribers: boolean };
  readonly error: { readonly hasSubscribers: boolean };
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
  /** Whether any event of either has a subscriber. */
  readonly listened: () => boolean;
}

/** What an attempt sends and gets back: the retrier chunk's `exchange` (fetch, then the body read). */
type Exchange = (input: RequestInfo | URL, init: RequestInit | undefined) => Promise<Received>;

/** What a traced call carries, for its attempts to publish themselves. */
export interface CallTrace {
  readonly context: CrmCallContext;
  /** One HTTP attempt, published on the attempt channel; `exchange` sends it and reads its answer. */
  attempt(input: RequestInfo | URL, init: RequestInit | undefined, exchange: Exchange): Promise<Received>;
}

/** Headers a subscriber neither sees nor sets: the credentials, and the tenant they go with. */
const PROTECTED = /^(x-api-key|authorization|proxy-authorization|cookie|x-tenant-id)$/i;

/** Whether a header is one a subscriber neither sees nor sets: a credential, or one `redactHeaders` names. */
const hidden = (name: string, secret: ReadonlySet<string> | undefined) =>
  PROTECTED.test(name) || secret?.has(name.toLowerCase()) === true;

/**
 * Runs `send`, the whole call, published on the call channel, and makes its attempts publish
 * themselves on the attempt channel. Loaded on demand, by the first call made while someone
 * subscribes (PERFORMANCE.md, "Chunks loaded on demand"): without a subscriber, none of it runs.
 * What is published is masked like an error: the URL, the header values shown, an attempt's
 * error; and neither channel's `result` holds the data or the response (a new API key, a body a
 * server echoed a secret in), which a traced function would otherwise put there.
 */
export async function trace<T>(
  channels: Channels,
  endpoint: Endpoint,
  call: PreparedCall,
  send: () => Promise<T>,
  { secretHeaders }: TransportOptions,
  report: () => Promise<Reporter | undefined>,
  kit: Kit,
): Promise<T> {
  // Without the reporter nothing could be masked, so nothing is published.
  const reporter = await report();
  if (!reporter) return await send();
  const redact = reporter.redact(call);
  const adHoc = endpoint.sdkMethod === 'request';
  const context: CrmCallContext = {
    // crm.request()'s endpoints are not in the table; their path is no template, and may hold an id.
    operation: endpoint.sdkMethod,
    method: endpoint.method,
    urlTemplate: adHoc ? redact(`/${endpoint.path}`) : `/${endpoint.path}`,
    tenantId: call.scope.tenantId,
  };
  call.trace = {
    context,
    attempt: async (input, init, exchange) => {
      const request = input instanceof Request ? input : undefined;
      const shown: Record<string, string> = {};
      for (const [name, value] of new Headers(init?.headers ?? request?.headers)) {
        if (!hidden(name, secretHeaders)) shown[name] = redact(value);
      }
      const attemptContext: CrmAttemptContext = {
        call: context,
        attempt: call.attempts - 1,
        method: request?.method ?? init?.method ?? endpoint.method,
        url: redact(new URL(request?.url ?? String(input)).href),
        headers: shown,
      };
      let received: Received | undefined;
      let failure: unknown;
      await channels.attempt
        .tracePromise(
          async () => {
            try {
              received = await exchange(input, {
                ...init,
                headers: withAdded(init, input, attemptContext, secretHeaders),
              });
              attemptContext.status = received.response.status;
            } catch (error) {
              failure = error;
              // Published masked: a failed fetch's own error may hold what it was sent.
              throw reporter.copy(call, error);
            }
          },
          attemptContext,
          undefined,
        )
        .catch(() => {});
      if (!received) throw failure;
      return received;
    },
  };
  let data: T | undefined;
  await channels.call.tracePromise(
    async () => {
      try {
        data = await send();
        const response = call.response;
        context.status = response?.status;
        context.requestId = response && kit.requestIdOf(response.headers);
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
  return data as T;
}

/**
 * The request's headers with those a subscriber added: the credentials stay the client's, and a
 * header that cannot be read or is not valid is left out rather than failing the call.
 */
function withAdded(
  init: RequestInit | undefined,
  input: RequestInfo | URL,
  context: CrmAttemptContext,
  secretHeaders: ReadonlySet<string> | undefined,
): Headers {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  let added: [string, unknown][] = [];
  try {
    added = Object.entries(context.headers);
  } catch {}
  for (const [name, value] of added) {
    if (hidden(name, secretHeaders)) continue;
    try {
      if (headers.get(name) !== String(value)) headers.set(name, String(value));
    } catch {}
  }
  return headers;
}
