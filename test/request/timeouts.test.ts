import { expect, test } from 'vitest';
import { CrmTimeoutError } from '../../src/index';
import { realPoll, useFaultClock, watched } from '../support/fault-clock';
import {
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  OPPS_PATH,
  okBody,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();
// The timeouts run on a fake clock, moved once the server holds each request: what is measured is
// the server's silence, not how long a busy machine took to connect (test/support/fault-clock.ts).
const clock = useFaultClock();

test('a server that never answers fails the call with CrmTimeoutError after the attempt timeout', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = clientFor(fault(), { timeout: 100, maxRetries: 0 });
  const call = watched(failure(crm.opportunities.get(OPP_ID)));
  await clock.advance(99, fault());
  expect(call.settled).toBe(false);
  await clock.advance(1, fault());
  expect(call.settled).toBe(true);
  const { error, elapsed } = await call.promise;

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect((error as Error).message).toContain('No response within 100 ms');
  expect(elapsed).toBe(100);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  // The client hung up on the attempt it gave up on.
  await realPoll(() => seen[0]?.closedEarly === true);
  expect(seen[0]?.closedEarly).toBe(true);
});

test('a per-call timeout overrides the client timeout', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = clientFor(fault(), { timeout: 30_000, maxRetries: 0 });
  const call = watched(failure(crm.opportunities.get(OPP_ID, { timeout: 100 })));
  await clock.advance(100, fault());
  expect(call.settled).toBe(true);
  const { error, elapsed } = await call.promise;

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBe(100);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a GET whose attempt timed out is retried and returns the next answer', async () => {
  fault().script('GET', OPP_PATH, reply.hang(), reply.ok(OPPORTUNITY));

  const crm = clientFor(fault(), { timeout: 100 });
  const call = watched(crm.opportunities.get(OPP_ID));
  // Up to the retry's request: the clock then stands, and the answer comes over the socket.
  await clock.runUntil(() => clock.fetch.mock.calls.length === 2, fault());

  expect(await call.promise).toEqual(OPPORTUNITY);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
});

test('a POST whose attempt timed out is not repeated: CrmTimeoutError, one execution', async () => {
  fault().script('POST', OPPS_PATH, reply.hang());
  fault().otherwise('POST', OPPS_PATH, reply.ok({ ...OPPORTUNITY, id: 'opp_duplicate' }));

  const crm = clientFor(fault(), { timeout: 100 });
  const call = watched(failure(crm.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' })));
  await clock.advance(100, fault());

  // Failed at its timeout, with no backoff before: no retry was even waited for.
  expect(call.settled).toBe(true);
  expect((await call.promise).error).toBeInstanceOf(CrmTimeoutError);
  expect(clock.fetch).toHaveBeenCalledTimes(1);
  expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
});

test('the attempt timeout covers the body: headers then a stalled body fail with CrmTimeoutError', async () => {
  fault().otherwise('GET', OPP_PATH, reply.stall(okBody(OPPORTUNITY)));

  const crm = clientFor(fault(), { timeout: 100, maxRetries: 0 });
  const call = watched(failure(crm.opportunities.get(OPP_ID)));
  // The headers are in before the clock moves: what times out is the body.
  await realPoll(() => clock.fetch.mock.results.length === 1);
  const response = (await clock.fetch.mock.results[0]?.value) as Response;
  expect(response.status).toBe(200);
  await clock.advance(99, fault());
  expect(call.settled).toBe(false);
  await clock.advance(1, fault());
  expect(call.settled).toBe(true);
  const { error, elapsed } = await call.promise;

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBe(100);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  expect(seen[0]?.bytesSent).toBeGreaterThan(0);
});

test('totalTimeout bounds the whole call, retries and their waits included', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = clientFor(fault(), { timeout: 100, maxRetries: 5, totalTimeout: 250 });
  const call = watched(failure(crm.opportunities.get(OPP_ID)));
  await clock.runUntil(() => call.settled, fault());
  const { error, elapsed } = await call.promise;

  expect(error).toBeInstanceOf(CrmTimeoutError);
  // Six attempts of 100 ms plus their backoff would take several seconds; one attempt alone, 100 ms.
  expect(elapsed).toBe(250);
  const attempts = fault().received('GET', OPP_PATH).length;
  expect(attempts).toBeGreaterThanOrEqual(1);
  expect(attempts).toBeLessThan(6);
});

test('a per-call totalTimeout bounds a call of a client that has none', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = clientFor(fault(), { timeout: 100, maxRetries: 5 });
  const call = watched(failure(crm.opportunities.get(OPP_ID, { totalTimeout: 250 })));
  await clock.runUntil(() => call.settled, fault());
  const { error, elapsed } = await call.promise;

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBe(250);
  expect(fault().received('GET', OPP_PATH).length).toBeLessThan(6);
});

test('a call stopped by totalTimeout says so in its message, not that one attempt timed out (40 calls at once)', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());
  const crm = clientFor(fault(), { timeout: 100, maxRetries: 5, totalTimeout: 250 });

  const calls = watched(Promise.all(Array.from({ length: 40 }, () => failure(crm.opportunities.get(OPP_ID)))));
  await clock.runUntil(() => calls.settled, fault());
  const failures = await calls.promise;

  expect(failures.every(({ error }) => error instanceof CrmTimeoutError)).toBe(true);
  const misleading = failures.map(({ error }) => (error as Error).message).filter((m) => !m.includes('totalTimeout'));
  expect(misleading).toEqual([]);
});

test('of calls sent at once, the unanswered ones fail with CrmTimeoutError and the answered ones return their data', async () => {
  const answeredPath = '/integrations/v1/opportunities/opp_2';
  fault().otherwise('GET', OPP_PATH, reply.hang());
  fault().otherwise('GET', answeredPath, reply.ok({ ...OPPORTUNITY, id: 'opp_2' }));
  const crm = clientFor(fault(), { timeout: 200, maxRetries: 0 });

  const calls = Array.from({ length: 20 }, (_, i) =>
    crm.opportunities.get(i % 2 ? 'opp_2' : OPP_ID).then(
      (data) => data.id,
      (error: unknown) => (error instanceof CrmTimeoutError ? 'timed out' : error),
    ),
  );
  // The answered half settles over the sockets alone; then the clock reaches the others' timeout.
  await Promise.all(calls.filter((_, i) => i % 2));
  const all = watched(Promise.all(calls));
  await clock.advance(200, fault());
  expect(all.settled).toBe(true);
  const outcomes = await all.promise;

  expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? 'opp_2' : 'timed out')));
});

test('a call sent while earlier calls of the client wait keeps its whole timeout', async () => {
  const slowPath = '/integrations/v1/opportunities/opp_slow';
  fault().otherwise('GET', OPP_PATH, reply.hang());
  // Answered after the first call's deadline, but well within its own.
  fault().otherwise('GET', slowPath, reply.ok({ ...OPPORTUNITY, id: 'opp_slow' }, { delayMs: 400 }));
  const crm = clientFor(fault(), { timeout: 600, maxRetries: 0 });

  const first = watched(failure(crm.opportunities.get(OPP_ID)));
  await clock.advance(400, fault());
  const later = watched(crm.opportunities.get('opp_slow'));
  // 600 ms: the first call's deadline; 800 ms: the answer to the later one is sent.
  await clock.advance(200, fault());
  expect(first.settled).toBe(true);
  expect(later.settled).toBe(false);
  await clock.advance(200, fault());

  expect((await later.promise).id).toBe('opp_slow');
  expect((await first.promise).error).toBeInstanceOf(CrmTimeoutError);
});
