import { http, passthrough } from 'msw';
import { afterEach } from 'vitest';
import { type ClientOptions, CrmClient } from '../../src/index';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/index';
import { server } from '../support/server';

const running: FakeCrmServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((fake) => fake.close()));
});

/** The fake CRM over real HTTP, and a client of it (MSW lets loopback requests through). */
export async function fakeOverHttp(options: ClientOptions = {}): Promise<{ fake: FakeCrmServer; crm: CrmClient }> {
  server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
  const fake = await startFakeCrmServer();
  running.push(fake);
  const crm = new CrmClient({ ...fake.fake.credentials, baseUrl: fake.url, ...options });
  return { fake, crm };
}
