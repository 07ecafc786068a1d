import { describe, expect, test } from 'vitest';
import { CrmConnectionError, CrmTimeoutError } from '../../src/index';
import {
  clientFor,
  closedPort,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  OPPS_PATH,
  okBody,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();
const NEW_OPPORTUNITY = { name: 'Renewal 2027', accountId: 'acc_1' };

describe('a connection reset before the response', () => {
  test('a GET is retried and returns the next answer', async () => {
    fault().script('GET', OPP_PATH, reply.reset(), reply.ok(OPPORTUNITY));

    const opportunity = await clientFor(fault()).opportunities.get(OPP_ID);

    expect(opportunity).toEqual(OPPORTUNITY);
    const seen = fault().received('GET', OPP_PATH);
    expect(seen).toHaveLength(2);
    expect(seen.map((r) => r.closedEarly)).toEqual([true, false]);
    expect(seen.every((r) => r.query.get('tenantId') === TENANT)).toBe(true);
  });

  test('a PUT is retried with the same body and returns the next answer', async () => {
    fault().script('PUT', OPP_PATH, reply.reset(), reply.ok({ ...OPPORTUNITY, stage: 'won' }));

    const opportunity = await clientFor(fault()).opportunities.update(OPP_ID, { stage: 'won' });

    expect(Reflect.get(opportunity, 'stage')).toBe('won');
    const seen = fault().received('PUT', OPP_PATH);
    expect(seen).toHaveLength(2);
    expect(seen.map((r) => JSON.parse(r.body))).toEqual([{ stage: 'won' }, { stage: 'won' }]);
  });

  test('with maxRetries 0 a GET fails with CrmConnectionError after a single attempt', async () => {
    fault().script('GET', OPP_PATH, reply.reset(), reply.ok(OPPORTUNITY));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error).not.toBeInstanceOf(CrmTimeoutError);
    expect((error as Error).message).toContain(`GET /integrations/v1/opportunities/${OPP_ID}`);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
  });

  test('a POST is not repeated: it fails with CrmConnectionError and the server executed it once', async () => {
    fault().script('POST', OPPS_PATH, reply.reset());
    fault().otherwise('POST', OPPS_PATH, reply.ok({ ...OPPORTUNITY, id: 'opp_duplicate' }));

    const { error } = await failure(clientFor(fault()).opportunities.create(NEW_OPPORTUNITY));

    expect(error).toBeInstanceOf(CrmConnectionError);
    const seen = fault().received('POST', OPPS_PATH);
    expect(seen).toHaveLength(1);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ tenantId: TENANT, ...NEW_OPPORTUNITY });
  });
});

describe('a connection reset in the middle of the body', () => {
  const body = okBody({ ...OPPORTUNITY, description: 'x'.repeat(4_000) });

  test('a GET whose body is cut, with or without a content-length, is retried and returns the next answer', async () => {
    const declared = '/integrations/v1/opportunities/opp_declared';
    const chunked = '/integrations/v1/opportunities/opp_chunked';
    fault().script('GET', declared, reply.cut(body), reply.ok({ id: 'opp_declared' }));
    fault().script('GET', chunked, reply.cut(body, { contentLength: false }), reply.ok({ id: 'opp_chunked' }));
    const crm = clientFor(fault());

    const [a, b] = await Promise.all([crm.opportunities.get('opp_declared'), crm.opportunities.get('opp_chunked')]);

    expect([a.id, b.id]).toEqual(['opp_declared', 'opp_chunked']);
    for (const path of [declared, chunked]) {
      const seen = fault().received('GET', path);
      expect(seen.map((r) => ({ closedEarly: r.closedEarly, status: r.status }))).toEqual([
        { closedEarly: true, status: undefined },
        { closedEarly: false, status: 200 },
      ]);
    }
  });

  test('with maxRetries 0 a GET cut mid-body fails with CrmConnectionError, not a parse error', async () => {
    fault().script('GET', OPP_PATH, reply.cut(body));

    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(error).not.toBeInstanceOf(SyntaxError);
    expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
  });

  test('a POST cut mid-body is not repeated: CrmConnectionError, and the server executed it once', async () => {
    fault().script('POST', OPPS_PATH, reply.cut(okBody({ ...OPPORTUNITY, description: 'x'.repeat(4_000) })));
    fault().otherwise('POST', OPPS_PATH, reply.ok({ ...OPPORTUNITY, id: 'opp_duplicate' }));

    const { error } = await failure(clientFor(fault()).opportunities.create(NEW_OPPORTUNITY));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect(fault().received('POST', OPPS_PATH)).toHaveLength(1);
  });
});

test('a refused connection fails with CrmConnectionError', async () => {
  const port = await closedPort();

  const { error } = await failure(
    clientFor(fault(), { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }).opportunities.get(OPP_ID),
  );

  expect(error).toBeInstanceOf(CrmConnectionError);
  expect(error).not.toBeInstanceOf(CrmTimeoutError);
  expect(fault().requests).toHaveLength(0);
});
