import { http, passthrough } from 'msw';
import { afterEach } from 'vitest';
import {
  createFakeCrm,
  type FakeCrmCore,
  type FakeCrmOptions,
  type FakeCrmServer,
  type FakeCrmServerOptions,
  startFakeCrmServer,
} from '../../src/testing/index';
import { server } from './msw-server';

/* The fake CRM for a test, through MSW or over real sockets; the servers a test starts are closed after it. */

/** A running fake and the base URL the client should use. */
export interface Harness {
  readonly fake: FakeCrmCore;
  readonly baseUrl: string;
}

const running: FakeCrmServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((srv) => srv.close()));
});

/** MSW must let loopback requests reach a real server. */
const letLoopbackThrough = () => server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));

/** `startFakeCrmServer()`, reachable through MSW, and closed after the test. */
export async function startedServer(options?: FakeCrmServerOptions): Promise<FakeCrmServer> {
  letLoopbackThrough();
  const srv = await startFakeCrmServer(options);
  running.push(srv);
  return srv;
}

/** The fake behind MSW handlers. */
export async function throughMsw(options: FakeCrmOptions = {}): Promise<Harness> {
  const fake = createFakeCrm(options);
  server.use(...fake.handlers);
  return { fake, baseUrl: fake.baseUrl };
}

/** The fake over real sockets. */
export async function overRealSockets(options: FakeCrmServerOptions = {}): Promise<Harness> {
  const srv = await startedServer(options);
  return { fake: srv.fake, baseUrl: srv.url };
}
