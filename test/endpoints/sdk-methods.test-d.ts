import { describe, expectTypeOf, test } from 'vitest';
import type { CrmClient } from '../../src/client';
import type { endpoints } from '../../src/endpoints';

/* Each row of the endpoint table names the SDK method that calls it: `sdkMethod` is `namespace.method` of CrmClient. */

type Rows = typeof endpoints;

/** Every `namespace.method` of CrmClient: a method of one of its resources (not `withTenant`, `tenantId`, ...). */
type ClientMethod = {
  [NS in keyof CrmClient & string]: CrmClient[NS] extends (...args: never[]) => unknown
    ? never
    : CrmClient[NS] extends object
      ? {
          [M in keyof CrmClient[NS] & string]: CrmClient[NS][M] extends (...args: never[]) => unknown
            ? `${NS}.${M}`
            : never;
        }[keyof CrmClient[NS] & string]
      : never;
}[keyof CrmClient & string];

/** Each row's name, where its `sdkMethod` is not a method of CrmClient; else `true`. */
type Misnamed = { [K in keyof Rows]: Rows[K]['sdkMethod'] extends ClientMethod ? true : K }[keyof Rows];

describe('sdkMethod', () => {
  test("is kept as a literal, the row's own", () => {
    expectTypeOf<Rows['listContacts']['sdkMethod']>().toEqualTypeOf<'contacts.list'>();
    expectTypeOf<Rows['apiKeyStatus']['sdkMethod']>().toEqualTypeOf<'apiKey.status'>();
  });

  test('names, in every row, a method that exists on CrmClient', () => {
    expectTypeOf<Misnamed>().toEqualTypeOf<true>();
  });

  test('and every method of the resources is named by a row: one method per endpoint', () => {
    expectTypeOf<ClientMethod>().toEqualTypeOf<Rows[keyof Rows]['sdkMethod']>();
  });

  test('a name that is not such a method is refused', () => {
    // @ts-expect-error no method `lists`
    expectTypeOf<'contacts.lists'>().toExtend<ClientMethod>();
    // @ts-expect-error no namespace `contact`
    expectTypeOf<'contact.list'>().toExtend<ClientMethod>();
    // @ts-expect-error apiKey, as the SDK spells it
    expectTypeOf<'api-key.status'>().toExtend<ClientMethod>();
    // @ts-expect-error withTenant is the client's own, not a resource's
    expectTypeOf<'withTenant.call'>().toExtend<ClientMethod>();
    // @ts-expect-error tenantId is a property, not a resource
    expectTypeOf<'tenantId.toString'>().toExtend<ClientMethod>();
    expectTypeOf<'contacts.list'>().toExtend<ClientMethod>();
  });
});
