import { SpanKind } from '@opentelemetry/api';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { clientFor, OPP_ID, OPP_PATH, OPPORTUNITY, reply, TENANT, useFaultServer } from '../support/fault-server';
import { useNodeFetch } from '../support/msw-server';
import { useOtel } from '../support/otel';

/*
 * The SDK beside @opentelemetry/instrumentation-undici, which the auto-instrumentations turn on
 * for most Node services and which traces every fetch: each attempt is still one CLIENT span,
 * under the call's span, and its request carries one traceparent, that span's.
 */

const otel = useOtel();
const fault = useFaultServer();
useNodeFetch();
let undici: UndiciInstrumentation;
beforeAll(() => {
  undici = new UndiciInstrumentation();
  undici.setTracerProvider(otel.provider);
});
afterAll(() => undici.disable());

const clients = (spans: ReadableSpan[]) => spans.filter((span) => span.kind === SpanKind.CLIENT);
const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

describe('with undici instrumented', () => {
  test('a call with no span active: one CLIENT span, under the call span, and one traceparent that is its own', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    otel.instrument();

    await clientFor(fault()).opportunities.get(OPP_ID);

    const [call] = otel.named('crm opportunities.get');
    const [attempt, ...others] = clients(otel.spans());
    expect(others).toEqual([]);
    expect(attempt?.name).toBe('GET /integrations/v1/opportunities/{id}');
    expect(attempt?.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
    expect(attempt?.spanContext().traceId).toBe(call?.spanContext().traceId);
    const [request] = fault().received('GET', OPP_PATH);
    expect(request?.headers.traceparent).toBe(attempt && traceparentOf(attempt));
  });

  test('a retried call under an app span: one CLIENT span and one traceparent per attempt, all in the app trace', async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));
    otel.instrument();
    const tracer = otel.provider.getTracer('app');

    await tracer.startActiveSpan('job', async (job) => {
      await clientFor(fault()).opportunities.get(OPP_ID);
      job.end();
    });

    const [job] = otel.named('job');
    const [call] = otel.named('crm opportunities.get');
    const attempts = clients(otel.spans());
    expect(call?.parentSpanContext?.spanId).toBe(job?.spanContext().spanId);
    expect(attempts.map((span) => span.attributes['http.request.resend_count'])).toEqual([undefined, 1]);
    for (const span of attempts) {
      expect(span.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(job?.spanContext().traceId);
    }
    expect(
      fault()
        .received('GET', OPP_PATH)
        .map((request) => request.headers.traceparent),
    ).toEqual(attempts.map(traceparentOf));
  });

  test("the app's own fetch, after an SDK call, is still traced by undici's instrumentation", async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    fault().otherwise('GET', '/health', reply.with(200, 'ok'));
    otel.instrument();

    await clientFor(fault()).opportunities.get(OPP_ID);
    await (await fetch(`${fault().url}/health`)).text();

    const health = clients(otel.spans()).filter((span) => span.attributes['url.path'] === '/health');
    expect(health).toHaveLength(1);
    const [request] = fault().received('GET', '/health');
    expect(request?.headers.traceparent).toBe(health[0] && traceparentOf(health[0]));
  });

  test('no credential in any span, with a key an apiKey function returns echoed in a redirect', async () => {
    const key = 'key_live_und1c1Echo';
    fault().script('GET', OPP_PATH, reply.with(307, '', { headers: { location: `/moved/opp_1?key=${key}` } }));
    fault().otherwise('GET', '/moved/opp_1', reply.ok(OPPORTUNITY));
    otel.instrument();

    await new CrmClient({ baseUrl: fault().url, apiKey: async () => key, tenantId: TENANT }).opportunities.get(OPP_ID);

    expect(clients(otel.spans())).toHaveLength(2);
    expect(otel.recorded()).not.toContain(key);
  });

  test('without instrumentCrm, undici alone traces the attempt, as it would any fetch', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));

    await clientFor(fault()).opportunities.get(OPP_ID);

    const [attempt, ...others] = clients(otel.spans());
    expect(others).toEqual([]);
    expect(attempt?.instrumentationScope.name).toBe('@opentelemetry/instrumentation-undici');
    expect(fault().received('GET', OPP_PATH)[0]?.headers.traceparent).toBe(attempt && traceparentOf(attempt));
  });

  test('instrumentCrm() twice: every attempt still sends one traceparent, and the retry after a 503 is still traced', async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));
    otel.instrument();
    otel.instrument();

    await clientFor(fault()).opportunities.get(OPP_ID);

    const sent = fault()
      .received('GET', OPP_PATH)
      .map((request) => request.headers.traceparent);
    expect(sent).toHaveLength(2);
    expect(sent.every((header) => /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/.test(String(header)))).toBe(true);
    const retries = clients(otel.spans()).filter((span) => span.attributes['http.request.resend_count'] === 1);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(clients(otel.spans()).every((span) => span.instrumentationScope.name === 'crm-integration-sdk')).toBe(true);
  });
});
