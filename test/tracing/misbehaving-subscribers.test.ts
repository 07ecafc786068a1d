import { propagation, type TextMapPropagator, type TracerProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { HttpResponse } from 'msw';
import { describe, expect, test } from 'vitest';
import { type CrmAttemptContext, CrmClient } from '../../src/index';
import { ADMIN_TOKEN, API_KEY, BASE_URL, capture, makeClient, ok, TENANT } from '../support/capture';
import { useOtel } from '../support/otel';
import { collectUncaught, record } from '../support/tracing-channels';

const otel = useOtel();
const OPP = { id: 'opp_1', name: 'Deal', accountId: 'acc_1' };
const OPP_PATH = '/integrations/v1/opportunities/:id';

/** Every way of writing a header the subscriber must not set, with values of every kind. */
function plant(attempt: CrmAttemptContext): void {
  const headers = attempt.headers as Record<string, unknown>;
  for (const name of [
    'x-api-key',
    'X-API-KEY',
    'X-Api-Key',
    'authorization',
    'Authorization',
    'AUTHORIZATION',
    'x-tenant-id',
    'X-Tenant-ID',
    'cookie',
    'Cookie',
    'proxy-authorization',
    'Proxy-Authorization',
    'X-Secret-Header',
  ]) {
    headers[name] = 'stolen';
  }
  headers['x-api-key'] = ['stolen', 'twice'];
  headers.AUTHORIZATION = { toString: () => 'Bearer stolen' };
  headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  headers['x-number'] = 42;
  headers['x-bad value'] = 'ignored';
  headers['x-newline'] = 'a\r\nx-api-key: stolen';
  headers['x-not-latin1'] = '€';
  headers['x-throwing'] = {
    toString() {
      throw new Error('boom');
    },
  };
}

describe('a subscriber cannot set or replace a credential header', () => {
  test('on a first attempt, on a retry through ky, with an apiKey function, and on an admin call', async () => {
    const gets = capture('get', OPP_PATH, (_request, index) =>
      index === 0 ? HttpResponse.json({ success: false }, { status: 503, headers: { 'retry-after': '0' } }) : ok(OPP),
    );
    const admin = capture('get', '/integrations/api-key', ok({ hasKey: true }));
    record({ attempt: { start: plant } });
    const options = { redactHeaders: ['x-secret-header'], headers: { 'x-secret-header': 'mine' }, maxRetries: 1 };

    await makeClient(options).opportunities.get('opp_1');
    await new CrmClient({
      baseUrl: BASE_URL,
      tenantId: TENANT,
      apiKey: async () => 'key_fn_1',
      ...options,
    }).opportunities.get('opp_1');
    await makeClient(options).apiKey.status();

    expect(gets).toHaveLength(3);
    const seen = [...gets, ...admin].map(({ headers }) => Object.fromEntries(headers));
    expect(seen.map((headers) => headers['x-api-key'])).toEqual([API_KEY, API_KEY, 'key_fn_1', undefined]);
    expect(seen.map((headers) => headers.authorization)).toEqual([
      undefined,
      undefined,
      undefined,
      `Bearer ${ADMIN_TOKEN}`,
    ]);
    expect(seen.map((headers) => headers['x-tenant-id'])).toEqual([TENANT, TENANT, TENANT, undefined]);
    for (const headers of seen) {
      expect(headers.cookie).toBeUndefined();
      expect(headers['proxy-authorization']).toBeUndefined();
      expect(headers['x-secret-header']).toBe('mine');
      expect(headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      expect(headers['x-number']).toBe('42');
      expect(headers['x-newline']).toBeUndefined();
      expect(headers['x-not-latin1']).toBeUndefined();
      expect(headers['x-throwing']).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain('stolen');
    }
  });

  test('a Proxy put in place of the headers, which claims to hold the credentials, is read like a record', async () => {
    const gets = capture('get', OPP_PATH, ok(OPP));
    record({
      attempt: {
        start(attempt) {
          const fake = new Proxy(
            { 'x-api-key': 'stolen', 'x-tenant-id': 'other', 'x-added': 'yes' },
            { get: (target, name) => Reflect.get(target, name) },
          );
          (attempt as { headers: unknown }).headers = fake;
        },
      },
    });

    await makeClient().opportunities.get('opp_1');

    expect(gets[0]?.headers.get('x-api-key')).toBe(API_KEY);
    expect(gets[0]?.headers.get('x-tenant-id')).toBe(TENANT);
    expect(gets[0]?.headers.get('x-added')).toBe('yes');
  });

  test('headers a subscriber deletes or adds after start are not taken from it', async () => {
    const gets = capture('get', OPP_PATH, ok(OPP));
    record({
      attempt: {
        start(attempt) {
          delete (attempt.headers as Record<string, string>).accept;
        },
        end(attempt) {
          attempt.headers['x-late'] = 'too late';
        },
      },
    });

    await makeClient().opportunities.get('opp_1');

    expect(gets[0]?.headers.get('accept')).toBe('application/json');
    expect(gets[0]?.headers.get('x-late')).toBeNull();
  });
});

describe('a subscriber that breaks the call through the headers record', () => {
  test.each([
    ['null', () => null],
    [
      'a getter that throws',
      () => ({
        get traceparent() {
          throw new Error('getter');
        },
      }),
    ],
    [
      'a Proxy whose ownKeys throws',
      () =>
        new Proxy(
          {},
          {
            ownKeys: () => {
              throw new Error('ownKeys');
            },
          },
        ),
    ],
  ])('headers replaced by %s: the call should still be made (only the bad headers left out)', async (_, make) => {
    capture('get', OPP_PATH, ok(OPP));
    record({
      attempt: {
        start(attempt) {
          (attempt as { headers: unknown }).headers = make();
        },
      },
    });

    await expect(makeClient({ maxRetries: 0 }).opportunities.get('opp_1')).resolves.toMatchObject({ id: 'opp_1' });
  });
});

describe("a subscriber that throws (Node reports it as the process's uncaughtException)", () => {
  test.each(['start', 'end', 'asyncStart', 'asyncEnd', 'error'] as const)(
    'one that throws in %s of both channels: the call resolves as usual; Node reports each throw',
    async (event) => {
      capture('get', OPP_PATH, ok(OPP));
      const boom = () => {
        throw new Error(`subscriber ${event}`);
      };
      record({ call: { [event]: boom }, attempt: { [event]: boom } });

      const { uncaught, result } = await collectUncaught(() => makeClient().opportunities.get('opp_1'));

      expect(result).toMatchObject({ status: 'fulfilled', value: { id: 'opp_1' } });
      // 'error' is not published for a success.
      expect(uncaught).toHaveLength(event === 'error' ? 0 : 2);
    },
  );
});

describe("instrumentCrm()'s own handlers throw into the process's uncaughtException", () => {
  test('a global propagator whose inject throws', async () => {
    capture('get', OPP_PATH, ok(OPP));
    const throwing: TextMapPropagator = {
      inject() {
        throw new Error('propagator broke');
      },
      extract: (context) => context,
      fields: () => [],
    };
    propagation.disable();
    propagation.setGlobalPropagator(throwing);
    try {
      otel.instrument();
      const { uncaught, result } = await collectUncaught(() => makeClient().opportunities.get('opp_1'));
      expect(result.status).toBe('fulfilled');
      // Each becomes the process's uncaught exception: without a listener, the process exits.
      expect(uncaught).toEqual([]);
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });

  test('a tracer provider whose tracer throws', async () => {
    capture('get', OPP_PATH, ok(OPP));
    const broken: TracerProvider = {
      getTracer: () => ({
        startSpan() {
          throw new Error('tracer broke');
        },
        startActiveSpan() {
          throw new Error('tracer broke');
        },
      }),
    };
    otel.instrument(broken);

    const { uncaught, result } = await collectUncaught(() => makeClient().opportunities.get('opp_1'));

    expect(result.status).toBe('fulfilled');
    expect(uncaught).toEqual([]);
  });

  test("a custom fetch that rejects with an object whose 'code' getter throws", async () => {
    otel.instrument();
    const fetch = () =>
      Promise.reject(
        new Proxy(
          {},
          {
            get() {
              throw new Error('hostile');
            },
          },
        ),
      );

    const { uncaught, result } = await collectUncaught(() =>
      makeClient({ fetch, maxRetries: 0 }).opportunities.get('opp_1'),
    );

    expect(result.status).toBe('rejected');
    expect(uncaught).toEqual([]);
  });
});
