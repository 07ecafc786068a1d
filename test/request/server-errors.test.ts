import { expect, test } from 'vitest';
import { CrmServerError } from '../../src/index';
import {
  ACCOUNTS_PATH,
  ACTIVITIES_PATH,
  type Action,
  API_KEY_GENERATE_PATH,
  CONTACTS_PATH,
  clientFor,
  expectRepeatedOnceExecutedOnce,
  failure,
  htmlPage,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  OPPS_PATH,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

const STATUSES = [500, 502, 503, 504] as const;
const FLAVOURS = ['json', 'html'] as const;
const VARIANTS = STATUSES.flatMap((status) => FLAVOURS.map((flavour) => ({ status, flavour })));

const failureAction = (status: number, flavour: 'json' | 'html'): Action =>
  flavour === 'json'
    ? reply.jsonError(status, `upstream failed (${status})`)
    : reply.htmlError(status, `${status} Error`);

/** The body the error should carry: the parsed JSON, or the HTML as text. */
const expectedBody = (status: number, flavour: 'json' | 'html'): unknown =>
  flavour === 'json'
    ? { success: false, error: { message: `upstream failed (${status})` } }
    : htmlPage(`${status} Error`);

const label = ({ status, flavour }: { status: number; flavour: string }) => `${status} ${flavour}`;

test('a GET answered 500, 502, 503 or 504 (JSON or HTML) is retried and returns the next success', async () => {
  const crm = clientFor(fault());
  for (const v of VARIANTS) {
    const id = `opp_${v.status}_${v.flavour}`;
    fault().script('GET', `/integrations/v1/opportunities/${id}`, failureAction(v.status, v.flavour), reply.ok({ id }));
  }

  // The eight cases run side by side, so their backoffs overlap.
  const outcomes = await Promise.all(
    VARIANTS.map(async (v) => {
      const id = `opp_${v.status}_${v.flavour}`;
      const result = await crm.opportunities.get(id).then(
        (data) => data.id,
        (error: unknown) => String(error),
      );
      return [label(v), { result, attempts: fault().received('GET', `/integrations/v1/opportunities/${id}`).length }];
    }),
  );

  expect(Object.fromEntries(outcomes)).toEqual(
    Object.fromEntries(VARIANTS.map((v) => [label(v), { result: `opp_${v.status}_${v.flavour}`, attempts: 2 }])),
  );
});

test('a PUT answered 500, 502, 503 or 504 (JSON or HTML) is retried with the same body and returns the next success', async () => {
  const crm = clientFor(fault());
  for (const v of VARIANTS) {
    const id = `opp_${v.status}_${v.flavour}`;
    fault().script(
      'PUT',
      `/integrations/v1/opportunities/${id}`,
      failureAction(v.status, v.flavour),
      reply.ok({ id, stage: 'won' }),
    );
  }

  const outcomes = await Promise.all(
    VARIANTS.map(async (v) => {
      const id = `opp_${v.status}_${v.flavour}`;
      const result = await crm.opportunities.update(id, { stage: 'won' }).then(
        (data) => Reflect.get(data, 'stage'),
        (error: unknown) => String(error),
      );
      const seen = fault().received('PUT', `/integrations/v1/opportunities/${id}`);
      return [label(v), { result, bodies: seen.map((r) => r.body) }];
    }),
  );

  expect(Object.fromEntries(outcomes)).toEqual(
    Object.fromEntries(
      VARIANTS.map((v) => [label(v), { result: 'won', bodies: ['{"stage":"won"}', '{"stage":"won"}'] }]),
    ),
  );
});

test('a POST answered 500, 502, 503 or 504 without Retry-After is not repeated: CrmServerError with the body, one execution', async () => {
  const crm = clientFor(fault());
  fault().otherwise('POST', OPPS_PATH, reply.ok({ ...OPPORTUNITY, id: 'opp_duplicate' }));

  const outcomes: Record<string, unknown> = {};
  for (const v of VARIANTS) {
    fault().script('POST', OPPS_PATH, failureAction(v.status, v.flavour));
    const before = fault().received('POST', OPPS_PATH).length;
    const { error } = await failure(crm.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' }));
    outcomes[label(v)] = {
      isServerError: error instanceof CrmServerError,
      status: (error as CrmServerError).status,
      body: (error as CrmServerError).body,
      executions: fault().received('POST', OPPS_PATH).length - before,
    };
  }

  expect(outcomes).toEqual(
    Object.fromEntries(
      VARIANTS.map((v) => [
        label(v),
        { isServerError: true, status: v.status, body: expectedBody(v.status, v.flavour), executions: 1 },
      ]),
    ),
  );
  expect(fault().succeeded('POST', OPPS_PATH)).toBe(0);
});

test('the error of a JSON 5xx quotes the server message; the error of an HTML 5xx carries the page as text', async () => {
  fault().script('POST', OPPS_PATH, reply.jsonError(502, 'upstream failed (502)'), reply.htmlError(502, 'Bad Gateway'));
  const crm = clientFor(fault());
  const input = { name: 'Renewal 2027', accountId: 'acc_1' };

  const json = (await failure(crm.opportunities.create(input))).error as CrmServerError;
  const html = (await failure(crm.opportunities.create(input))).error as CrmServerError;

  expect(json.message).toBe('502 from POST /integrations/v1/opportunities: upstream failed (502)');
  expect(html.body).toBe(htmlPage('Bad Gateway'));
  expect(html.message).toContain('<title>Bad Gateway</title>');
  expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
});

test('a POST answered 503 with Retry-After was not processed: it is repeated and the server executes it once', async () => {
  fault().script(
    'POST',
    OPPS_PATH,
    reply.jsonError(503, 'maintenance', { 'retry-after': '0' }),
    reply.ok({ ...OPPORTUNITY, id: 'opp_created' }),
  );

  const created = await clientFor(fault()).opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' });

  expect(created.id).toBe('opp_created');
  expectRepeatedOnceExecutedOnce(fault(), OPPS_PATH);
});

test('no create endpoint repeats a POST answered 500: each is executed exactly once', async () => {
  const crm = clientFor(fault());
  const creates = [
    [OPPS_PATH, () => crm.opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' })],
    [ACTIVITIES_PATH, () => crm.activities.create({ opportunityId: OPP_ID, type: 'call', subject: 'Discovery' })],
    [ACCOUNTS_PATH, () => crm.accounts.create({ name: 'Acme' })],
    [CONTACTS_PATH, () => crm.contacts.create({ email: 'ada@example.com' })],
    [API_KEY_GENERATE_PATH, () => crm.apiKey.generate()],
  ] as const;
  for (const [path] of creates) {
    fault().script('POST', path, reply.jsonError(500, 'boom'));
    fault().otherwise('POST', path, reply.ok({ id: 'duplicate' }));
  }

  const results = await Promise.all(
    creates.map(async ([path, create]) => {
      const { error } = await failure(create());
      return [path, { error: (error as Error).name, executions: fault().received('POST', path).length }];
    }),
  );

  expect(Object.fromEntries(results)).toEqual(
    Object.fromEntries(creates.map(([path]) => [path, { error: 'CrmServerError', executions: 1 }])),
  );
});

test('a GET that keeps failing with 503 surfaces CrmServerError once its retries are spent', async () => {
  fault().otherwise('GET', OPP_PATH, reply.jsonError(503, 'still down'));

  const { error } = await failure(clientFor(fault(), { maxRetries: 1 }).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmServerError);
  expect((error as CrmServerError).status).toBe(503);
  expect((error as CrmServerError).body).toEqual({ success: false, error: { message: 'still down' } });
  expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
});
