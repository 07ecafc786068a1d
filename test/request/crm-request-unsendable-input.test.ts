import { describe, expect, test } from 'vitest';
import { CrmError, CrmValidationError } from '../../src/index';
import { makeClient, rejection } from '../support/capture';
import { captureEverything } from '../support/capture-everything';

/*
 * What a JavaScript caller (no types) can hand crm.request(), extraQuery and extraBody. Whatever
 * it is, the call must reject with CrmValidationError and send nothing, or send a well-formed request.
 */

const WIDGETS = 'integrations/v1/widgets';

/** Rejects with CrmValidationError and sends nothing. */
async function expectRefused(call: (crm: ReturnType<typeof makeClient>) => PromiseLike<unknown>): Promise<Error> {
  const seen = captureEverything();
  const error = await rejection(call(makeClient()));
  expect(error).toBeInstanceOf(CrmValidationError);
  expect(seen).toEqual([]);
  return error;
}

const throwing = () => {
  throw new Error('getter says no');
};

describe('crm.request() with a request it cannot read', () => {
  test.each([
    [
      'a Proxy whose getPrototypeOf throws',
      () => new Proxy({ method: 'GET', path: WIDGETS }, { getPrototypeOf: throwing }),
    ],
    ['a Proxy whose ownKeys throws', () => new Proxy({ method: 'GET', path: WIDGETS }, { ownKeys: throwing })],
    ['a Proxy whose get throws', () => new Proxy({ method: 'GET', path: WIDGETS }, { get: throwing })],
    [
      'an object whose path getter throws',
      () => ({
        method: 'GET',
        get path() {
          return throwing();
        },
      }),
    ],
    [
      'a query whose value getter throws',
      () => ({
        method: 'GET',
        path: WIDGETS,
        query: {
          get a() {
            return throwing();
          },
        },
      }),
    ],
  ])('%s: CrmValidationError, nothing sent', async (_name, make) => {
    await expectRefused((crm) => crm.request(make() as never));
  });
});

describe('crm.request() with a body JSON cannot carry', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  test.each([
    ['a bigint', { n: 1n }],
    ['a cycle', cyclic],
    ['a function as the body', () => 1],
    ['a symbol as the body', Symbol('s')],
    [
      'a toJSON that throws',
      {
        toJSON() {
          throw new Error('no');
        },
      },
    ],
  ])('%s: CrmValidationError, nothing sent', async (_name, body) => {
    await expectRefused((crm) => crm.request({ method: 'POST', path: WIDGETS, body }));
  });

  test("tenantIn 'body' on a GET (which sends no body): CrmValidationError, nothing sent", async () => {
    await expectRefused((crm) => crm.request({ method: 'GET', path: WIDGETS, tenantIn: 'body' }));
  });

  test('a query Date that is not a valid date: CrmValidationError, nothing sent', async () => {
    await expectRefused((crm) => crm.request({ method: 'GET', path: WIDGETS, query: { since: new Date('nope') } }));
  });

  test('a query string with a lone surrogate (encodeURIComponent throws): CrmValidationError, nothing sent', async () => {
    await expectRefused((crm) => crm.request({ method: 'GET', path: WIDGETS, query: { q: 'a\uD800b' } }));
  });
});

describe('extraQuery and extraBody with values they cannot carry', () => {
  test.each([
    ['extraBody with a bigint', { extraBody: { n: 1n } }],
    ['extraBody with a toJSON that throws', { extraBody: { x: { toJSON: throwing } } }],
    ['extraQuery with an invalid Date', { extraQuery: { since: new Date('nope') } }],
    ['extraQuery with a lone surrogate', { extraQuery: { q: '\uDC00' } }],
  ])('%s: CrmValidationError (not "Connection failed"), nothing sent', async (_name, options) => {
    const error = await expectRefused((crm) => crm.contacts.create({ email: 'a@x.io' }, options as never));
    expect(error.message).not.toMatch(/Connection failed/);
  });
});

describe('crm.request() with a query and an extraQuery that is not a plain object', () => {
  // request() spreads the query and the extraQuery into one object before the check, which then
  // sees a plain object whatever the extraQuery was.
  test.each([
    ['an array', ['x']],
    ['a Map', new Map([['a', '1']])],
    ['a Date', new Date(0)],
    [
      'a class instance',
      new (class Filter {
        a = '1';
      })(),
    ],
  ])('%s: CrmValidationError as without a query, nothing sent', async (_name, extraQuery) => {
    await expectRefused((crm) => crm.request({ method: 'GET', path: WIDGETS }, { extraQuery } as never));
    await expectRefused((crm) =>
      crm.request({ method: 'GET', path: WIDGETS, query: { q: '1' } }, { extraQuery } as never),
    );
  });
});

describe('garbage that is refused', () => {
  test.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a string', 'GET integrations/v1/widgets'],
    ['an array', ['GET', WIDGETS]],
    [
      'a class instance',
      new (class Req {
        method = 'GET';
        path = WIDGETS;
      })(),
    ],
    ['an own __proto__ key (JSON)', JSON.parse(`{"method":"GET","path":"${WIDGETS}","__proto__":{"tenantIn":"none"}}`)],
    ['a toJSON field', { method: 'GET', path: WIDGETS, toJSON: () => ({}) }],
    ['a lower-case method', { method: 'get', path: WIDGETS }],
    ['a path that is a number', { method: 'GET', path: 42 }],
    ['a query that is a Map', { method: 'GET', path: WIDGETS, query: new Map([['a', '1']]) }],
    ['a query that is a URLSearchParams', { method: 'GET', path: WIDGETS, query: new URLSearchParams('a=1') }],
  ])('crm.request(%s): CrmValidationError, nothing sent', async (_name, request) => {
    const error = await expectRefused((crm) => crm.request(request as never));
    expect(error.message).toMatch(/^Invalid request: /);
  });

  test('options that are a Proxy with throwing traps: CrmValidationError, nothing sent', async () => {
    await expectRefused((crm) =>
      crm.request({ method: 'GET', path: WIDGETS }, new Proxy({}, { ownKeys: throwing }) as never),
    );
    await expectRefused((crm) => crm.contacts.list({}, new Proxy({}, { get: throwing }) as never));
  });

  test.each([
    ['a function', { extraQuery: () => 1 }],
    ['a Date', { extraBody: new Date() }],
    ['an array', { extraBody: [1] }],
    ['a symbol value', { extraQuery: { s: Symbol('s') } }],
    ['a function value', { extraQuery: { f: () => 1 } }],
    ['an array holding an object', { extraQuery: { a: [{}] } }],
  ])('extras that are %s: CrmValidationError, nothing sent', async (_name, options) => {
    await expectRefused((crm) => crm.contacts.create({ email: 'a@x.io' }, options as never));
  });

  test('extraBody on a call whose own body is not an object (crm.request with an array body) is refused', async () => {
    const error = await expectRefused((crm) =>
      crm.request({ method: 'POST', path: WIDGETS, body: [1, 2] }, { extraBody: { a: 1 } }),
    );
    expect(error.message).toBe('Invalid request options: extraBody: Not accepted: the body is not an object');
  });

  test('a query value that is an object with a throwing toString is refused, not stringified', async () => {
    const error = await expectRefused((crm) =>
      crm.request({ method: 'GET', path: WIDGETS, query: { a: { toString: throwing } } }),
    );
    expect(error).toBeInstanceOf(CrmError);
  });
});
