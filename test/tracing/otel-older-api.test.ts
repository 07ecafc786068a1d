import { readFileSync } from 'node:fs';
import { type Context, context, propagation, SpanKind } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { clientFor, OPP_ID, OPP_PATH, OPPORTUNITY, reply, useFaultServer } from '../support/fault-server';
import { useNodeFetch } from '../support/msw-server';

/*
 * instrumentCrm() beside @opentelemetry/instrumentation-undici with the oldest APIs its peer range
 * (^1.3.0) admits, 1.3.0, and 1.9.1 (a common pinned set with instrumentation-undici 0.33): they
 * have no context.attach, which 1.10 added. The SDK's otel entry is loaded against each (the
 * devDependencies otel-api-1-3 and otel-api-1-9); the globals, the SDK's tracer provider and
 * undici's instrumentation are the newest API's, which an older API reads as its own.
 */

const fault = useFaultServer();
useNodeFetch();
const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let undici: UndiciInstrumentation;
beforeAll(() => {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  undici = new UndiciInstrumentation();
  undici.setTracerProvider(provider);
});
afterAll(() => {
  undici.disable();
  propagation.disable();
  context.disable();
});
afterEach(() => {
  exporter.reset();
  context.disable();
  vi.restoreAllMocks();
  vi.doUnmock('@opentelemetry/api');
});

const clients = (spans: ReadableSpan[]) => spans.filter((span) => span.kind === SpanKind.CLIENT);
const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

/** The otel entry, loaded against `@opentelemetry/api` as the package `api` (an alias of an older version). */
async function instrumentCrmWith(api: string, load: () => Promise<unknown>) {
  vi.resetModules();
  vi.doMock('@opentelemetry/api', load);
  const entry = await import('../../src/otel/index');
  const loaded = (await import('@opentelemetry/api')) as typeof import('@opentelemetry/api');
  const { version } = JSON.parse(readFileSync(`node_modules/${api}/package.json`, 'utf8')) as { version: string };
  return { instrumentCrm: entry.instrumentCrm, version, attach: (loaded.context as { attach?: unknown }).attach };
}

/** A context manager as @opentelemetry/context-async-hooks 1.x and 2.x made it: AsyncLocalStorage, no attach(). */
function managerWithoutAttach() {
  const manager = new AsyncLocalStorageContextManager();
  Object.defineProperty(manager, 'attach', { value: undefined });
  return manager;
}

/** A context manager of another kind, whose store cannot be reached. */
class OpaqueManager {
  readonly #inner = new AsyncLocalStorageContextManager();
  active(): Context {
    return this.#inner.active();
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#inner.with(active, fn, thisArg, ...args);
  }
  bind<T>(active: Context, target: T): T {
    return this.#inner.bind(active, target);
  }
  enable(): this {
    this.#inner.enable();
    return this;
  }
  disable(): this {
    this.#inner.disable();
    return this;
  }
}

describe.each([
  ['otel-api-1-3', '1.3.0', () => import('otel-api-1-3')],
  ['otel-api-1-9', '1.9.1', () => import('otel-api-1-9')],
])('with @opentelemetry/api %s (%s), which has no context.attach', (api, version, load) => {
  test.each([
    ['with attach()', () => new AsyncLocalStorageContextManager()],
    ['without attach(), as context-async-hooks 1.x and 2.x', managerWithoutAttach],
  ])(
    'a retried call under an app span, the context manager %s: one CLIENT span and one traceparent per attempt',
    async (_, manager) => {
      context.setGlobalContextManager(manager().enable());
      const loaded = await instrumentCrmWith(api, load);
      expect([loaded.version, loaded.attach]).toEqual([version, undefined]);
      const stop = loaded.instrumentCrm({ tracerProvider: provider });
      fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));

      try {
        await provider.getTracer('app').startActiveSpan('job', async (job) => {
          await clientFor(fault()).opportunities.get(OPP_ID);
          job.end();
        });
      } finally {
        stop();
      }

      const spans = exporter.getFinishedSpans();
      const job = spans.find((span) => span.name === 'job');
      const call = spans.find((span) => span.name === 'crm opportunities.get');
      const attempts = clients(spans);
      expect(attempts.map((span) => span.instrumentationScope.name)).toEqual([
        'crm-integration-sdk',
        'crm-integration-sdk',
      ]);
      for (const span of attempts) {
        expect(span.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
        expect(span.spanContext().traceId).toBe(job?.spanContext().traceId);
      }
      const sent = fault()
        .received('GET', OPP_PATH)
        .map((request) => request.headers.traceparent);
      expect(sent).toEqual(attempts.map(traceparentOf));
    },
  );

  test('a context manager registered after instrumentCrm(): each attempt is still one CLIENT span with one traceparent', async () => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const { instrumentCrm } = await instrumentCrmWith(api, load);
    const stop = instrumentCrm({ tracerProvider: provider });
    context.setGlobalContextManager(managerWithoutAttach().enable());
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));

    try {
      await clientFor(fault()).opportunities.get(OPP_ID);
    } finally {
      stop();
    }

    const attempts = clients(exporter.getFinishedSpans());
    expect(attempts.map((span) => span.instrumentationScope.name)).toEqual(['crm-integration-sdk']);
    expect(
      fault()
        .received('GET', OPP_PATH)
        .map((request) => request.headers.traceparent),
    ).toEqual(attempts.map(traceparentOf));
  });

  test('a context manager of another kind: instrumentCrm() warns once that undici will add a span, and every call still goes', async () => {
    context.setGlobalContextManager(new OpaqueManager().enable());
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    delete (globalThis as Record<symbol, unknown>)[
      Symbol.for('crm-integration-sdk/otel: warned of an API without attach')
    ];
    const { instrumentCrm } = await instrumentCrmWith(api, load);
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));

    const stop = instrumentCrm({ tracerProvider: provider });
    try {
      await clientFor(fault()).opportunities.get(OPP_ID);
      await clientFor(fault()).opportunities.get(OPP_ID);
    } finally {
      stop();
    }

    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toContain('Upgrade @opentelemetry/api to 1.10 or later');
    expect(warn.mock.calls[0]?.[1]).toMatchObject({ code: 'CRM_OTEL_API_WITHOUT_ATTACH' });
    expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
  });
});
