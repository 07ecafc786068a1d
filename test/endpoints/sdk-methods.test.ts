import { describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/client';
import { endpoints } from '../../src/endpoints';

/* At run time too, each row's `sdkMethod` is a method of the client (sdk-methods.test-d.ts proves it for the types). */

describe('sdkMethod', () => {
  const crm = new CrmClient({ baseUrl: 'https://crm.test', tenantId: 'tenant_1', apiKey: 'key', adminToken: 'token' });

  test.each(Object.entries(endpoints))('%s: crm.<namespace>.<method> is a function', (_, endpoint) => {
    const [namespace, method, ...rest] = endpoint.sdkMethod.split('.');
    expect(rest).toEqual([]);
    const resource = (crm as unknown as Record<string, Record<string, unknown> | undefined>)[namespace ?? ''];
    expect(typeof resource?.[method ?? '']).toBe('function');
  });

  test('no two rows name the same method', () => {
    const names = Object.values(endpoints).map((endpoint) => endpoint.sdkMethod);
    expect(new Set(names).size).toBe(names.length);
  });
});
