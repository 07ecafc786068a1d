import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { CrmUnprocessableEntityError } from '../../src/index';
import { instrumentCrm } from '../../src/otel/index';
import {
  API_KEY,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPS_PATH,
  reply,
  useFaultServer,
} from '../support/fault-server';
import { useOtel } from '../support/otel';
import { onCleanup } from '../support/tracing-channels';

/*
 * A server's error message may quote a record. Spans are exported where records are not, so by
 * default a span records the status, the error's type and the server's error code, and no message.
 */

const otel = useOtel();
const fault = useFaultServer();
const EMAIL = 'ada@example.com';
const unprocessable = reply.with(422, {
  success: false,
  error: { code: 'invalid_email', message: `invalid ${EMAIL} for ${API_KEY}`, details: { email: EMAIL } },
});

describe('spans of a failed call hold no record data by default', () => {
  test("a 422 quoting a record: the call span has the status, error.type and the server's code, and no message", async () => {
    fault().otherwise('POST', OPPS_PATH, unprocessable);
    otel.instrument();

    const { error } = await failure(
      clientFor(fault(), { maxRetries: 0 }).opportunities.create({ name: `Deal for ${EMAIL}`, accountId: 'acc_1' }),
    );

    expect((error as Error).message).toContain(EMAIL);
    expect(otel.recorded()).not.toContain(EMAIL);
    const [call] = otel.named('crm opportunities.create');
    expect(call?.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(call?.attributes).toMatchObject({
      'error.type': 'CrmUnprocessableEntityError',
      'crm.error.code': 'invalid_email',
    });
    expect(call?.events.map((event) => [event.name, event.attributes])).toEqual([
      ['exception', { 'exception.type': 'CrmUnprocessableEntityError' }],
    ]);
  });

  test('a connection failure: the call span has its type and no message', async () => {
    fault().otherwise('GET', OPP_PATH, reply.reset());
    otel.instrument();

    await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));

    const [call] = otel.named('crm opportunities.get');
    expect(call?.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(call?.attributes['error.type']).toBe('CrmConnectionError');
    expect(call?.events[0]?.attributes).toEqual({ 'exception.type': 'CrmConnectionError' });
  });

  test('recordErrorMessages: true records the message, masked as the error is, and the stack', async () => {
    fault().otherwise('POST', OPPS_PATH, unprocessable);
    onCleanup(instrumentCrm({ tracerProvider: otel.provider, recordErrorMessages: true }));

    const { error } = await failure(
      clientFor(fault(), { maxRetries: 0 }).opportunities.create({ name: 'Deal', accountId: 'acc_1' }),
    );

    expect(error).toBeInstanceOf(CrmUnprocessableEntityError);
    const [call] = otel.named('crm opportunities.create');
    expect(call?.status).toEqual({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    expect(call?.status.message).toContain(`invalid ${EMAIL} for [redacted]`);
    expect(call?.events[0]?.attributes?.['exception.message']).toBe((error as Error).message);
    expect(call?.events[0]?.attributes?.['exception.stacktrace']).toContain('CrmUnprocessableEntityError');
    expect(otel.recorded()).not.toContain(API_KEY);
  });

  test('a successful call records no body, as before', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok({ id: OPP_ID, name: `Deal for ${EMAIL}`, accountId: 'acc_1' }));
    otel.instrument();

    await clientFor(fault()).opportunities.get(OPP_ID);

    expect(otel.spans()).toHaveLength(2);
    expect(otel.recorded()).not.toContain(EMAIL);
  });
});
