import { http, passthrough } from 'msw';
import { describe, expect, test } from 'vitest';
import { CrmAbortError, CrmClient, CrmConnectionError, CrmTimeoutError } from '../../src/index';
import {
  API_KEY,
  clientFor,
  closedPort,
  failure,
  OPP_ID,
  OPP_PATH,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { server } from '../support/msw-server';

const fault = useFaultServer();

const client = (baseUrl: string) => new CrmClient({ baseUrl, apiKey: API_KEY, tenantId: TENANT, maxRetries: 0 });

describe('a connection error says what failed', () => {
  test('a refused connection names the code and the host and port, and no credential', async () => {
    const port = await closedPort();

    const { error } = await failure(client(`http://127.0.0.1:${port}`).contacts.list());

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect((error as Error).message).toBe(
      `Connection failed: GET /integrations/v1/contacts: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  test('a host that does not resolve names the code and the host', async () => {
    // To the real resolver: the suite's MSW server refuses requests it has no handler for.
    server.use(http.all('http://crm.example.invalid/*', () => passthrough()));
    const { error } = await failure(client('http://crm.example.invalid').opportunities.get(OPP_ID));

    expect(error).toBeInstanceOf(CrmConnectionError);
    expect((error as Error).message).toMatch(
      /^Connection failed: GET \/integrations\/v1\/opportunities\/opp_1: getaddrinfo (ENOTFOUND|EAI_AGAIN) crm\.example\.invalid$/,
    );
  });
});

describe("a caller's signal", () => {
  test('that aborts with a TimeoutError (AbortSignal.timeout) gives CrmTimeoutError, with the reason as cause', async () => {
    fault().script('GET', OPP_PATH, reply.hang());

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID, { signal: AbortSignal.timeout(50) }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error).not.toBeInstanceOf(CrmAbortError);
    expect((error as Error).message).toBe(`Timed out by the caller's signal: GET ${OPP_PATH}`);
    expect(((error as Error).cause as Error).name).toBe('TimeoutError');
  });

  test('that was aborted already with a TimeoutError gives CrmTimeoutError too, with a key function and a concurrency limit', async () => {
    const signal = AbortSignal.timeout(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const crm = clientFor(fault(), { apiKey: () => API_KEY, maxConcurrency: 1 });

    const { error } = await failure(crm.opportunities.get(OPP_ID, { signal }));

    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(fault().received('GET', OPP_PATH)).toEqual([]);
  });

  test('that aborts for another reason still gives CrmAbortError', async () => {
    fault().script('GET', OPP_PATH, reply.hang());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);

    const { error } = await failure(clientFor(fault()).opportunities.get(OPP_ID, { signal: controller.signal }));

    expect(error).toBeInstanceOf(CrmAbortError);
    expect((error as Error).message).toBe(`Aborted: GET ${OPP_PATH}`);
  });
});
