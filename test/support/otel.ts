import { context, type ProxyTracerProvider, propagation, type TracerProvider, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  TracerProvider as SdkTracerProvider,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { instrumentCrm } from '../../src/otel/index';

/** Counts spans started and ended, to find spans left open. */
class OpenSpans implements SpanProcessor {
  readonly open = new Set<Span>();
  onStart(span: Span): void {
    this.open.add(span);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span as Span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * An in-memory exporter, a provider, and (unless `contextManager: false`) the async context
 * manager and the W3C propagator, for the calling file; instrumentCrm() stopped after each test.
 */
export function useOtel(options: { contextManager?: boolean; propagator?: boolean } = {}) {
  const exporter = new InMemorySpanExporter();
  const openSpans = new OpenSpans();
  const provider = new SdkTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter }), openSpans] });
  const stops: (() => void)[] = [];
  beforeAll(() => {
    if (options.contextManager !== false)
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    if (options.propagator !== false) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
    exporter.reset();
    openSpans.open.clear();
  });
  return {
    exporter,
    provider,
    openSpans,
    instrument(tracerProvider: TracerProvider = provider) {
      const stop = instrumentCrm({ tracerProvider });
      stops.push(stop);
      return stop;
    },
    spans: () => exporter.getFinishedSpans(),
    named: (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name),
    /** What every span records, as text. */
    recorded: () =>
      JSON.stringify(
        exporter
          .getFinishedSpans()
          .map(({ name, attributes, events, status, links }) => ({ name, attributes, events, status, links })),
      ),
  };
}

/**
 * Exports what the global tracer provider holds. NodeSDK's spans end before they are exported:
 * its resource has attributes detected asynchronously, which the span processor awaits.
 */
export const flushGlobalSpans = (): Promise<void> =>
  (
    (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as unknown as { forceFlush(): Promise<void> }
  ).forceFlush();
