import type { RequestHandler } from 'msw';
import { FakeCrmCore, type FakeCrmOptions } from './fake';
import { loadMsw } from './msw';

export type { FakeExportType } from './export';
export type { FakeCrmOptions, FakeEndpointName, FakeFault, FakeRequest, FakeRequestLog } from './fake';
export { FakeCrmCore } from './fake';
export { type GenerateOptions, generateFakeData } from './generate';
export type { FakeRateLimit } from './rate-limit';
export type {
  FakeGrant,
  FakeSeed,
  FakeTenant,
  FakeUser,
  Owned,
  SeedRecord,
  StoredAccount,
  StoredActivity,
  StoredContact,
  StoredOpportunity,
} from './records';
export { type FakeCrmServer, type FakeCrmServerOptions, startFakeCrmServer } from './server';
export type { FakeStorage } from './storage';
export { FakeStore } from './store';

/** A fake CRM with MSW handlers around it. */
export interface FakeCrm extends FakeCrmCore {
  /** MSW handlers answering every request under `baseUrl`: `setupServer(...fake.handlers)`. */
  readonly handlers: RequestHandler[];
}

/**
 * A stateful fake of the whole integration API, for tests: MSW `handlers`, the `store` behind
 * them, the `credentials` it accepts, a `requests` log, and `failNext()` for fault injection.
 *
 * It needs msw, an optional peer dependency: without it, it throws an error that says how to
 * install it (the rest of the kit, `startFakeCrmServer()` included, works without msw).
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { CrmClient } from 'crm-integration-sdk';
 * import { createFakeCrm } from 'crm-integration-sdk/testing';
 *
 * const fake = createFakeCrm();
 * const server = setupServer(...fake.handlers);
 * server.listen();
 * const crm = new CrmClient(fake.credentials);
 * await crm.accounts.create({ name: 'Acme' });
 * expect(fake.requests.at(-1)?.endpoint).toBe('createAccount');
 * ```
 */
export function createFakeCrm(options: FakeCrmOptions = {}): FakeCrm {
  const { http, HttpResponse } = loadMsw();
  const fake = new FakeCrmCore(options) as FakeCrm;
  const handler = http.all(`${fake.baseUrl}/*`, async ({ request }) => {
    const response = await fake.handle(request);
    return response.type === 'error' ? HttpResponse.error() : response;
  });
  Object.defineProperty(fake, 'handlers', { value: [handler], enumerable: true });
  return fake;
}
