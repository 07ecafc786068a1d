import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { CrmAttemptContext, CrmCallContext } from '../core/trace';

/** Options of {@link instrumentCrm}. */
export interface InstrumentCrmOptions {
  /** Where the spans go. Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider | undefined;
  /**
   * Whether a failed call's span records the error's message (as its status message and in its
   * `exception` event, with the stack). Default `false`: a server's message may quote a record
   * (`422: invalid ada@example.com`), and spans are exported where records are not, so a span
   * records only the status, the error's type (`error.type`, `exception.type`) and the server's
   * error code (`crm.error.code`). Messages, when recorded, are masked as in every error.
   */
  recordErrorMessages?: boolean | undefined;
}

/** What `instrumentCrm()` uses of `node:diagnostics_channel`, typed here (no dependency on Node's types). */
interface Handlers<C> {
  start(context: C): void;
  end(context: C): void;
  asyncStart(context: C): void;
  asyncEnd(context: C): void;
  error(context: C): void;
}
interface TracingChannel<C> {
  subscribe(handlers: Handlers<C>): void;
  unsubscribe(handlers: Handlers<C>): void;
}
interface DiagnosticsChannel {
  tracingChannel<C>(name: string): TracingChannel<C>;
  channel(name: string): { readonly hasSubscribers: boolean };
}

/** What `context.attach()` returns (`@opentelemetry/api` 1.10 and later), and a context manager's `attach()`. */
interface Attached {
  dispose(): void;
}

/** What an older API's context manager may offer in place of `context.attach()`. */
interface OlderContextManager {
  attach?(active: Context): Attached;
  /** `AsyncLocalStorageContextManager`'s store (`@opentelemetry/context-async-hooks` 1.x and 2.x). */
  _asyncLocalStorage?: { enterWith?(store: Context): void };
  active?(): Context;
}

/**
 * How an attempt's fetch is made to run in a context: `context.attach()` of `@opentelemetry/api`
 * 1.10 and later. An older API (the peer range starts at 1.3) has none, so the registered context
 * manager is asked as 1.10's `attach` asks it: its own `attach()`, else, for the
 * `AsyncLocalStorage` manager of `@opentelemetry/context-async-hooks` before it had one,
 * `enterWith()` with the previous context restored on dispose, which is what its `attach()` does.
 * The function answers undefined when the manager offers neither (a manager of another kind,
 * with an API before 1.10).
 */
function attacherOf(api: typeof context): (active: Context) => Attached | undefined {
  const { attach } = api as { attach?: (active: Context) => Attached };
  if (typeof attach === 'function') return (active) => attach.call(api, active);
  return (active) => {
    // Asked at each attempt: the application may register its context manager after instrumentCrm().
    const manager = (
      api as unknown as { _getContextManager?: () => OlderContextManager | undefined }
    )._getContextManager?.();
    if (typeof manager?.attach === 'function') return manager.attach(active);
    const store = manager?._asyncLocalStorage;
    if (typeof store?.enterWith !== 'function') return undefined;
    const previous = api.active();
    store.enterWith(active);
    let disposed = false;
    return {
      dispose() {
        if (disposed) return;
        disposed = true;
        store.enterWith?.(previous);
      },
    };
  };
}

/**
 * Said once per process, where the fetch of an attempt cannot be run with tracing suppressed:
 * beside `@opentelemetry/instrumentation-undici`, each attempt then makes two CLIENT spans and
 * sends two `traceparent` headers.
 */
function warnUnsupported(): void {
  const key = Symbol.for('crm-integration-sdk/otel: warned of an API without attach');
  const holder = globalThis as { [key]?: boolean };
  if (holder[key]) return;
  holder[key] = true;
  try {
    (globalThis as { process?: { emitWarning?: (message: string, options: object) => void } }).process?.emitWarning?.(
      'instrumentCrm(): @opentelemetry/api before 1.10, with a context manager that is not ' +
        "@opentelemetry/context-async-hooks' AsyncLocalStorageContextManager, cannot run a fetch with tracing " +
        'suppressed: beside @opentelemetry/instrumentation-undici each attempt makes two CLIENT spans and sends ' +
        'two traceparent headers. Upgrade @opentelemetry/api to 1.10 or later.',
      { type: 'CrmOtelWarning', code: 'CRM_OTEL_API_WITHOUT_ATTACH' },
    );
  } catch {}
}

/**
 * The context key `suppressTracing()` of `@opentelemetry/core` sets, which every OpenTelemetry
 * tracer and propagator honours: `createContextKey` is `Symbol.for` of its description. Made
 * here rather than imported, so that this entry needs `@opentelemetry/api` alone.
 */
const SUPPRESS_TRACING = createContextKey('OpenTelemetry SDK Context Key SUPPRESS_TRACING');

const NAME = 'crm-integration-sdk';
const ignore = () => {};

/**
 * Traces every SDK call with OpenTelemetry, from the SDK's tracing channels: an `INTERNAL` span
 * `crm <operation>` per call (each page request of a list is one), with a `CLIENT` child span
 * `<METHOD> <urlTemplate>` per HTTP attempt, retries included, carrying the stable HTTP client
 * attributes. The active context is injected into each attempt's headers with the global
 * propagator (W3C `traceparent` by default). No credential is recorded: URLs carry none, and
 * errors are masked before they get here; nor is a message, unless `recordErrorMessages`. With
 * undici instrumented (`@opentelemetry/instrumentation-undici`, in the auto-instrumentations),
 * each attempt's fetch runs with tracing suppressed, so that it stays one `CLIENT` span with one
 * `traceparent`. Returns a function that stops it. Where the runtime has no
 * `node:diagnostics_channel` (a browser), it does nothing.
 *
 * @example
 * ```ts
 * import { instrumentCrm } from 'crm-integration-sdk/otel';
 *
 * const stop = instrumentCrm(); // or instrumentCrm({ tracerProvider })
 * await crm.opportunities.get('opp_123'); // spans "crm opportunities.get" and "GET /integrations/v1/opportunities/{id}"
 * stop();
 * ```
 */
export function instrumentCrm(options: InstrumentCrmOptions = {}): () => void {
  let dc: DiagnosticsChannel | undefined;
  try {
    dc = (
      globalThis as { process?: { getBuiltinModule?: (id: string) => DiagnosticsChannel | undefined } }
    ).process?.getBuiltinModule?.('node:diagnostics_channel');
  } catch {}
  if (!dc?.tracingChannel) return ignore;
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME);
  const recordMessages = options.recordErrorMessages === true;
  const undiciRequests = dc.channel?.('undici:request:create');
  // `context.attach` is new in @opentelemetry/api 1.10; an older API's context manager is asked instead.
  const attach = attacherOf(context);
  if (undiciRequests?.hasSubscribers) {
    // Tried on the root context, and undone at once: whether an attempt's fetch can be suppressed.
    const probe = attach(ROOT_CONTEXT);
    if (probe) probe.dispose();
    else warnUnsupported();
  }
  const suppressed = new WeakMap<CrmAttemptContext, Attached>();
  const bracketed = attemptsBracketed();
  const calls = new WeakMap<CrmCallContext, Span>();
  const attempts = new WeakMap<CrmAttemptContext, Span>();
  // Ended by stop() if their call is still in flight then: a span never ended is never exported.
  const open = new Set<Span>();
  const end = (span: Span | undefined) => {
    if (!span) return;
    open.delete(span);
    span.end();
  };

  const callHandlers: Handlers<CrmCallContext> = guarded({
    start(call) {
      const attributes: Attributes = { 'crm.operation': call.operation };
      if (call.tenantId !== undefined) attributes['crm.tenant_id'] = call.tenantId;
      const span = tracer.startSpan(`crm ${call.operation}`, { kind: SpanKind.INTERNAL, attributes });
      calls.set(call, span);
      open.add(span);
    },
    error(call) {
      const span = calls.get(call);
      const error = call.error;
      if (!span) return;
      if (!(error instanceof Error)) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', '_OTHER');
        return;
      }
      // As its class, not the server's `code`, which OpenTelemetry would otherwise take for the type.
      const { name, message, stack } = error;
      const { code } = error as { code?: unknown };
      // The server's words, masked in the error already; bounded, as a code is short.
      if (typeof code === 'string') span.setAttribute('crm.error.code', code.slice(0, 100));
      span.setAttribute('error.type', name);
      if (!recordMessages) {
        span.recordException({ name });
        span.setStatus({ code: SpanStatusCode.ERROR });
        return;
      }
      span.recordException(stack === undefined ? { name, message } : { name, message, stack });
      span.setStatus({ code: SpanStatusCode.ERROR, message });
    },
    asyncEnd(call) {
      end(calls.get(call));
      calls.delete(call);
    },
    end: ignore,
    asyncStart: ignore,
  });

  const attemptHandlers: Handlers<CrmAttemptContext> = guarded({
    start(attempt) {
      const parent = calls.get(attempt.call);
      const parentContext = parent ? trace.setSpan(context.active(), parent) : context.active();
      const url = new URL(attempt.url);
      // crm.request()'s path is no template: such a span is named by its method alone.
      const template = attempt.call.operation === 'request' ? undefined : attempt.call.urlTemplate;
      const attributes: Attributes = {
        'http.request.method': attempt.method,
        'server.address': url.hostname,
        'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        'url.full': attempt.url,
      };
      if (template !== undefined) attributes['url.template'] = template;
      if (attempt.attempt > 0) attributes['http.request.resend_count'] = attempt.attempt;
      const name = template === undefined ? attempt.method : `${attempt.method} ${template}`;
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parentContext);
      attempts.set(attempt, span);
      open.add(span);
      const attemptContext = trace.setSpan(parentContext, span);
      propagation.inject(attemptContext, attempt.headers);
      // With undici instrumented (instrumentation-undici, which the auto-instrumentations turn
      // on), fetch would start a second CLIENT span, outside this call's, and send a second
      // traceparent. This span is the attempt's, masked as the SDK masks: the fetch it wraps runs
      // with tracing suppressed, which undici's span and its propagator honour. The attempt's
      // function is called between `start` and `end`, synchronously, so that is where it holds.
      // One bracket per attempt, whoever else instruments it: brackets that overlap restore each
      // other's context, and one would outlive its attempt.
      if (undiciRequests?.hasSubscribers && !bracketed.has(attempt)) {
        const token = attach(attemptContext.setValue(SUPPRESS_TRACING, true));
        if (!token) warnUnsupported();
        else {
          bracketed.add(attempt);
          suppressed.set(attempt, token);
        }
      }
    },
    end(attempt) {
      suppressed.get(attempt)?.dispose();
      suppressed.delete(attempt);
    },
    error(attempt) {
      const span = attempts.get(attempt);
      // The type of the failure only, its code where it or a cause has one (ECONNREFUSED), else its name.
      span?.setAttribute('error.type', typeOf(attempt.error));
      span?.setStatus({ code: SpanStatusCode.ERROR });
    },
    asyncEnd(attempt) {
      const span = attempts.get(attempt);
      if (!span) return;
      const { status } = attempt;
      if (status !== undefined) {
        span.setAttribute('http.response.status_code', status);
        // The HTTP client conventions: a status of 400 or more is an error, named by its code.
        if (status >= 400) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      end(span);
      attempts.delete(attempt);
    },
    asyncStart: ignore,
  });

  const callChannel = dc.tracingChannel<CrmCallContext>(`${NAME}:call`);
  const attemptChannel = dc.tracingChannel<CrmAttemptContext>(`${NAME}:attempt`);
  callChannel.subscribe(callHandlers);
  attemptChannel.subscribe(attemptHandlers);
  const holding = [callChannel, attemptChannel];
  subscribed.add(holding);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    subscribed.delete(holding);
    callChannel.unsubscribe(callHandlers);
    attemptChannel.unsubscribe(attemptHandlers);
    for (const span of open) span.end();
    open.clear();
  };
}

/**
 * The channels of every running `instrumentCrm()`, held until it stops: Bun (1.4.5) collects a
 * tracing channel no one references, its subscribers with it, so an app that drops `stop` would
 * lose its spans at the next collection. Node and Deno keep a channel that has subscribers.
 */
const subscribed = new Set<readonly object[]>();

/**
 * The attempts whose fetch some `instrumentCrm()` runs suppressed: one set for the process, shared
 * by every copy of this entry (its ESM and CJS builds, two versions), through the global registry.
 */
function attemptsBracketed(): WeakSet<object> {
  const key = Symbol.for('crm-integration-sdk/otel: attempts bracketed');
  const holder = globalThis as { [key]?: WeakSet<object> };
  holder[key] ??= new WeakSet();
  return holder[key];
}

/**
 * Handlers that never throw: Node reports what a subscriber throws as an uncaught exception,
 * which ends a process that does not listen for it. A span is not worth that.
 */
function guarded<C>(handlers: Handlers<C>): Handlers<C> {
  const safe = (handler: (context: C) => void) => (context: C) => {
    try {
      handler(context);
    } catch {}
  };
  return {
    start: safe(handlers.start),
    end: safe(handlers.end),
    asyncStart: safe(handlers.asyncStart),
    asyncEnd: safe(handlers.asyncEnd),
    error: safe(handlers.error),
  };
}

/** `error.type` of a failed attempt: the code of the error or of one of its causes, else its name. */
function typeOf(error: unknown): string {
  try {
    for (let each: unknown = error, depth = 0; each instanceof Error && depth < 5; each = each.cause, depth++) {
      const { code } = each as { code?: unknown };
      if (typeof code === 'string') return code;
    }
    return error instanceof Error ? error.name : '_OTHER';
  } catch {
    return '_OTHER';
  }
}
