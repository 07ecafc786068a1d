import { type ClientOptions, CrmClient } from '../../src/index';
import type { FakeCrmServer } from '../../src/testing/index';
import { startedServer } from './fake-harness';

/** The fake CRM over real HTTP, and a client of it (MSW lets loopback requests through). */
export async function fakeOverHttp(options: ClientOptions = {}): Promise<{ fake: FakeCrmServer; crm: CrmClient }> {
  const fake = await startedServer();
  const crm = new CrmClient({ ...fake.fake.credentials, baseUrl: fake.url, ...options });
  return { fake, crm };
}
