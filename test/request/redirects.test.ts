import { describe, expect, test } from 'vitest';
import { CrmApiError, CrmConnectionError, type CrmRequestLog } from '../../src/index';
import {
  API_KEY,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  OPPS_PATH,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();
/** A second server: another port, so another origin. */
const elsewhere = useFaultServer();

const NEW_OPPORTUNITY = { name: 'Renewal 2027', accountId: 'acc_1' };
const MOVED_PATH = '/v2/opportunities/opp_1';
const redirect = (status: number, location: string) => reply.with(status, '', { headers: { location } });

describe('a redirect to another origin is not followed, so the credentials stay with baseUrl', () => {
  test.each([301, 302, 303, 307, 308])(
    'a GET answered %i: CrmApiError naming the target, nothing sent there',
    async (status) => {
      fault().script('GET', OPP_PATH, redirect(status, `${elsewhere().url}${MOVED_PATH}?token=abc`));

      const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

      expect(error).toBeInstanceOf(CrmApiError);
      expect((error as CrmApiError).status).toBe(status);
      expect((error as Error).message).toBe(
        `${status} from GET /integrations/v1/opportunities/${OPP_ID}: redirect to ${elsewhere().url}${MOVED_PATH} not followed: the SDK sends credentials only to ${fault().url} (if the API has moved, set baseUrl)`,
      );
      expect(elsewhere().requests).toHaveLength(0);
      // Not retried either: a redirect is an answer.
      expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
    },
  );

  test('a create answered 307 is not sent to the other origin, nor repeated', async () => {
    fault().script('POST', OPPS_PATH, redirect(307, `${elsewhere().url}${OPPS_PATH}`));

    const { error } = await failure(clientFor(fault()).opportunities.create(NEW_OPPORTUNITY));

    expect((error as CrmApiError).status).toBe(307);
    expect(elsewhere().requests).toHaveLength(0);
    expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
  });

  test('a redirect reached after a retry is not followed either', async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy'), redirect(302, `${elsewhere().url}${OPP_PATH}`));

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

    expect((error as CrmApiError).status).toBe(302);
    expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
    expect(elsewhere().requests).toHaveLength(0);
  });
});

describe('a redirect within the origin is followed, as fetch would', () => {
  test.each([301, 302, 307, 308])(
    'a GET answered %i gets the record from the new path, with the credentials',
    async (status) => {
      fault().script('GET', OPP_PATH, redirect(status, `${MOVED_PATH}?tenantId=${TENANT}`));
      fault().script('GET', MOVED_PATH, reply.ok(OPPORTUNITY));

      const opportunity = await clientFor(fault()).opportunities.get(OPP_ID);

      expect(opportunity).toEqual(OPPORTUNITY);
      const [moved] = fault().received('GET', MOVED_PATH);
      expect(moved?.headers['x-api-key']).toBe(API_KEY);
      expect(moved?.headers['x-tenant-id']).toBe(TENANT);
    },
  );

  test('a create answered 307 is sent again to the new path with the same body', async () => {
    fault().script('POST', OPPS_PATH, redirect(307, '/v2/opportunities'));
    fault().script('POST', '/v2/opportunities', reply.ok({ ...OPPORTUNITY, ...NEW_OPPORTUNITY }));

    const created = await clientFor(fault()).opportunities.create(NEW_OPPORTUNITY);

    expect(created.id).toBe(OPP_ID);
    const [first] = fault().received('POST', OPPS_PATH);
    const [second] = fault().received('POST', '/v2/opportunities');
    expect(second?.body).toBe(first?.body);
    expect(second?.headers['content-type']).toBe('application/json');
  });

  test('a create answered 303 is followed by a GET without a body', async () => {
    fault().script('POST', OPPS_PATH, redirect(303, OPP_PATH));
    fault().script('GET', OPP_PATH, reply.ok(OPPORTUNITY));

    const created = await clientFor(fault()).opportunities.create(NEW_OPPORTUNITY);

    expect(created).toEqual(OPPORTUNITY);
    const [get] = fault().received('GET', OPP_PATH);
    expect(get?.body).toBe('');
    expect(get?.headers['content-type']).toBeUndefined();
  });

  test('with a logger, the redirect and the request that follows it are a line each', async () => {
    fault().script('GET', OPP_PATH, redirect(302, MOVED_PATH));
    fault().script('GET', MOVED_PATH, reply.ok(OPPORTUNITY));
    const entries: CrmRequestLog[] = [];

    await clientFor(fault(), { logger: (_line, entry) => entries.push(entry) }).opportunities.get(OPP_ID);

    expect(entries.map(({ url, status, attempt }) => ({ url, status, attempt }))).toEqual([
      { url: `${OPP_PATH}?tenantId=${TENANT}`, status: 302, attempt: 1 },
      { url: MOVED_PATH, status: 200, attempt: 2 },
    ]);
  });

  test('a redirect loop ends after 20 hops with the redirect as a CrmApiError', async () => {
    fault().otherwise('GET', OPP_PATH, redirect(302, OPP_PATH));

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

    expect((error as CrmApiError).status).toBe(302);
    expect((error as Error).message).toBe(
      `302 from GET /integrations/v1/opportunities/${OPP_ID}: redirect to ${fault().url}${OPP_PATH} not followed`,
    );
    expect(fault().received('GET', OPP_PATH)).toHaveLength(21);
  });
});

test('a redirect whose Location is not a URL is a CrmApiError saying so', async () => {
  fault().script('GET', OPP_PATH, redirect(302, 'http://[::1'));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect((error as CrmApiError).status).toBe(302);
  expect((error as Error).message).toBe(
    `302 from GET /integrations/v1/opportunities/${OPP_ID}: redirect to an invalid Location not followed`,
  );
});

test('a redirect whose target the runtime hides (a browser) is a CrmConnectionError, and nothing follows it', async () => {
  let calls = 0;
  const opaque = async () => {
    calls += 1;
    const response = Response.error();
    Object.defineProperty(response, 'type', { value: 'opaqueredirect' });
    return response;
  };

  const { error } = await failure(clientFor(fault(), { fetch: opaque }).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmConnectionError);
  expect((error as Error).message).toContain('redirect that this runtime does not let the SDK read');
  expect(calls).toBe(1);
});
