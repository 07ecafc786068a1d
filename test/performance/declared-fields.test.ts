import { inspect } from 'node:util';
import { expect, test } from 'vitest';
import {
  CrmApiError,
  CrmClient,
  CrmError,
  CrmNotFoundError,
  CrmResponseTooLargeError,
  CrmResponseValidationError,
  CrmValidationError,
  Page,
} from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';

// Guards "Fields the constructor sets" (PERFORMANCE.md): the public fields are declared, and each
// comes to be when the constructor sets it. An object must still have every one of them as its own,
// in the order they are declared (what inspect(), JSON and Object.keys() show), as plain data.

/** Each own property's name and how it is defined, in order. */
const fieldsOf = (value: object) =>
  Reflect.ownKeys(value).map((key) => {
    const { writable, enumerable, configurable } = Object.getOwnPropertyDescriptor(value, key) ?? {};
    return [typeof key === 'symbol' ? key.description : key, writable, enumerable, configurable];
  });
const data = (names: string[]) => names.map((name) => [name, true, true, true]);

const headers = new Headers({ 'x-request-id': 'req_1', 'retry-after': '2' });
const facts = { status: 404, body: { error: { code: 'NOT_FOUND', details: [1] } }, headers };

test.each([
  ['CrmError', new CrmError('x'), ['sideEffects']],
  [
    'CrmValidationError',
    new CrmValidationError([{ field: 'a', path: ['a'], message: 'm' }]),
    ['sideEffects', 'issues'],
  ],
  [
    'CrmResponseValidationError',
    new CrmResponseValidationError('x', facts, []),
    ['sideEffects', 'status', 'body', 'headers', 'issues'],
  ],
  [
    'CrmResponseTooLargeError',
    new CrmResponseTooLargeError('x', { ...facts, body: undefined }),
    ['sideEffects', 'status', 'body', 'headers', 'issues'],
  ],
  [
    'CrmApiError',
    new CrmApiError('x', facts),
    ['sideEffects', 'status', 'body', 'headers', 'requestId', 'retryAfterMs', 'code', 'details'],
  ],
  [
    'CrmNotFoundError without a request id',
    new CrmNotFoundError('x', { ...facts, headers: new Headers() }),
    ['sideEffects', 'status', 'body', 'headers', 'requestId', 'retryAfterMs', 'code', 'details'],
  ],
])(
  'a %s has its fields as its own data properties, in their order, beside the message, stack and brand',
  (_, error, names) => {
    const own = fieldsOf(error);
    expect(own.filter(([, , enumerable]) => enumerable)).toEqual(data(names));
    // Beside them, not enumerable: the stack and message Error gives, the name and the kinds' brand
    // CrmError's constructor gives (a symbol, listed after every string key).
    expect(own.map(([name]) => name)).toEqual([
      'stack',
      'message',
      'sideEffects',
      'name',
      ...names.slice(1),
      'crm-integration-sdk.error-kinds',
    ]);
    expect(Object.keys(error.toJSON())).toEqual(['name', 'message', ...names.filter((name) => name !== 'headers')]);
    expect(inspect(error)).toContain(`${names.at(-1)}:`);
  },
);

test('a client has its resources, then its tenantId, as its own data properties', () => {
  expect(fieldsOf(makeClient())).toEqual(
    data(['opportunities', 'activities', 'accounts', 'contacts', 'grants', 'apiKey', 'tenantId']),
  );
  expect(new CrmClient({ baseUrl: 'https://crm.test', apiKey: 'k', tenantId: 't' }).tenantId).toBe('t');
});

test('a page has its data, then its pagination, as its own data properties', async () => {
  capture('get', '/integrations/v1/activities', ok([{ id: 'act_1' }], { pagination: { page: 1, pages: 1 } }));

  const page = await makeClient().activities.list({ opportunityId: 'opp_1' });

  expect(page).toBeInstanceOf(Page);
  expect(fieldsOf(page)).toEqual(data(['data', 'pagination']));
  expect(page.data).toEqual([{ id: 'act_1' }]);
});
