import { HttpResponse, http } from 'msw';
import { CrmClient } from '../../src/index';
import { server } from './msw-server';

export const BASE_URL = 'https://crm.test';
export const API_KEY = 'key_live_5ecret5ecret';
export const ADMIN_TOKEN = 'eyJadmin.t0ken.5ecret';
export const TENANT = 'tenant_1';

/** A client with every credential, talking to the MSW server. */
export const makeClient = (options: ConstructorParameters<typeof CrmClient>[0] = {}) =>
  new CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT, adminToken: ADMIN_TOKEN, ...options });

/** What a test asserts about one request the server received. */
export interface Captured {
  method: string;
  url: URL;
  headers: Headers;
  /** The parsed JSON body, or undefined when there was none. */
  body: unknown;
}

type Reply = Response | ((request: Request, index: number) => Response | Promise<Response>);

/**
 * Answers `method url` with `reply` (a Response, or a function of the request and its index) and
 * records every request received there.
 */
export function capture(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, reply: Reply): Captured[] {
  const seen: Captured[] = [];
  server.use(
    http[method](`${BASE_URL}${path}`, async ({ request }) => {
      const text = await request.clone().text();
      seen.push({
        method: request.method,
        url: new URL(request.url),
        headers: request.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      return typeof reply === 'function' ? reply(request, seen.length - 1) : reply.clone();
    }),
  );
  return seen;
}

/** A success envelope. */
export const ok = (data: unknown, extra: Record<string, unknown> = {}, init?: ResponseInit) =>
  HttpResponse.json({ success: true, data, ...extra }, init);

/** Records any request to the base URL, so a test can assert that none was sent. */
export function captureAll(): Captured[] {
  const seen: Captured[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, ({ request }) => {
      seen.push({ method: request.method, url: new URL(request.url), headers: request.headers, body: undefined });
      return HttpResponse.json({ success: true, data: {} });
    }),
  );
  return seen;
}

/** What a call rejected with; fails the test when it resolved. */
export async function rejection(promise: PromiseLike<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('Expected the call to reject');
}
