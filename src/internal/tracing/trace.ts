import { requestIdOf } from '../../core/errors';
import type { CrmAttemptContext, CrmCallContext } from '../../core/trace';
import type { Received } from '../call/failure';
import type { CallState, PreparedRequest } from '../call/prepared';
import type { Channels } from './channels';

/** What an attempt sends and gets back: the request, then the body read. */
type Exchange = (href: string, init: RequestInit) => Promise<Received>;

/** What a traced call carries, for its attempts to publish themselves. */
export interface CallTrace {
  /** One HTTP attempt, published on the attempt channel; `exchange` sends it and reads its answer. */
  attempt(href: string, init: RequestInit, exchange: Exchange): Promise<Received>;
}

/** Headers a subscriber neither sees nor sets: the credentials, and the tenant they go with. */
const PROTECTED = /^(x-api-key|authorization|proxy-authorization|cookie|x-tenant-id)$/i;

/** Whether a header is one a subscriber neither sees nor sets: a credential, or one `redactHeaders` names. */
const hidden = (name: string, secret: ReadonlySet<string> | undefined) =>
  PROTECTED.test(name) || secret?.has(name.toLowerCase()) === true;

/** What tracing needs of the reporter, which masks: it is the transport's. */
export interface Masking {
  readonly redact: <T>(value: T) => T;
  /** A copy of a failure that is safe to publish. */
  readonly copy: (failure: unknown) => unknown;
}

/**
 * Runs `send`, the whole call, published on the call channel, and makes its attempts publish
 * themselves on the attempt channel, through the `CallTrace` handed to `send`. Only while someone
 * subscribes (the transport asks for each call). What is published is masked like an error: the
 * URL, the header values shown, an attempt's error; and neither channel's `result` holds the data
 * or the response (a new API key, a body a server echoed a secret in), which a traced function
 * would otherwise put there.
 */
export async function trace<T>(
  channels: Channels,
  request: PreparedRequest,
  state: CallState,
  send: (trace: CallTrace) => Promise<T>,
  secretHeaders: ReadonlySet<string> | undefined,
  masking: Masking,
): Promise<T> {
  const { endpoint } = request;
  const { redact } = masking;
  const context: CrmCallContext = {
    operation: endpoint.sdkMethod,
    method: endpoint.method,
    // crm.request()'s path is no template, and may hold an id.
    urlTemplate: endpoint.sdkMethod === 'request' ? redact(`/${endpoint.path}`) : `/${endpoint.path}`,
    tenantId: request.tenantId,
  };
  const callTrace: CallTrace = {
    attempt: async (href, init, exchange) => {
      const shown: Record<string, string> = {};
      for (const [name, value] of new Headers(init.headers)) {
        if (!hidden(name, secretHeaders)) shown[name] = redact(value);
      }
      const attemptContext: CrmAttemptContext = {
        call: context,
        attempt: state.attempts - 1,
        method: init.method ?? endpoint.method,
        url: redact(new URL(href).href),
        headers: shown,
      };
      let received: Received | undefined;
      let failure: unknown;
      await channels.attempt
        .tracePromise(
          async () => {
            try {
              received = await exchange(href, { ...init, headers: withAdded(init, attemptContext, secretHeaders) });
              attemptContext.status = received.response.status;
            } catch (error) {
              failure = error;
              // Published masked: a failed fetch's own error may hold what it was sent.
              throw masking.copy(error);
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
        data = await send(callTrace);
        const response = state.response;
        context.status = response?.status;
        // A server may echo the key in its request id; the error path masks the same header.
        context.requestId = response && redact(requestIdOf(response.headers));
      } catch (error) {
        const { status, requestId } = error as { status?: unknown; requestId?: unknown };
        if (typeof status === 'number') context.status = status;
        if (typeof requestId === 'string') context.requestId = requestId;
        throw error;
      } finally {
        context.attempts = state.attempts;
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
  init: RequestInit,
  context: CrmAttemptContext,
  secretHeaders: ReadonlySet<string> | undefined,
): Headers {
  const headers = new Headers(init.headers);
  let added: [string, unknown][] = [];
  try {
    added = Object.entries(context.headers);
  } catch {}
  for (const [name, value] of added) {
    if (hidden(name, secretHeaders)) continue;
    try {
      const text = String(value);
      // Not a ByteString: no request could carry it.
      if (/^[\t\x20-\xff]*$/.test(text) && headers.get(name) !== text) headers.set(name, text);
    } catch {}
  }
  return headers;
}
