import { propagation, SpanKind, SpanStatusCode, type TextMapPropagator, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { CrmClient, CrmConnectionError } from '../../src/index';
import {
  API_KEY,
  CONTACTS_PATH,
  clientFor,
  closedPort,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  okBody,
  rejectionOf,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { useOtel } from '../support/otel';

const otel = useOtel();
const fault = useFaultServer();
const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan | undefined) => span?.spanContext().spanId;
const settle = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: Error) => error.name,
  );
const byStart = (spans: ReadableSpan[]) =>
  [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);

describe('every span that starts ends, under its call', () => {
  test.each([
    ['a success', () => fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY)), {}],
    ['a 404', () => fault().otherwise('GET', OPP_PATH, reply.jsonError(404, 'no')), {}],
    [
      'a 503 then a 200',
      () => fault().script('GET', OPP_PATH, reply.jsonError(503, 'x', { 'retry-after': '0' }), reply.ok(OPPORTUNITY)),
      {},
    ],
    ['timeouts', () => fault().otherwise('GET', OPP_PATH, reply.hang()), { timeout: 30, maxRetries: 1 }],
    ['a reset', () => fault().otherwise('GET', OPP_PATH, reply.reset()), { maxRetries: 1 }],
    ['a body that stalls', () => fault().otherwise('GET', OPP_PATH, reply.stall(okBody(OPPORTUNITY))), { timeout: 40 }],
    ['a body cut short', () => fault().otherwise('GET', OPP_PATH, reply.cut(okBody(OPPORTUNITY))), {}],
    [
      'a redirect',
      () => {
        fault().script('GET', OPP_PATH, reply.with(307, '', { headers: { location: '/v2/opp_1' } }));
        fault().script('GET', '/v2/opp_1', reply.ok(OPPORTUNITY));
      },
      {},
    ],
    ['a totalTimeout', () => fault().otherwise('GET', OPP_PATH, reply.hang()), { totalTimeout: 40 }],
  ])('%s', async (_, script, options) => {
    script();
    otel.instrument();

    await settle(clientFor(fault(), { maxRetries: 0, ...options }).opportunities.get(OPP_ID));

    expect(otel.openSpans.open.size).toBe(0);
    const [call, ...others] = otel.named('crm opportunities.get');
    expect(others).toEqual([]);
    const attempts = otel.spans().filter((span) => span.kind === SpanKind.CLIENT);
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((attempt) => parentOf(attempt) === idOf(call))).toBe(true);
    expect(byStart(attempts).map((a) => a.attributes['http.request.resend_count'])).toEqual(
      attempts.map((_, i) => (i === 0 ? undefined : i)),
    );
    expect(otel.recorded()).not.toContain(API_KEY);
  });

  test('aborts (before sending and mid-attempt), a failing key function, and a list whose loop breaks with pages in flight', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());
    for (const n of [1, 2, 3, 4])
      fault().script(
        'GET',
        CONTACTS_PATH,
        reply.ok([{ id: `c_${n}`, email: `${n}@x.io`, accountId: 'acc_1' }], {
          extra: { pagination: { page: n, pages: 4, limit: 1, total: 4 } },
          delayMs: n > 1 ? 50 : 0,
        }),
      );
    otel.instrument();
    const crm = clientFor(fault());

    await settle(crm.opportunities.get(OPP_ID, { signal: AbortSignal.abort() }));
    await settle(crm.opportunities.get(OPP_ID, { signal: AbortSignal.timeout(30) }));
    await settle(
      new CrmClient({
        baseUrl: fault().url,
        tenantId: TENANT,
        apiKey: () => {
          throw new Error('no key');
        },
      }).opportunities.get(OPP_ID),
    );
    for await (const _ of crm.contacts.list({ limit: 1 }, { prefetch: 2 })) break;
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(otel.openSpans.open.size).toBe(0);
    const calls = otel.spans().filter((span) => span.kind === SpanKind.INTERNAL);
    expect(
      calls.filter((span) => span.name === 'crm opportunities.get').map((span) => span.attributes['error.type']),
    ).toEqual([
      'CrmAbortError',
      // A signal's timeout is told from an abort.
      'CrmTimeoutError',
      'CrmError',
    ]);
    expect(calls.filter((span) => span.name === 'crm contacts.list').length).toBeGreaterThanOrEqual(2);
  });
});

describe('attributes, propagation, providers', () => {
  test('attribute types: numbers for the port, the status and the resend count', async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(503, 'x', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));
    otel.instrument();

    await clientFor(fault(), { maxRetries: 1 }).opportunities.get(OPP_ID);

    const [first, second] = byStart(otel.named(`GET /integrations/v1/opportunities/{id}`));
    expect(first?.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(fault().url).port),
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(typeof second?.attributes['http.request.resend_count']).toBe('number');
    expect(second?.status.code).toBe(SpanStatusCode.UNSET);
  });

  test('a propagator that writes several headers, the credentials among them: those are dropped, the others sent', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    const greedy: TextMapPropagator = {
      inject(_context, carrier: Record<string, string>) {
        carrier['x-b3-traceid'] = 'abc';
        carrier['X-Api-Key'] = 'stolen';
        carrier.authorization = 'Bearer stolen';
        carrier['x-tenant-id'] = 'other';
        carrier.baggage = 'k=v';
      },
      extract: (context) => context,
      fields: () => [],
    };
    propagation.disable();
    propagation.setGlobalPropagator(greedy);
    try {
      otel.instrument();
      await clientFor(fault()).opportunities.get(OPP_ID);
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }

    const [sent] = fault().requests;
    expect(sent?.headers).toMatchObject({
      'x-b3-traceid': 'abc',
      baggage: 'k=v',
      'x-api-key': API_KEY,
      'x-tenant-id': TENANT,
    });
    expect(sent?.headers.authorization).toBeUndefined();
  });

  test('stop() twice is harmless, and a given tracerProvider wins over the global one', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    const stop = otel.instrument();
    stop();
    stop();
    await clientFor(fault()).opportunities.get(OPP_ID);
    expect(otel.spans()).toEqual([]);

    const global = useless();
    trace.setGlobalTracerProvider(global.provider);
    try {
      otel.instrument();
      await clientFor(fault()).opportunities.get(OPP_ID);
    } finally {
      trace.disable();
    }
    expect(global.started).toBe(0);
    expect(otel.spans()).toHaveLength(2);
  });

  test('instrumentCrm() twice: two span trees per call, and the traceparent sent is the later one', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    otel.instrument();
    otel.instrument();

    await clientFor(fault()).opportunities.get(OPP_ID);

    // Not deduplicated: documented here as it is (see the report).
    const attempts = otel.named('GET /integrations/v1/opportunities/{id}');
    expect(otel.named('crm opportunities.get')).toHaveLength(2);
    expect(attempts).toHaveLength(2);
    const sent = fault().requests[0]?.headers.traceparent;
    expect(attempts.map((a) => `00-${a.spanContext().traceId}-${idOf(a)}-01`)).toContain(sent);
  });
});

describe('instrumentCrm()', () => {
  test("error.type of a refused connection is the network error's code (README), not 'TypeError'", async () => {
    const crm = new CrmClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: API_KEY, tenantId: TENANT });
    otel.instrument();

    const error = await rejectionOf(() => crm.opportunities.get(OPP_ID, { maxRetries: 0 }));

    expect(error).toBeInstanceOf(CrmConnectionError);
    const [attempt] = otel.named('GET /integrations/v1/opportunities/{id}');
    expect(attempt?.attributes['error.type']).toBe('ECONNREFUSED');
  });

  test('stop() while a call is in flight: its spans are never ended (never exported)', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { delayMs: 40 }));
    const stop = otel.instrument();

    const call = clientFor(fault()).opportunities.get(OPP_ID);
    await fault().waitForRequests(1);
    stop();
    await call;

    expect(otel.openSpans.open.size).toBe(0);
    expect(otel.spans()).toHaveLength(2);
  });

  test('crm.request(): the concrete path becomes the span name and url.template (unbounded cardinality)', async () => {
    fault().otherwise('GET', '/integrations/v1/widgets/w_12345', reply.ok({ id: 'w_12345' }));
    otel.instrument();

    await clientFor(fault()).request({ method: 'GET', path: 'integrations/v1/widgets/w_12345' });

    const attempt = otel.spans().find((span) => span.kind === SpanKind.CLIENT);
    // HTTP client conventions: name "{method} {url.template}" only with a low-cardinality template, else "{method}".
    expect(attempt?.name).not.toContain('w_12345');
    expect(String(attempt?.attributes['url.template'] ?? '')).not.toContain('w_12345');
  });
});

/** A tracer provider that counts the spans asked of it. */
function useless() {
  const state = { started: 0, provider: undefined as unknown as import('@opentelemetry/api').TracerProvider };
  const noop = trace.getTracerProvider();
  state.provider = {
    getTracer: (...args: Parameters<typeof noop.getTracer>) => {
      const tracer = noop.getTracer(...args);
      return {
        startSpan: (...a: Parameters<typeof tracer.startSpan>) => {
          state.started += 1;
          return tracer.startSpan(...a);
        },
        startActiveSpan: tracer.startActiveSpan.bind(tracer),
      } as typeof tracer;
    },
  };
  return state;
}
