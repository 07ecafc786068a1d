import { expect, test, vi } from 'vitest';
import { type CrmClient, CrmTimeoutError } from '../../src/index';
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

/**
 * One answered call first, so the 100 ms attempts below measure the server's silence, not the
 * first connection of a cold (or busy) test worker.
 */
async function warmedUp(crm: CrmClient): Promise<CrmClient> {
  fault().otherwise('GET', '/integrations/v1/opportunities/opp_warm', reply.ok({ id: 'opp_warm' }));
  await crm.opportunities.get('opp_warm');
  return crm;
}

test('a server that never answers fails the call with CrmTimeoutError after the attempt timeout', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = await warmedUp(clientFor(fault(), { timeout: 100, maxRetries: 0 }));
  const { error, elapsed } = await failure(crm.opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect((error as Error).message).toContain('No response within 100 ms');
  expect(elapsed).toBeGreaterThanOrEqual(90);
  expect(elapsed).toBeLessThan(1_000);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  // The client hung up on the attempt it gave up on.
  await vi.waitFor(() => expect(seen[0]?.closedEarly).toBe(true));
});

test('a per-call timeout overrides the client timeout', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = await warmedUp(clientFor(fault(), { timeout: 30_000, maxRetries: 0 }));
  const { error, elapsed } = await failure(crm.opportunities.get(OPP_ID, { timeout: 100 }));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBeLessThan(1_000);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a GET whose attempt timed out is retried and returns the next answer', async () => {
  fault().script('GET', OPP_PATH, reply.hang(), reply.ok(OPPORTUNITY));

  const crm = await warmedUp(clientFor(fault(), { timeout: 100 }));
  const opportunity = await crm.opportunities.get(OPP_ID);

  expect(opportunity).toEqual(OPPORTUNITY);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
});

test('a POST whose attempt timed out is not repeated: CrmTimeoutError, one execution', async () => {
  fault().script('POST', OPPS_PATH, reply.hang());
  fault().otherwise('POST', OPPS_PATH, reply.ok({ ...OPPORTUNITY, id: 'opp_duplicate' }));

  const crm = await warmedUp(clientFor(fault(), { timeout: 100 }));
  const { error } = await failure(crm.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' }));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
});

test('the attempt timeout covers the body: headers then a stalled body fail with CrmTimeoutError', async () => {
  fault().otherwise('GET', OPP_PATH, reply.stall(okBody(OPPORTUNITY)));

  const crm = await warmedUp(clientFor(fault(), { timeout: 100, maxRetries: 0 }));
  const { error, elapsed } = await failure(crm.opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBeLessThan(1_000);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  expect(seen[0]?.bytesSent).toBeGreaterThan(0);
});

test('totalTimeout bounds the whole call, retries and their waits included', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = await warmedUp(clientFor(fault(), { timeout: 100, maxRetries: 5, totalTimeout: 250 }));
  const { error, elapsed } = await failure(crm.opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  // Six attempts of 100 ms plus their backoff would take several seconds; one attempt alone, 100 ms.
  expect(elapsed).toBeGreaterThanOrEqual(200);
  expect(elapsed).toBeLessThan(1_000);
  const attempts = fault().received('GET', OPP_PATH).length;
  expect(attempts).toBeGreaterThanOrEqual(1);
  expect(attempts).toBeLessThan(6);
});

test('a per-call totalTimeout bounds a call of a client that has none', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());

  const crm = await warmedUp(clientFor(fault(), { timeout: 100, maxRetries: 5 }));
  const { error, elapsed } = await failure(crm.opportunities.get(OPP_ID, { totalTimeout: 250 }));

  expect(error).toBeInstanceOf(CrmTimeoutError);
  expect(elapsed).toBeLessThan(1_000);
  expect(fault().received('GET', OPP_PATH).length).toBeLessThan(6);
});

test('a call stopped by totalTimeout says so in its message, not that one attempt timed out (40 calls at once)', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());
  const crm = await warmedUp(clientFor(fault(), { timeout: 100, maxRetries: 5, totalTimeout: 250 }));

  const failures = await Promise.all(Array.from({ length: 40 }, () => failure(crm.opportunities.get(OPP_ID))));

  expect(failures.every(({ error }) => error instanceof CrmTimeoutError)).toBe(true);
  const misleading = failures.map(({ error }) => (error as Error).message).filter((m) => !m.includes('totalTimeout'));
  expect(misleading).toEqual([]);
});

test('of calls sent at once, the unanswered ones fail with CrmTimeoutError and the answered ones return their data', async () => {
  const answeredPath = '/integrations/v1/opportunities/opp_2';
  fault().otherwise('GET', OPP_PATH, reply.hang());
  fault().otherwise('GET', answeredPath, reply.ok({ ...OPPORTUNITY, id: 'opp_2' }));
  const crm = await warmedUp(clientFor(fault(), { timeout: 200, maxRetries: 0 }));

  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      crm.opportunities.get(i % 2 ? 'opp_2' : OPP_ID).then(
        (data) => data.id,
        (error: unknown) => (error instanceof CrmTimeoutError ? 'timed out' : error),
      ),
    ),
  );

  expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? 'opp_2' : 'timed out')));
});

test('a call sent while earlier calls of the client wait keeps its whole timeout', async () => {
  const slowPath = '/integrations/v1/opportunities/opp_slow';
  fault().otherwise('GET', OPP_PATH, reply.hang());
  // Answered after the first call's deadline, but well within its own.
  fault().otherwise('GET', slowPath, reply.ok({ ...OPPORTUNITY, id: 'opp_slow' }, { delayMs: 400 }));
  const crm = await warmedUp(clientFor(fault(), { timeout: 600, maxRetries: 0 }));

  const first = failure(crm.opportunities.get(OPP_ID));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const later = await crm.opportunities.get('opp_slow');

  expect(later.id).toBe('opp_slow');
  expect((await first).error).toBeInstanceOf(CrmTimeoutError);
});
