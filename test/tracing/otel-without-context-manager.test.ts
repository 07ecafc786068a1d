import { SpanKind } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { CrmNotFoundError } from '../../src/index';
import { fakeOverHttp } from '../support/fake-over-http';
import { useOtel } from '../support/otel';

// No context manager and no propagator registered: OpenTelemetry's no-op ones.
const otel = useOtel({ contextManager: false, propagator: false });

describe('instrumentCrm() without a context manager or a propagator', () => {
  test('attempt spans are still children of their call span; nothing is injected; a failure ends both', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 1 });
    otel.instrument();
    fake.fake.failNext({ status: 503, retryAfter: 0 });

    await crm.contacts.list();
    await expect(crm.opportunities.get('missing')).rejects.toBeInstanceOf(CrmNotFoundError);

    const calls = otel.spans().filter((span) => span.kind === SpanKind.INTERNAL);
    const attempts = otel.spans().filter((span) => span.kind === SpanKind.CLIENT);
    expect(calls.map((span) => span.name).sort()).toEqual(['crm contacts.list', 'crm opportunities.get']);
    expect(attempts).toHaveLength(3);
    const ids = new Set(calls.map((span) => span.spanContext().spanId));
    expect(attempts.every((span) => ids.has(span.parentSpanContext?.spanId ?? ''))).toBe(true);
    expect(calls.every((span) => span.parentSpanContext === undefined)).toBe(true);
    expect(fake.fake.requests.every((request) => request.headers.traceparent === undefined)).toBe(true);
    expect(otel.openSpans.open.size).toBe(0);
  });
});
