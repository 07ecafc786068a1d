import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  TracerProvider as SdkTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { CrmNotFoundError, CrmTimeoutError } from '../../src/index';
import { instrumentCrm } from '../../src/otel/index';
import { fakeOverHttp } from '../support/fake-over-http';

const exporter = new InMemorySpanExporter();
const provider = new SdkTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const contextManager = new AsyncLocalStorageContextManager();
let stop: () => void = () => {};

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});
beforeEach(() => {
  stop = instrumentCrm({ tracerProvider: provider });
});
afterEach(() => {
  stop();
  exporter.reset();
});

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('instrumentCrm()', () => {
  test('traces a get as an INTERNAL call span with a CLIENT attempt span, and sends its traceparent', async () => {
    const { fake, crm } = await fakeOverHttp();
    const { fake: core } = fake;
    const account = await crm.accounts.create({ name: 'Acme' });
    const created = await crm.opportunities.create({ name: 'Deal', accountId: account.id });
    exporter.reset();

    await crm.opportunities.get(created.id);

    const [call] = named('crm opportunities.get');
    const [attempt] = named('GET /integrations/v1/opportunities/{id}');
    expect(call?.kind).toBe(SpanKind.INTERNAL);
    expect(call?.attributes).toEqual({
      'crm.operation': 'opportunities.get',
      'crm.tenant_id': core.credentials.tenantId,
    });
    expect(attempt?.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(attempt as ReadableSpan)).toBe(call?.spanContext().spanId);
    const url = new URL(fake.url);
    expect(attempt?.attributes).toEqual({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'server.port': Number(url.port),
      'url.full': `${fake.url}/integrations/v1/opportunities/${created.id}?tenantId=${core.credentials.tenantId}`,
      'url.template': '/integrations/v1/opportunities/{id}',
      'http.response.status_code': 200,
    });
    const { traceId, spanId } = (attempt as ReadableSpan).spanContext();
    expect(core.requests.at(-1)?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  test('traces a create under the span that was active when it was called', async () => {
    const { crm } = await fakeOverHttp();
    const tracer = provider.getTracer('test');

    await tracer.startActiveSpan('nightly sync', async (job) => {
      await crm.accounts.create({ name: 'Acme' });
      job.end();
    });

    const [job] = named('nightly sync');
    const [call] = named('crm accounts.create');
    const [attempt] = named('POST /integrations/v1/accounts');
    expect(parentOf(call as ReadableSpan)).toBe(job?.spanContext().spanId);
    expect(parentOf(attempt as ReadableSpan)).toBe(call?.spanContext().spanId);
    expect(call?.spanContext().traceId).toBe(job?.spanContext().traceId);
  });

  test('traces each page request of a three-page list as a call of its own', async () => {
    const { crm } = await fakeOverHttp();
    const account = await crm.accounts.create({ name: 'Acme' });
    for (const email of ['a@x.io', 'b@x.io', 'c@x.io']) await crm.contacts.create({ accountId: account.id, email });
    exporter.reset();

    const contacts = await crm.contacts.list({ limit: 1 }).toArray();

    expect(contacts).toHaveLength(3);
    const calls = named('crm contacts.list');
    const attempts = named('GET /integrations/v1/contacts');
    expect(calls).toHaveLength(3);
    expect(attempts.map((attempt) => parentOf(attempt)).sort()).toEqual(
      calls.map((call) => call.spanContext().spanId).sort(),
    );
  });

  test('traces a call retried after a 429 with two attempt spans, the second with its resend count', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 2 });
    fake.fake.failNext({ status: 429, retryAfter: 0 });

    await crm.contacts.list();

    const [call] = named('crm contacts.list');
    const attempts = named('GET /integrations/v1/contacts').sort(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
    );
    expect(attempts).toHaveLength(2);
    expect(attempts.every((attempt) => parentOf(attempt) === call?.spanContext().spanId)).toBe(true);
    expect(attempts[0]?.attributes).toMatchObject({ 'http.response.status_code': 429, 'error.type': '429' });
    expect(attempts[0]?.attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[0]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[1]?.attributes).toMatchObject({ 'http.response.status_code': 200, 'http.request.resend_count': 1 });
    expect(call?.status.code).toBe(SpanStatusCode.UNSET);
    const sent = fake.fake.requests.map((request) => request.headers.traceparent);
    expect(sent).toEqual(
      attempts.map((attempt) => `00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01`),
    );
  });

  test('marks a 404 as an error, with the masked exception recorded on the call span', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 0 });

    await expect(crm.opportunities.get('opp_missing')).rejects.toBeInstanceOf(CrmNotFoundError);

    const [call] = named('crm opportunities.get');
    const [attempt] = named('GET /integrations/v1/opportunities/{id}');
    expect(call?.status.code).toBe(SpanStatusCode.ERROR);
    expect(call?.events.map((event) => event.name)).toEqual(['exception']);
    expect(call?.events[0]?.attributes?.['exception.type']).toBe('CrmNotFoundError');
    expect(attempt?.attributes).toMatchObject({ 'http.response.status_code': 404, 'error.type': '404' });
    expect(JSON.stringify(spans().map(({ attributes, events }) => ({ attributes, events })))).not.toContain(
      fake.fake.credentials.apiKey,
    );
  });

  test('marks a timeout as an error on the call and on its attempt', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 0, timeout: 50 });
    fake.fake.failNext({ delayMs: 500, status: 200 });

    await expect(crm.contacts.list()).rejects.toBeInstanceOf(CrmTimeoutError);

    const [call] = named('crm contacts.list');
    const [attempt] = named('GET /integrations/v1/contacts');
    expect(call?.status.code).toBe(SpanStatusCode.ERROR);
    expect(call?.attributes['error.type']).toBe('CrmTimeoutError');
    expect(attempt?.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempt?.attributes['error.type']).toBeTypeOf('string');
    expect(attempt?.attributes['http.response.status_code']).toBeUndefined();
  });

  test('records no credential in any attribute or event, whatever the call', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 0 });
    const account = await crm.accounts.create({ name: 'Acme' });
    await crm.contacts.list();
    await crm.accounts.update(account.id, { city: 'Lyon' });
    await crm.opportunities.get('missing').catch(() => undefined);

    const recorded = JSON.stringify(spans().map(({ name, attributes, events }) => ({ name, attributes, events })));
    expect(recorded).not.toContain(fake.fake.credentials.apiKey);
    expect(recorded).not.toContain('x-api-key');
  });

  test('stops tracing once stop() is called', async () => {
    const { crm } = await fakeOverHttp();
    stop();

    await crm.contacts.list();

    expect(spans()).toEqual([]);
  });

  test('uses the global tracer provider by default', async () => {
    stop();
    trace.setGlobalTracerProvider(provider);
    stop = instrumentCrm();
    const { crm } = await fakeOverHttp();

    await crm.contacts.list();

    expect(named('crm contacts.list')).toHaveLength(1);
    trace.disable();
  });
});
