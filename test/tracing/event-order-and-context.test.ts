import { describe, expect, test } from 'vitest';
import {
  CrmAbortError,
  type CrmAttemptContext,
  type CrmCallContext,
  CrmClient,
  CrmError,
  CrmNotFoundError,
  CrmRateLimitError,
  CrmTimeoutError,
} from '../../src/index';
import {
  CONTACTS_PATH,
  clientFor,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  okBody,
  rejectionOf,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { attemptChannel, callChannel, onCleanup, record } from '../support/tracing-channels';

const fault = useFaultServer();
const withId = (id: string, headers: Record<string, string> = {}) => ({ headers: { 'x-request-id': id, ...headers } });
const page = (n: number, pages: number) => ({
  extra: { pagination: { page: n, pages, limit: 1, total: pages } },
  headers: { 'x-request-id': `req_page_${n}` },
});
const contact = (n: number) => [{ id: `c_${n}`, email: `${n}@x.io`, accountId: 'acc_1' }];
/** Only the events of the given kinds. */
const only = (events: string[], ...kinds: string[]) => events.filter((e) => kinds.some((k) => e.startsWith(k)));

describe('event order and context fields', () => {
  test('a 429 with Retry-After, then a 200: two attempts, the call ends with the second', async () => {
    fault().script(
      'GET',
      OPP_PATH,
      reply.with(429, { success: false, error: { message: 'slow down' } }, withId('req_1', { 'retry-after': '0' })),
      reply.ok(OPPORTUNITY, withId('req_2')),
    );
    const { events, calls, attempts } = record();

    await clientFor(fault(), { maxRetries: 1 }).opportunities.get(OPP_ID);

    expect(events).toEqual([
      'call:start opportunities.get',
      'call:end opportunities.get',
      'attempt:start #0',
      'attempt:end #0',
      'attempt:asyncStart #0',
      'attempt:asyncEnd #0',
      'attempt:start #1',
      'attempt:end #1',
      'attempt:asyncStart #1',
      'attempt:asyncEnd #1',
      'call:asyncStart opportunities.get',
      'call:asyncEnd opportunities.get',
    ]);
    expect(attempts.map((a) => [a.attempt, a.status, a.method, a.call === calls[0]])).toEqual([
      [0, 429, 'GET', true],
      [1, 200, 'GET', true],
    ]);
    expect(attempts[1]?.url).toBe(`${fault().url}${OPP_PATH}?tenantId=${TENANT}`);
    expect(calls[0]).toMatchObject({ status: 200, requestId: 'req_2', attempts: 2 });
    expect(calls[0]?.error).toBeUndefined();
  });

  test('a 429 retried until it gives up: the call has the last status and request id, and the CrmError', async () => {
    fault().otherwise(
      'GET',
      OPP_PATH,
      reply.with(429, { success: false, error: { message: 'no' } }, withId('req_429', { 'retry-after': '0' })),
    );
    const { events, calls, attempts } = record();

    const error = await rejectionOf(() => clientFor(fault(), { maxRetries: 2 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmRateLimitError);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [0, 429],
      [1, 429],
      [2, 429],
    ]);
    expect(only(events, 'call:')).toEqual([
      'call:start opportunities.get',
      'call:end opportunities.get',
      'call:error opportunities.get',
      'call:asyncStart opportunities.get',
      'call:asyncEnd opportunities.get',
    ]);
    expect(calls[0]).toMatchObject({ status: 429, requestId: 'req_429', attempts: 3, error });
  });

  test('a redirect within the origin: each hop is an attempt, numbered on, with its own URL', async () => {
    fault().script('GET', OPP_PATH, reply.with(302, '', { headers: { location: '/moved/opp_1' } }));
    fault().script('GET', '/moved/opp_1', reply.ok(OPPORTUNITY, withId('req_moved')));
    const { calls, attempts } = record();

    await clientFor(fault()).opportunities.get(OPP_ID);

    expect(attempts.map((a) => [a.attempt, a.status, new URL(a.url).pathname])).toEqual([
      [0, 302, OPP_PATH],
      [1, 200, '/moved/opp_1'],
    ]);
    expect(calls[0]).toMatchObject({ status: 200, requestId: 'req_moved', attempts: 2 });
  });

  test('a redirect to another origin is not followed: one attempt, the call fails with its status', async () => {
    fault().script('GET', OPP_PATH, reply.with(302, '', { headers: { location: 'https://elsewhere.invalid/x' } }));
    const { calls, attempts } = record();

    const error = await rejectionOf(() => clientFor(fault()).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmError);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([[0, 302]]);
    expect(calls[0]).toMatchObject({ status: 302, attempts: 1, error });
  });

  test('timeouts: each attempt ends in an error, the call in a CrmTimeoutError, with no status', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());
    const { events, calls, attempts } = record();

    const error = await rejectionOf(() => clientFor(fault(), { timeout: 40, maxRetries: 1 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(only(events, 'attempt:error', 'call:error')).toEqual([
      'attempt:error #0',
      'attempt:error #1',
      'call:error opportunities.get',
    ]);
    expect(attempts.map((a) => [a.status, a.error instanceof Error])).toEqual([
      [undefined, true],
      [undefined, true],
    ]);
    expect(calls[0]).toMatchObject({ attempts: 2, error });
    expect(calls[0]?.status).toBeUndefined();
  });

  test('an abort mid-attempt: the attempt fails with the reason, the call with a CrmAbortError', async () => {
    fault().otherwise('GET', OPP_PATH, reply.hang());
    const controller = new AbortController();
    const { calls, attempts } = record({ attempt: { start: () => setTimeout(() => controller.abort('stop'), 20) } });

    const error = await rejectionOf(() => clientFor(fault()).opportunities.get(OPP_ID, { signal: controller.signal }));

    expect(error).toBeInstanceOf(CrmAbortError);
    expect(attempts).toHaveLength(1);
    // Published as a masked copy: a reason that is not an error becomes one of its text.
    expect((attempts[0]?.error as Error | undefined)?.message).toBe('stop');
    expect(calls[0]).toMatchObject({ attempts: 1, error });
  });

  test('aborted before anything is sent, and a key function that fails: a call with no attempt', async () => {
    const { events, calls } = record();
    const crm = new CrmClient({
      baseUrl: fault().url,
      tenantId: TENANT,
      apiKey: () => Promise.reject(new Error('vault down')),
    });

    const aborted = await rejectionOf(() => crm.opportunities.get(OPP_ID, { signal: AbortSignal.abort() }));
    const keyless = await rejectionOf(() => crm.opportunities.get(OPP_ID));

    expect(aborted).toBeInstanceOf(CrmAbortError);
    expect(keyless).toBeInstanceOf(CrmError);
    expect(events.filter((e) => e.startsWith('attempt:'))).toEqual([]);
    expect(calls.map((c) => [c.attempts, c.error])).toEqual([
      [0, aborted],
      [0, keyless],
    ]);
    expect(fault().requests).toEqual([]);
  });

  test('maxConcurrency: a call waiting for a slot has started, and its attempt starts once the first has ended', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { delayMs: 30 }));
    const { events } = record();
    const crm = clientFor(fault(), { maxConcurrency: 1 });

    await Promise.all([crm.opportunities.get(OPP_ID), crm.opportunities.get(OPP_ID)]);

    const at = (event: string, n = 0) =>
      events.map((e, i) => [e, i] as const).filter(([e]) => e === event)[n]?.[1] ?? -1;
    expect(at('call:start opportunities.get', 1)).toBeLessThan(at('attempt:asyncEnd #0'));
    expect(at('attempt:start #0', 1)).toBeGreaterThan(at('attempt:asyncEnd #0'));
  });

  test('extraQuery and extraBody: the URL the attempt shows is the one sent', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    fault().otherwise('POST', '/integrations/v1/opportunities', reply.with(201, okBodyObject()));
    const { attempts } = record();
    const crm = clientFor(fault());

    await crm.opportunities.get(OPP_ID, { extraQuery: { view: 'full', tags: ['a', 'b'] } });
    await crm.opportunities.create({ name: 'Deal', accountId: 'acc_1' }, { extraBody: { stage: 'x' } });

    const sent = fault().requests.map((r) => `${fault().url}${r.url}`);
    expect(attempts.map((a) => a.url)).toEqual(sent);
    expect(attempts[0]?.url).toContain('view=full');
  });

  test('crm.request(): operation "request", its method, and its path as urlTemplate', async () => {
    fault().otherwise('PATCH', '/integrations/v1/widgets/w_1', reply.ok({ id: 'w_1' }));
    const { calls, attempts } = record();

    await clientFor(fault()).request({ method: 'PATCH', path: '/integrations/v1/widgets/w_1', body: { a: 1 } });

    expect(calls[0]).toMatchObject({ operation: 'request', method: 'PATCH', tenantId: TENANT, status: 200 });
    expect(attempts[0]?.method).toBe('PATCH');
  });

  test('a list with prefetch: every page request is a call of its own, and every call that starts ends', async () => {
    for (const n of [1, 2, 3, 4]) fault().script('GET', CONTACTS_PATH, reply.ok(contact(n), page(n, 4)));
    const { events, calls } = record();

    const seen: string[] = [];
    for await (const item of clientFor(fault()).contacts.list({ limit: 1 }, { prefetch: 2 })) {
      seen.push(item.id);
      if (seen.length === 2) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(seen).toEqual(['c_1', 'c_2']);
    expect(calls.every((c) => c.operation === 'contacts.list')).toBe(true);
    expect(only(events, 'call:start').length).toBe(only(events, 'call:asyncEnd').length);
    expect(calls.slice(0, 2).map((c) => c.requestId)).toEqual(['req_page_1', 'req_page_2']);
  });

  test('validateResponses: false, two clients and withTenant: each call has its own tenant', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    const { calls } = record();
    const a = clientFor(fault(), { validateResponses: false });
    const b = new CrmClient({ baseUrl: fault().url, apiKey: 'k2', tenantId: 'tenant_b' });

    await Promise.all([
      a.opportunities.get(OPP_ID),
      b.opportunities.get(OPP_ID),
      a.withTenant('tenant_c').opportunities.get(OPP_ID),
    ]);

    expect(calls.map((c) => c.tenantId).sort()).toEqual(['tenant_b', 'tenant_c', TENANT].sort());
    expect(calls.every((c) => c.status === 200 && c.attempts === 1)).toBe(true);
  });

  test('a subscriber that comes mid-call sees what follows; one that leaves mid-call sees no more; the call goes on', async () => {
    fault().script(
      'GET',
      OPP_PATH,
      reply.with(503, { success: false }, { headers: { 'retry-after': '0' }, delayMs: 30 }),
      reply.ok(OPPORTUNITY),
    );
    const early = record({ attempt: { asyncEnd: () => early.stop() } });
    let late: ReturnType<typeof record> | undefined;
    setTimeout(() => {
      late = record();
    }, 10);

    await clientFor(fault(), { maxRetries: 1 }).opportunities.get(OPP_ID);

    expect(early.events).toEqual([
      'call:start opportunities.get',
      'call:end opportunities.get',
      'attempt:start #0',
      'attempt:end #0',
      'attempt:asyncStart #0',
      'attempt:asyncEnd #0',
    ]);
    expect(late?.events).toEqual([
      'attempt:asyncStart #0',
      'attempt:asyncEnd #0',
      'attempt:start #1',
      'attempt:end #1',
      'attempt:asyncStart #1',
      'attempt:asyncEnd #1',
      'call:asyncStart opportunities.get',
      'call:asyncEnd opportunities.get',
    ]);
  });

  test('a subscriber to the attempt channel alone: the attempts are published, their call filled in', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, withId('req_a')));
    const attempts: CrmAttemptContext[] = [];
    const handlers = { start: (a: CrmAttemptContext) => attempts.push(a) } as unknown as Parameters<
      typeof attemptChannel.subscribe
    >[0];
    attemptChannel.subscribe(handlers);
    onCleanup(() => attemptChannel.unsubscribe(handlers));

    await clientFor(fault()).opportunities.get(OPP_ID);

    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.call).toMatchObject({
      operation: 'opportunities.get',
      status: 200,
      requestId: 'req_a',
      attempts: 1,
    });
  });

  test("with a subscriber, an error still carries the frame of the caller's function (README, Stacks)", async () => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(404, 'no'));
    record();
    async function syncOpportunityFromCrm() {
      return await clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID);
    }

    const error = await rejectionOf(syncOpportunityFromCrm);

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error.stack).toContain('syncOpportunityFromCrm');
  });
});

describe('what the channels miss', () => {
  test.each(['asyncEnd', 'error', 'end'] as const)(
    'a subscriber to %s alone (no start handler) is sent nothing',
    async (event) => {
      fault().otherwise('GET', OPP_PATH, reply.jsonError(404, 'no'));
      const seen: CrmCallContext[] = [];
      const handlers = { [event]: (c: CrmCallContext) => seen.push(c) } as unknown as Parameters<
        typeof callChannel.subscribe
      >[0];
      callChannel.subscribe(handlers);
      onCleanup(() => callChannel.unsubscribe(handlers));

      await rejectionOf(() => clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));

      // Node's own tracePromise publishes when any of the five has a subscriber (TracingChannel.hasSubscribers).
      expect(seen).toHaveLength(1);
    },
  );

  test('an attempt whose body never arrives is published as a success (200, no error), though the call times out', async () => {
    fault().otherwise('GET', OPP_PATH, reply.stall(okBody(OPPORTUNITY)));
    const { calls, attempts } = record();

    const error = await rejectionOf(() => clientFor(fault(), { timeout: 60, maxRetries: 0 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(calls[0]?.error).toBe(error);
    expect(attempts[0]?.error).toBeDefined();
  });

  test('the URL of a first attempt is not normalised, that of a retry is: the same request shows two URLs', async () => {
    fault().script(
      'GET',
      '/integrations/v1/widgets/%C3%BC',
      reply.jsonError(503, 'x', { 'retry-after': '0' }),
      reply.ok({ id: 'w' }),
    );
    const { attempts } = record();

    await clientFor(fault(), { maxRetries: 1 }).request({ method: 'GET', path: 'integrations/v1/widgets/ü' });

    expect(attempts).toHaveLength(2);
    // #0 shows '/widgets/ü', #1 '/widgets/%C3%BC'; what was sent both times is the latter.
    expect(attempts[0]?.url).toBe(attempts[1]?.url);
  });

  test('an attempt whose body is over maxResponseBytes is published as a success', async () => {
    fault().otherwise('GET', OPP_PATH, reply.stream(200_000));
    const { attempts } = record();

    await rejectionOf(() => clientFor(fault(), { maxResponseBytes: 1000, maxRetries: 0 }).opportunities.get(OPP_ID));

    expect(attempts[0]?.error).toBeDefined();
  });
});

function okBodyObject() {
  return { success: true, data: { ...OPPORTUNITY, id: 'opp_2' } };
}
