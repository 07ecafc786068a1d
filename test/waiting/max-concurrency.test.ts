import { expect, test, vi } from 'vitest';
import { CrmAbortError, CrmConnectionError, CrmTimeoutError } from '../../src/index';
import { watched } from '../support/fault-clock';
import {
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
const oppPath = (id: string) => `/integrations/v1/opportunities/${id}`;

test('1,000 calls issued at once with maxConcurrency 4 never have more than 4 in flight, and all succeed', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { delayMs: 2 }));
  const unhandled = vi.fn();
  process.on('unhandledRejection', unhandled);
  const timersBefore = timers();
  try {
    const crm = clientFor(fault(), { maxConcurrency: 4 });

    const results = await Promise.allSettled(Array.from({ length: 1_000 }, () => crm.opportunities.get(OPP_ID)));
    // Let any stray rejection or timer surface before looking.
    await new Promise((resolve) => setImmediate(resolve));

    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1_000);
    expect(fault().received('GET', OPP_PATH)).toHaveLength(1_000);
    expect(fault().maxInFlight).toBeLessThanOrEqual(4);
    // The limit is used, not just respected: calls did run side by side.
    expect(fault().maxInFlight).toBeGreaterThanOrEqual(2);
    expect(unhandled).not.toHaveBeenCalled();
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  } finally {
    process.off('unhandledRejection', unhandled);
  }
  // About 2 s on an idle machine (the client's CPU per call, not waiting); room for a busy one.
}, 180_000);

test('a queued call whose signal aborts leaves the queue with CrmAbortError and is never sent', async () => {
  fault().otherwise('GET', oppPath('opp_first'), reply.ok({ id: 'opp_first' }, { delayMs: 100 }));
  fault().otherwise('GET', oppPath('opp_queued'), reply.ok({ id: 'opp_queued' }));
  fault().otherwise('GET', oppPath('opp_after'), reply.ok({ id: 'opp_after' }));
  const crm = clientFor(fault(), { maxConcurrency: 1 });
  const controller = new AbortController();

  const first = crm.opportunities.get('opp_first');
  let firstDone = false;
  void first.then(() => {
    firstDone = true;
  });
  const queued = failure(crm.opportunities.get('opp_queued', { signal: controller.signal }));
  const after = crm.opportunities.get('opp_after');
  await fault().waitForRequests(1);
  controller.abort();
  const { error } = await queued;

  expect(error).toBeInstanceOf(CrmAbortError);
  expect((error as Error).message).toContain('while queued');
  // It left the queue at once, without waiting for the slot to be free.
  expect(firstDone).toBe(false);
  expect((await first).id).toBe('opp_first');
  expect((await after).id).toBe('opp_after');
  expect(fault().requests.map((r) => r.path)).toEqual([oppPath('opp_first'), oppPath('opp_after')]);
});

test('calls that fail release their slot: after a reset and a timeout, the next queued call still runs', async () => {
  fault().script('GET', OPP_PATH, reply.reset(), reply.hang(), reply.ok(OPPORTUNITY));
  const crm = clientFor(fault(), { maxConcurrency: 1, maxRetries: 0, timeout: 250 });

  const [reset, timedOut, ok] = await Promise.allSettled([
    crm.opportunities.get(OPP_ID),
    crm.opportunities.get(OPP_ID),
    crm.opportunities.get(OPP_ID),
  ]);

  expect(reset.status === 'rejected' && reset.reason).toBeInstanceOf(CrmConnectionError);
  expect(timedOut.status === 'rejected' && timedOut.reason).toBeInstanceOf(CrmTimeoutError);
  expect(ok.status === 'fulfilled' && ok.value).toEqual(OPPORTUNITY);
  expect(fault().maxInFlight).toBe(1);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(3);
});

test('maxConcurrency is shared by a client and its withTenant() clients', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { delayMs: 5 }));
  const crm = clientFor(fault(), { maxConcurrency: 2 });
  const other = crm.withTenant('tenant_other');

  await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? crm : other).opportunities.get(OPP_ID)));

  expect(fault().maxInFlight).toBe(2);
  const tenants = fault()
    .received('GET', OPP_PATH)
    .map((r) => r.query.get('tenantId'));
  expect(tenants.filter((t) => t === TENANT)).toHaveLength(10);
  expect(tenants.filter((t) => t === 'tenant_other')).toHaveLength(10);
});

test('aborting one signal shared by 1,000 calls rejects every unfinished call with CrmAbortError; the queued ones are never sent', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { delayMs: 2 }));
  const unhandled = vi.fn();
  process.on('unhandledRejection', unhandled);
  try {
    const crm = clientFor(fault(), { maxConcurrency: 4 });
    const controller = new AbortController();

    const calls = Array.from({ length: 1_000 }, () => crm.opportunities.get(OPP_ID, { signal: controller.signal }));
    await fault().waitForRequests(20);
    controller.abort();
    const results = await Promise.allSettled(calls);
    await new Promise((resolve) => setImmediate(resolve));

    const done = results.filter((r) => r.status === 'fulfilled').length;
    const aborted = results.filter((r) => r.status === 'rejected' && r.reason instanceof CrmAbortError).length;
    expect(done + aborted).toBe(1_000);
    expect(aborted).toBeGreaterThan(900);
    // What reached the server: the calls that finished, and at most the 4 in flight at the abort.
    expect(fault().requests.length).toBeLessThanOrEqual(done + 4);
    expect(fault().maxInFlight).toBeLessThanOrEqual(4);
    expect(unhandled).not.toHaveBeenCalled();
  } finally {
    process.off('unhandledRejection', unhandled);
  }
});

test('totalTimeout also bounds the time a call waits for a maxConcurrency slot', async () => {
  // On a fake clock, moved once the server holds the request: the slot frees at 600 ms, whatever
  // the machine's load, and the waiting call must have ended before.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  try {
    // The only slot is held by a call the server never answers (it gives up after 600 ms).
    fault().script('GET', OPP_PATH, reply.hang());
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
    const crm = clientFor(fault(), { maxConcurrency: 1, maxRetries: 0 });
    const holder = failure(crm.opportunities.get(OPP_ID, { timeout: 600 }));
    await fault().waitForRequests(1);

    const started = performance.now();
    const waiting = watched(
      crm.opportunities.get(OPP_ID, { totalTimeout: 150 }).then(
        () => 'succeeded',
        (error: unknown) => error,
      ),
    );
    while (!waiting.settled && performance.now() - started < 590) await vi.advanceTimersByTimeAsync(10);
    const elapsed = performance.now() - started;
    expect(waiting.settled).toBe(true);
    await vi.advanceTimersByTimeAsync(600);
    await holder;

    expect(await waiting.promise).toBeInstanceOf(CrmTimeoutError);
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(600);
    // The call timed out in the queue: it never reached the server.
    expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
  } finally {
    vi.useRealTimers();
  }
});
