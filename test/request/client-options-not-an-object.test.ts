import { afterEach, describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { BASE_URL, captureAll } from '../support/capture';

/* new CrmClient() takes an object of options or nothing: a key passed alone must not fall back to the environment's. */

afterEach(() => {
  vi.unstubAllEnvs();
});

class Settings {
  baseUrl = BASE_URL;
}

describe('new CrmClient(options)', () => {
  test.each([
    ['a key passed alone', 'ak_other_key'],
    ['null', null],
    ['an array', [BASE_URL]],
    ['a number', 42],
    ["a class's instance", new Settings()],
  ])('refuses %s, even with CRM_* set, and sends nothing', (_, options) => {
    vi.stubEnv('CRM_BASE_URL', BASE_URL);
    vi.stubEnv('CRM_API_KEY', 'ak_environment_key');
    vi.stubEnv('CRM_TENANT_ID', 'tenant_env');
    const seen = captureAll();
    expect(() => new CrmClient(options as never)).toThrow(CrmValidationError);
    expect(() => new CrmClient(options as never)).toThrow('Must be an object of options');
    expect(seen).toEqual([]);
  });

  test('takes nothing, an empty object or one without a prototype, with the environment for what is missing', () => {
    vi.stubEnv('CRM_BASE_URL', BASE_URL);
    expect(new CrmClient().toJSON().baseUrl).toBe(BASE_URL);
    expect(new CrmClient({}).toJSON().baseUrl).toBe(BASE_URL);
    expect(new CrmClient(Object.assign(Object.create(null), { tenantId: 't' })).tenantId).toBe('t');
  });
});
