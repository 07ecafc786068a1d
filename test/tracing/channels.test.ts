import { tracingChannel } from 'node:diagnostics_channel';
import { afterEach, describe, expect, test } from 'vitest';
import { type CrmAttemptContext, type CrmCallContext, CrmNotFoundError } from '../../src/index';
import { fakeOverHttp } from '../support/fake-over-http';

type Event = [string, string];

const calls = tracingChannel<unknown, CrmCallContext>('crm-integration-sdk:call');
const attempts = tracingChannel<unknown, CrmAttemptContext>('crm-integration-sdk:attempt');
const unsubscribe: (() => void)[] = [];

afterEach(() => {
  for (const stop of unsubscribe.splice(0)) stop();
});

/** Records every event of both channels, as [channel event, what], and the contexts seen. */
function record(onAttemptStart?: (attempt: CrmAttemptContext) => void) {
  const events: Event[] = [];
  const callContexts: CrmCallContext[] = [];
  const attemptContexts: CrmAttemptContext[] = [];
  const on = <C extends object>(
    name: string,
    seen: C[],
    describe: (context: C) => string,
    first?: (context: C) => void,
  ) => ({
    start: (context: C) => {
      seen.push(context);
      first?.(context);
      events.push([`${name}:start`, describe(context)]);
    },
    end: (context: C) => events.push([`${name}:end`, describe(context)]),
    asyncStart: (context: C) => events.push([`${name}:asyncStart`, describe(context)]),
    asyncEnd: (context: C) => events.push([`${name}:asyncEnd`, describe(context)]),
    error: (context: C) => events.push([`${name}:error`, describe(context)]),
  });
  const callHandlers = on('call', callContexts, (c: CrmCallContext) => c.operation);
  const attemptHandlers = on('attempt', attemptContexts, (a: CrmAttemptContext) => `#${a.attempt}`, onAttemptStart);
  calls.subscribe(callHandlers);
  attempts.subscribe(attemptHandlers);
  unsubscribe.push(() => {
    calls.unsubscribe(callHandlers);
    attempts.unsubscribe(attemptHandlers);
  });
  return { events, callContexts, attemptContexts };
}

describe('the tracing channels, without OpenTelemetry', () => {
  test('publish a call around its attempt, with the context fields, for a success', async () => {
    const { fake, crm } = await fakeOverHttp();
    const account = await crm.accounts.create({ name: 'Acme' });
    const { events, callContexts, attemptContexts } = record();

    await crm.accounts.update(account.id, { city: 'Lyon' });

    expect(events).toEqual([
      ['call:start', 'accounts.update'],
      ['call:end', 'accounts.update'],
      ['attempt:start', '#0'],
      ['attempt:end', '#0'],
      ['attempt:asyncStart', '#0'],
      ['attempt:asyncEnd', '#0'],
      ['call:asyncStart', 'accounts.update'],
      ['call:asyncEnd', 'accounts.update'],
    ]);
    const request = fake.fake.requests.at(-1);
    expect(callContexts[0]).toMatchObject({
      operation: 'accounts.update',
      method: 'PUT',
      urlTemplate: '/integrations/v1/accounts/{id}',
      tenantId: fake.fake.credentials.tenantId,
      status: 200,
      requestId: request?.requestId,
      attempts: 1,
    });
    expect(attemptContexts[0]).toMatchObject({
      call: callContexts[0],
      attempt: 0,
      method: 'PUT',
      url: `${fake.url}/integrations/v1/accounts/${account.id}?tenantId=${fake.fake.credentials.tenantId}`,
      status: 200,
    });
  });

  test('publish every attempt of a call that is retried, numbered from 0', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 2 });
    fake.fake.failNext({ status: 503, retryAfter: 0 });
    const { events, callContexts, attemptContexts } = record();

    await crm.contacts.list({ limit: 5 });

    expect(events.filter(([event]) => event === 'attempt:start').map(([, what]) => what)).toEqual(['#0', '#1']);
    expect(attemptContexts.map((attempt) => attempt.status)).toEqual([503, 200]);
    expect(callContexts[0]).toMatchObject({ operation: 'contacts.list', status: 200, attempts: 2 });
  });

  test('publish the CrmError of a call that fails, with its status and request id', async () => {
    const { fake, crm } = await fakeOverHttp({ maxRetries: 0 });
    const { events, callContexts } = record();

    await expect(crm.opportunities.get('opp_missing')).rejects.toBeInstanceOf(CrmNotFoundError);

    expect(events.map(([event]) => event)).toEqual([
      'call:start',
      'call:end',
      'attempt:start',
      'attempt:end',
      'attempt:asyncStart',
      'attempt:asyncEnd',
      'call:error',
      'call:asyncStart',
      'call:asyncEnd',
    ]);
    expect(callContexts[0]?.error).toBeInstanceOf(CrmNotFoundError);
    expect(callContexts[0]).toMatchObject({
      status: 404,
      requestId: fake.fake.requests.at(-1)?.requestId,
      attempts: 1,
    });
  });

  test('send the headers a subscriber adds, but never let it see or replace the credentials', async () => {
    const { fake, crm } = await fakeOverHttp();
    const { credentials } = fake.fake;
    const { attemptContexts } = record((attempt) => {
      attempt.headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      attempt.headers['X-Api-Key'] = 'stolen';
      attempt.headers['x-tenant-id'] = 'other';
      attempt.headers['bad header'] = 'x';
    });

    await crm.contacts.list();

    const sent = fake.fake.requests.at(-1)?.headers;
    expect(sent?.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(sent?.['x-api-key']).toBe(credentials.apiKey);
    expect(sent?.['x-tenant-id']).toBe(credentials.tenantId);
    expect(JSON.stringify(attemptContexts)).not.toContain(credentials.apiKey);
  });

  test('publish each page request of a list as a call of its own', async () => {
    const { crm } = await fakeOverHttp();
    const account = await crm.accounts.create({ name: 'Acme' });
    for (const email of ['a@x.io', 'b@x.io', 'c@x.io']) await crm.contacts.create({ accountId: account.id, email });
    const { callContexts } = record();

    const emails: (string | null | undefined)[] = [];
    for await (const contact of crm.contacts.list({ limit: 1 })) emails.push(contact.email);

    expect(emails).toEqual(['a@x.io', 'b@x.io', 'c@x.io']);
    expect(callContexts.map((call) => call.operation)).toEqual(['contacts.list', 'contacts.list', 'contacts.list']);
  });

  test('publish nothing once the subscriber has left', async () => {
    const { crm } = await fakeOverHttp();
    const { events } = record();
    for (const stop of unsubscribe.splice(0)) stop();

    await crm.contacts.list();

    expect(events).toEqual([]);
  });
});
