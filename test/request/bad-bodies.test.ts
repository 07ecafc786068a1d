import { describe, expect, test } from 'vitest';
import { CrmApiError, CrmResponseValidationError } from '../../src/index';
import {
  ACTIVITIES_PATH,
  clientFor,
  failure,
  htmlPage,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  okBody,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

const JSON_TYPE = { 'content-type': 'application/json' };

test('a 200 with malformed JSON fails with CrmResponseValidationError carrying the text, never a SyntaxError', async () => {
  const malformed = '{"success": true, "data": {"id": "opp_1",, }}';
  fault().otherwise('GET', OPP_PATH, reply.with(200, malformed, { headers: JSON_TYPE }));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect(error).not.toBeInstanceOf(SyntaxError);
  expect((error as CrmResponseValidationError).status).toBe(200);
  expect((error as CrmResponseValidationError).body).toBe(malformed);
  // A 200 is an answer: a malformed one is not asked for again.
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 200 whose JSON is truncated (complete by its content-length) fails with CrmResponseValidationError', async () => {
  const whole = okBody(OPPORTUNITY);
  const truncated = whole.slice(0, Math.floor(whole.length / 2));
  fault().otherwise('GET', OPP_PATH, reply.with(200, truncated, { headers: JSON_TYPE }));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect(error).not.toBeInstanceOf(SyntaxError);
  expect((error as CrmResponseValidationError).body).toBe(truncated);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 200 with an empty body fails with CrmResponseValidationError', async () => {
  fault().otherwise('GET', OPP_PATH, reply.with(200, '', { headers: JSON_TYPE }));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 200 with success: false fails with CrmApiError quoting the server’s message', async () => {
  const body = { success: false, error: { message: 'Tenant is suspended' } };
  fault().otherwise('GET', OPP_PATH, reply.with(200, body));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmApiError);
  expect((error as CrmApiError).status).toBe(200);
  expect((error as CrmApiError).body).toEqual(body);
  expect((error as Error).message).toContain('Tenant is suspended');
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 200 with a text/html page fails with a clear error that names the content type and carries the text', async () => {
  const page = htmlPage('Please log in');
  fault().otherwise('GET', OPP_PATH, reply.with(200, page, { headers: { 'content-type': 'text/html' } }));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect((error as Error).message).toContain('text/html');
  expect((error as Error).message).toContain('Please log in');
  expect((error as CrmResponseValidationError).body).toBe(page);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 200 whose JSON is not an envelope of the endpoint fails with CrmResponseValidationError naming the field', async () => {
  fault().otherwise('GET', OPP_PATH, reply.with(200, { success: true, data: { id: 42 } }));

  const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect((error as CrmResponseValidationError).issues.map((i) => i.field)).toContain('data.id');
});

test('a malformed second page ends a for await loop with CrmResponseValidationError after the first page', async () => {
  const first = reply.ok([{ id: 'act_1' }, { id: 'act_2' }], {
    extra: { pagination: { page: 1, limit: 2, total: 4, pages: 2 } },
  });
  fault().script('GET', ACTIVITIES_PATH, first, reply.with(200, '{"success": true, "data": [', { headers: JSON_TYPE }));

  const ids: string[] = [];
  const { error } = await failure(
    (async () => {
      for await (const activity of clientFor(fault()).activities.list({ opportunityId: OPP_ID, limit: 2 })) {
        ids.push(activity.id);
      }
    })(),
  );

  expect(error).toBeInstanceOf(CrmResponseValidationError);
  expect(ids).toEqual(['act_1', 'act_2']);
  expect(
    fault()
      .received('GET', ACTIVITIES_PATH)
      .map((r) => r.query.get('page')),
  ).toEqual([null, '2']);
});

test.each([
  ['null', null],
  ['a string', 'act_1'],
  ['an array', [{ id: 'act_1' }]],
])(
  'with validateResponses: false, a page holding %s as a record fails with CrmResponseValidationError, not a TypeError',
  async (_, item) => {
    const page = {
      success: true,
      data: [{ id: 'act_0' }, item],
      pagination: { page: 1, limit: 2, total: 2, pages: 1 },
    };
    fault().otherwise('GET', ACTIVITIES_PATH, reply.with(200, page));
    const crm = clientFor(fault(), { validateResponses: false });

    const { error } = await failure(
      (async () => {
        for await (const _activity of crm.activities.list({ opportunityId: OPP_ID })) {
          // iterate
        }
      })(),
    );

    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect((error as CrmResponseValidationError).issues.map((issue) => issue.field)).toEqual(['data.1']);
  },
);

test('with validateResponses: false, records are handed over unchecked: a field of an unexpected type passes', async () => {
  const page = {
    success: true,
    data: [{ id: 'act_1', subject: 42 }],
    pagination: { page: 1, limit: 1, total: 1, pages: 1 },
  };
  fault().otherwise('GET', ACTIVITIES_PATH, reply.with(200, page));

  const first = await clientFor(fault(), { validateResponses: false }).activities.list({ opportunityId: OPP_ID });

  expect(first.data).toEqual([{ id: 'act_1', subject: 42 }]);
});

describe('a page with bad records', () => {
  const page = (data: unknown[], pagination: object = { page: 1, limit: data.length, total: data.length, pages: 1 }) =>
    reply.with(200, { success: true, data, pagination });
  const good = (i: number) => ({ id: `act_${i}`, subject: `Call ${i}`, type: 'call' });

  /** A client whose response validators have arrived, and whose first page comes next. */
  async function warmClient() {
    fault().script('GET', ACTIVITIES_PATH, page([good(0)]));
    const crm = clientFor(fault());
    await crm.activities.list({ opportunityId: OPP_ID });
    return crm;
  }

  test('names the bad records by index and field, among a thousand good ones', async () => {
    const crm = await warmClient();
    const data = Array.from({ length: 1_000 }, (_, i) => good(i));
    data[3] = { ...good(3), id: 3 as unknown as string };
    data[700] = { ...good(700), subject: { text: 'x' } as unknown as string };
    fault().script('GET', ACTIVITIES_PATH, page(data));

    const { error } = await failure(crm.activities.list({ opportunityId: OPP_ID }));

    expect(error).toBeInstanceOf(CrmResponseValidationError);
    expect((error as CrmResponseValidationError).issues.map((i) => i.field)).toEqual(['data.3.id', 'data.700.subject']);
    expect((error as Error).message).toContain('data.3.id');
  });

  test('names the first ten bad records only, and the frame when it is wrong too', async () => {
    const crm = await warmClient();
    const data = Array.from({ length: 50 }, (_, i) => ({ ...good(i), id: i }));
    fault().script('GET', ACTIVITIES_PATH, page(data, { page: 'one', pages: 1 }));

    const { error } = await failure(crm.activities.list({ opportunityId: OPP_ID }));

    const fields = (error as CrmResponseValidationError).issues.map((i) => i.field);
    expect(fields).toEqual(['pagination.page', ...Array.from({ length: 10 }, (_, i) => `data.${i}.id`)]);
  });

  test('returns a page that zod accepts though its validator did not, as zod returns it', async () => {
    const crm = await warmClient();
    const text = `{"success":true,"data":[{"id":"act_1","subject":"a"},{"id":"act_2","__proto__":{"x":1}}],"pagination":{"page":1,"pages":1}}`;
    fault().script('GET', ACTIVITIES_PATH, reply.with(200, text, { headers: JSON_TYPE }));

    const first = await crm.activities.list({ opportunityId: OPP_ID });

    expect(first.data.map((a) => a.id)).toEqual(['act_1', 'act_2']);
    expect(Object.hasOwn(first.data[1] as object, '__proto__')).toBe(false);
  });
});
