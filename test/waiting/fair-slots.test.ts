import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http, passthrough } from 'msw';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { CrmAbortError, CrmClient } from '../../src/index';
import { server as msw } from '../support/msw-server';
import { OPPORTUNITY_BODY, settledFlags } from '../support/waits';

/*
 * throttle: 'auto' with maxConcurrency, on a real socket: tenant_a's key is refused (429,
 * Retry-After: 5) and every call of that key waits out the pause; tenant_b's key is not.
 */

let api: Server | undefined;
let baseUrl = '';
/** tenant_a's requests answered (429) to the end. */
let refusedA = 0;

beforeEach(async () => {
  msw.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
  refusedA = 0;
  api = createServer((req, res) => {
    req.resume();
    if (req.headers['x-tenant-id'] === 'tenant_a') {
      res.on('finish', () => {
        refusedA += 1;
      });
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '5' });
      res.end(JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(OPPORTUNITY_BODY);
  });
  await new Promise<void>((resolve) => api?.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterEach(async () => {
  api?.closeAllConnections();
  await new Promise<void>((resolve) => api?.close(() => resolve()));
  api = undefined;
});

test("a tenant waiting out a 429 holds no maxConcurrency slot: another tenant's call goes at once", async () => {
  const crm = new CrmClient({ baseUrl, apiKey: 'key_a', tenantId: 'tenant_a', throttle: 'auto', maxConcurrency: 4 });
  const b = crm.withTenant('tenant_b', { apiKey: 'key_b' });
  const controller = new AbortController();
  const callsA = Array.from({ length: 8 }, () => crm.opportunities.get('opp_1', { signal: controller.signal }));
  const settledA = settledFlags(callsA);
  const outcomesA = Promise.allSettled(callsA);
  try {
    await vi.waitFor(() => expect(refusedA).toBeGreaterThanOrEqual(1), { timeout: 5000, interval: 5 });

    // totalTimeout only bounds how long a broken limiter can hold the test; the test times nothing.
    const fromB = await b.opportunities.get('opp_1', { totalTimeout: 3000 });

    expect(fromB).toEqual({ id: 'opp_1' });
    expect(settledA()).toEqual(Array(8).fill(false));
  } finally {
    controller.abort();
  }
  const results = await outcomesA;
  for (const result of results) {
    expect(result.status).toBe('rejected');
    expect(result.status === 'rejected' && result.reason).toBeInstanceOf(CrmAbortError);
  }
});
