import { tracingChannel } from 'node:diagnostics_channel';
import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { CrmClient } from '../../src/index';
import { instrumentCrm } from '../../src/otel/index';
import { API_KEY, BASE_URL, capture, makeClient, ok, TENANT } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';
import { record } from '../support/tracing-channels';

const OPP = { id: 'opp_1', name: 'Deal', accountId: 'acc_1' };
const PAGE = {
  success: true,
  data: [{ id: 'c_1', email: 'a@x.io', accountId: 'acc_1' }],
  pagination: { page: 1, pages: 1, limit: 20, total: 1 },
};

/** A fetch that records what it is called with, and answers as the global one (MSW). */
function spyFetch() {
  const inits: (RequestInit | undefined)[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    inits.push(init);
    return globalThis.fetch(input, init);
  };
  return { fetch, inits };
}

/** Calls that take every path of the request path: plain, with extras, an apiKey function, maxConcurrency, a retry, a list, a failure. */
async function everyPath(fetch: typeof globalThis.fetch) {
  let first = true;
  capture('get', mswPath(endpoints.getOpportunity), () => {
    const answer = first
      ? new Response('{"success":false}', { status: 503, headers: { 'retry-after': '0' } })
      : ok(OPP);
    first = false;
    return answer;
  });
  capture('get', mswPath(endpoints.listContacts), () => Response.json(PAGE));
  const crm = makeClient({ fetch, logger: () => {} });
  await crm.opportunities.get('opp_1', { maxRetries: 1 });
  await crm.opportunities.get('opp_1', { extraQuery: { view: 'full' } });
  await new CrmClient({
    baseUrl: BASE_URL,
    tenantId: TENANT,
    apiKey: async () => API_KEY,
    fetch,
    maxConcurrency: 1,
  }).opportunities.get('opp_1');
  await crm.contacts.list().toArray();
  await crm.opportunities.get('opp_1', { signal: AbortSignal.abort() }).catch(() => undefined);
}

describe('without a subscriber, nothing of the tracing code runs', () => {
  test('no call on any path is traced; fetch gets the plain headers record (not the traced Headers)', async () => {
    const { fetch, inits } = spyFetch();
    // Subscribers to other channels, and a TracingChannel of another name, do not count.
    const other = tracingChannel('crm-integration-sdk:other');
    const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
    other.subscribe(handlers);
    try {
      await everyPath(fetch);
    } finally {
      other.unsubscribe(handlers);
    }
    expect(inits.length).toBeGreaterThanOrEqual(4);
    // The first attempt of a call outside ky sends the prepared record itself.
    expect(inits.some((init) => init?.headers !== undefined && !(init.headers instanceof Headers))).toBe(true);
    expect(inits.every((init) => !new Headers(init?.headers).has('traceparent'))).toBe(true);
  });

  test('instrumentCrm() stopped, or a subscriber gone: calls are untraced again', async () => {
    const { fetch, inits } = spyFetch();
    const stop = instrumentCrm();
    stop();
    const { stop: leave } = record();
    leave();

    await everyPath(fetch);
    expect(inits.some((init) => init?.headers !== undefined && !(init.headers instanceof Headers))).toBe(true);
  });

  test('with a subscriber every call is traced, and the traced attempt hands fetch a Headers', async () => {
    const { fetch, inits } = spyFetch();
    const { calls } = record();

    await everyPath(fetch);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(inits.every((init) => init?.headers instanceof Headers || init?.headers === undefined)).toBe(true);
  });
});
