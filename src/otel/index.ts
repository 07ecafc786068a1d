import {
  type Attributes,
  context,
  propagation,
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
}

const NAME = 'crm-integration-sdk';
const ignore = () => {};

/**
 * Traces every SDK call with OpenTelemetry, from the SDK's tracing channels: an `INTERNAL` span
 * `crm <operation>` per call (each page request of a list is one), with a `CLIENT` child span
 * `<METHOD> <urlTemplate>` per HTTP attempt, retries included, carrying the stable HTTP client
 * attributes. The active context is injected into each attempt's headers with the global
 * propagator (W3C `traceparent` by default). No credential is recorded: URLs carry none, and
 * errors are masked before they get here. Returns a function that stops it. Where the runtime
 * has no `node:diagnostics_channel` (a browser), it does nothing.
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
  const dc = (
    globalThis as { process?: { getBuiltinModule?: (id: string) => DiagnosticsChannel | undefined } }
  ).process?.getBuiltinModule?.('node:diagnostics_channel');
  if (!dc?.tracingChannel) return ignore;
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME);
  const calls = new WeakMap<CrmCallContext, Span>();
  const attempts = new WeakMap<CrmAttemptContext, Span>();

  const callHandlers: Handlers<CrmCallContext> = {
    start(call) {
      const attributes: Attributes = { 'crm.operation': call.operation };
      if (call.tenantId !== undefined) attributes['crm.tenant_id'] = call.tenantId;
      calls.set(call, tracer.startSpan(`crm ${call.operation}`, { kind: SpanKind.INTERNAL, attributes }));
    },
    error(call) {
      const span = calls.get(call);
      const error = call.error;
      if (!span) return;
      if (!(error instanceof Error)) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
        return;
      }
      // As its class, not the server's `code`, which OpenTelemetry would otherwise take for the type.
      const { name, message, stack } = error;
      span.recordException(stack === undefined ? { name, message } : { name, message, stack });
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      span.setAttribute('error.type', name);
    },
    asyncEnd(call) {
      calls.get(call)?.end();
      calls.delete(call);
    },
    end: ignore,
    asyncStart: ignore,
  };

  const attemptHandlers: Handlers<CrmAttemptContext> = {
    start(attempt) {
      const parent = calls.get(attempt.call);
      const parentContext = parent ? trace.setSpan(context.active(), parent) : context.active();
      const url = new URL(attempt.url);
      const attributes: Attributes = {
        'http.request.method': attempt.method,
        'server.address': url.hostname,
        'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        'url.full': attempt.url,
        'url.template': attempt.call.urlTemplate,
      };
      if (attempt.attempt > 0) attributes['http.request.resend_count'] = attempt.attempt;
      const span = tracer.startSpan(
        `${attempt.method} ${attempt.call.urlTemplate}`,
        { kind: SpanKind.CLIENT, attributes },
        parentContext,
      );
      attempts.set(attempt, span);
      propagation.inject(trace.setSpan(parentContext, span), attempt.headers);
    },
    error(attempt) {
      const span = attempts.get(attempt);
      const error = attempt.error as { name?: unknown; code?: unknown } | undefined;
      // The type of the failure only: an attempt's own error (a fetch that failed) is not masked.
      const type =
        typeof error?.code === 'string' ? error.code : typeof error?.name === 'string' ? error.name : '_OTHER';
      span?.setAttribute('error.type', type);
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
      span.end();
      attempts.delete(attempt);
    },
    end: ignore,
    asyncStart: ignore,
  };

  const callChannel = dc.tracingChannel<CrmCallContext>(`${NAME}:call`);
  const attemptChannel = dc.tracingChannel<CrmAttemptContext>(`${NAME}:attempt`);
  callChannel.subscribe(callHandlers);
  attemptChannel.subscribe(attemptHandlers);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    callChannel.unsubscribe(callHandlers);
    attemptChannel.unsubscribe(attemptHandlers);
  };
}
