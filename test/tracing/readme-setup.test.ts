import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTracing } from '../../examples/tracing';
import { fakeOverHttp } from '../support/fake-over-http';
import { useNodeFetch } from '../support/msw-server';
import { flushGlobalSpans } from '../support/otel';

/*
 * README "Tracing", as a new user runs it: NodeSDK with the auto-instrumentations, then
 * instrumentCrm(). Requests go out through Node's own fetch (MSW closed), as in a service, so
 * undici's and node:http's instrumentations see them: the fake CRM's server span is in the trace.
 */

const exporter = new InMemorySpanExporter();
useNodeFetch();
let stop: () => Promise<void>;
beforeAll(() => {
  stop = startTracing({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
});
afterAll(() => stop());

const ofKind = (kind: SpanKind) => exporter.getFinishedSpans().filter((span) => span.kind === kind);
const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;

describe('the README tracing setup, with the auto-instrumentations', () => {
  test("one trace from the SDK call to the server's span: crm <operation>, one CLIENT span, the server's span under it", async () => {
    const { crm } = await fakeOverHttp();

    await crm.contacts.list({ limit: 5 });
    await flushGlobalSpans();

    const [call, ...moreCalls] = exporter.getFinishedSpans().filter((span) => span.name === 'crm contacts.list');
    const [attempt, ...moreClients] = ofKind(SpanKind.CLIENT);
    const served = ofKind(SpanKind.SERVER);
    expect(moreCalls).toEqual([]);
    expect(moreClients).toEqual([]);
    expect(attempt?.name).toBe('GET /integrations/v1/contacts');
    expect(parentOf(attempt)).toBe(call?.spanContext().spanId);
    // The server extracted one traceparent, the attempt's: its span continues the same trace.
    expect(served).toHaveLength(1);
    expect(parentOf(served[0])).toBe(attempt?.spanContext().spanId);
    expect(served[0]?.spanContext().traceId).toBe(call?.spanContext().traceId);
  });
});
