import { expect, test, vi } from 'vitest';
import { CrmAbortError } from '../../src/index';
import {
  ACTIVITIES_PATH,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPS_PATH,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

/** Page `page` of 2 activities, out of 3 pages. */
const activityPage = (page: number) =>
  reply.ok(
    [
      { id: `act_${page}a`, subject: `Call ${page}a` },
      { id: `act_${page}b`, subject: `Call ${page}b` },
    ],
    { extra: { pagination: { page, limit: 2, total: 6, pages: 3 } } },
  );

test('aborting a signal cancels an in-flight call with CrmAbortError whose cause is the reason', async () => {
  fault().otherwise('GET', OPP_PATH, reply.hang());
  const controller = new AbortController();
  const reason = new Error('shutting down');

  const call = failure(clientFor(fault()).opportunities.get(OPP_ID, { signal: controller.signal }));
  await fault().waitForRequests(1);
  controller.abort(reason);
  const { error, elapsed } = await call;

  expect(error).toBeInstanceOf(CrmAbortError);
  expect((error as Error).cause).toBe(reason);
  // Not the 30 s attempt timeout.
  expect(elapsed).toBeLessThan(10_000);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  // The server saw the client hang up, and no retry followed.
  await vi.waitFor(() => expect(seen[0]?.closedEarly).toBe(true));
  expect(fault().requests).toHaveLength(1);
});

test('aborting a POST in flight fails it with CrmAbortError and does not repeat it', async () => {
  fault().otherwise('POST', OPPS_PATH, reply.hang());
  const controller = new AbortController();

  const call = failure(
    clientFor(fault()).opportunities.create({ name: 'Renewal', accountId: 'acc_1' }, { signal: controller.signal }),
  );
  await fault().waitForRequests(1);
  controller.abort();
  const { error } = await call;

  expect(error).toBeInstanceOf(CrmAbortError);
  expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
});

test('a signal aborted before the call sends nothing and fails with CrmAbortError', async () => {
  const { error } = await failure(
    clientFor(fault()).opportunities.get(OPP_ID, { signal: AbortSignal.abort(new Error('too late')) }),
  );

  expect(error).toBeInstanceOf(CrmAbortError);
  expect(fault().requests).toHaveLength(0);
});

test('aborting during the wait before a retry ends the call at once, without the retry', async () => {
  // Retry-After: 30 makes the client wait 30 s before retrying; the abort comes during that wait.
  fault().otherwise('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '30' }));
  const controller = new AbortController();
  let attemptsDone = 0;
  let answered: () => void = () => undefined;
  const firstAttemptDone = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const logger = () => {
    attemptsDone += 1;
    answered();
  };

  const call = failure(clientFor(fault(), { logger }).opportunities.get(OPP_ID, { signal: controller.signal }));
  await firstAttemptDone;
  controller.abort();
  const { error, elapsed } = await call;

  expect(error).toBeInstanceOf(CrmAbortError);
  expect(attemptsDone).toBe(1);
  expect(elapsed).toBeLessThan(10_000);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('aborting a for await pagination loop after the first page sends no further request and throws CrmAbortError', async () => {
  fault().script('GET', ACTIVITIES_PATH, activityPage(1), activityPage(2), activityPage(3));
  const controller = new AbortController();
  const crm = clientFor(fault());

  const ids: string[] = [];
  const { error } = await failure(
    (async () => {
      for await (const activity of crm.activities.list(
        { opportunityId: OPP_ID, limit: 2 },
        { signal: controller.signal },
      )) {
        ids.push(activity.id);
        if (ids.length === 2) controller.abort();
      }
    })(),
  );

  expect(error).toBeInstanceOf(CrmAbortError);
  expect(ids).toEqual(['act_1a', 'act_1b']);
  expect(fault().received('GET', ACTIVITIES_PATH)).toHaveLength(1);
});

test('aborting while the next page is in flight ends the loop with CrmAbortError and asks for no page after it', async () => {
  fault().script('GET', ACTIVITIES_PATH, activityPage(1), reply.hang(), activityPage(3));
  const controller = new AbortController();
  const crm = clientFor(fault());

  const ids: string[] = [];
  const loop = failure(
    (async () => {
      for await (const activity of crm.activities.list(
        { opportunityId: OPP_ID, limit: 2 },
        { signal: controller.signal },
      )) {
        ids.push(activity.id);
      }
    })(),
  );
  await fault().waitForRequests(2);
  controller.abort();
  const { error } = await loop;

  expect(error).toBeInstanceOf(CrmAbortError);
  expect(ids).toEqual(['act_1a', 'act_1b']);
  const seen = fault().received('GET', ACTIVITIES_PATH);
  expect(seen.map((r) => r.query.get('page'))).toEqual([null, '2']);
  await vi.waitFor(() => expect(seen[1]?.closedEarly).toBe(true));
});
