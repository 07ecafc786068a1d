import { SpanKind, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { instrumentCrm } from '../../src/otel/index';
import { clientFor, OPP_ID, OPP_PATH, OPPORTUNITY, reply, useFaultServer } from '../support/fault-server';
import { flushGlobalSpans } from '../support/otel';

/*
 * README "Tracing", the setup without the auto-instrumentations: NodeSDK alone registers the
 * context manager and the propagator, so spans nest and traceparent is sent.
 */

const fault = useFaultServer();
const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let stop: () => void;
beforeAll(() => {
  sdk.start();
  stop = instrumentCrm();
});
afterAll(async () => {
  stop();
  await sdk.shutdown();
});

describe('the README tracing setup, NodeSDK alone', () => {
  test('the call span is a child of the active span, its attempt a CLIENT span under it, and the request carries its traceparent', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));

    await trace.getTracer('app').startActiveSpan('job', async (job) => {
      await clientFor(fault()).opportunities.get(OPP_ID);
      job.end();
    });
    await flushGlobalSpans();

    const spans = exporter.getFinishedSpans();
    const job = spans.find((span) => span.name === 'job');
    const call = spans.find((span) => span.name === 'crm opportunities.get');
    const attempts = spans.filter((span) => span.kind === SpanKind.CLIENT);
    expect(call?.parentSpanContext?.spanId).toBe(job?.spanContext().spanId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
    const { traceId, spanId } = attempts[0]?.spanContext() ?? {};
    expect(fault().received('GET', OPP_PATH)[0]?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });
});
