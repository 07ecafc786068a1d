import { describe, expect, test } from 'vitest';
import { CrmApiError, CrmRateLimitError } from '../../src/index';
import { clientFor, failure, OPP_PATH, OPPORTUNITY, OPPS_PATH, reply, useFaultServer } from '../support/fault-server';

/*
 * A create answered with a redirect that turns it into a GET (303, or 301/302 to a POST) was
 * acted on: the server created the record and points at it. Whatever the GET that follows comes
 * to, even a refusal that proves the GET was not acted on, the create must not be sent again:
 * the API has no idempotency keys, so a second POST is a second record.
 */

const fault = useFaultServer();
const NEW_OPPORTUNITY = { name: 'Renewal 2027', accountId: 'acc_1' };
const redirect = (status: number, location: string) => reply.with(status, '', { headers: { location } });

describe('a create redirected to a GET that is then refused is not sent again', () => {
  test.each([303, 302, 301])('POST answered %i, its GET answered 429: one POST, CrmRateLimitError', async (status) => {
    fault().script('POST', OPPS_PATH, redirect(status, OPP_PATH), reply.ok(OPPORTUNITY));
    fault().script('GET', OPP_PATH, reply.jsonError(429, 'slow down', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));

    const { error } = await failure(clientFor(fault()).opportunities.create(NEW_OPPORTUNITY));

    expect(error).toBeInstanceOf(CrmRateLimitError);
    expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
    expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
  });

  test("POST answered 303, its GET answered 503 with Retry-After, throttle: 'auto': one POST", async () => {
    fault().script('POST', OPPS_PATH, redirect(303, OPP_PATH), reply.ok(OPPORTUNITY));
    fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));

    const { error } = await failure(clientFor(fault(), { throttle: 'auto' }).opportunities.create(NEW_OPPORTUNITY));

    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as CrmApiError).status).toBe(503);
    expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
  });

  test('POST answered 307 (the method kept, nothing acted on), then 429: the POST is repeated once', async () => {
    fault().script('POST', OPPS_PATH, redirect(307, '/v2/opportunities'), reply.ok(OPPORTUNITY));
    fault().script('POST', '/v2/opportunities', reply.jsonError(429, 'slow down', { 'retry-after': '0' }));

    const created = await clientFor(fault()).opportunities.create(NEW_OPPORTUNITY);

    expect(created).toEqual(OPPORTUNITY);
    expect(fault().received('POST', OPPS_PATH)).toHaveLength(2);
  });
});
