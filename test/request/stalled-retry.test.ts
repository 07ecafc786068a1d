import { afterEach, expect, test, vi } from 'vitest';
import { CrmAbortError, CrmClient, CrmTimeoutError } from '../../src/index';
import { type Action, clientFor, OPP_ID, OPP_PATH, reply, useFaultServer } from '../support/fault-server';

/*
 * A retry whose body stalls (the server sends the headers and 15 bytes of 1,000, then nothing)
 * hung for good under garbage collection: retries go through ky's Request, and undici can lose
 * that Request's link to its signal after a GC, so neither the timeout, nor totalTimeout, nor the
 * caller's signal reached the body's read. Every attempt's wait and body read must end at its own
 * time and at the caller's abort, whatever fetch or ky does with its signal.
 *
 * The GC itself cannot be timed in a test, so its effect is made certain: a global fetch that
 * cuts the link, as undici does after the GC (each request goes out with no signal at all), or
 * one that ignores its signal altogether. The assertions are outcomes; the only time bound is a
 * generous one, there to fail a hung call rather than let it hang the run.
 */

const fault = useFaultServer();
/** Above the 10 s bound of a failing run, so that it fails by its assertion rather than by vitest's timeout. */
const GENEROUS = 20_000;

afterEach(() => {
  vi.unstubAllGlobals();
});

/** Headers and 15 bytes of a 1,000-byte body, then silence: the retry's answer. */
const stalledAfter15Bytes: Action = {
  kind: 'stall',
  headers: { 'content-type': 'application/json' },
  body: `{"success":true,"data":{"id":"opp_1","name":"${'x'.repeat(1_000 - 48)}"}}`,
  bytes: 15,
};

/** The global fetch, with every request sent without its signal: undici's Request after a GC. */
function cutTheAbortLink(): void {
  const fetch = globalThis.fetch;
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) =>
    fetch(input instanceof Request ? new Request(input, { signal: null }) : input, { ...init, signal: null }),
  );
}

/** What `call` settled with, or 'still pending' after `ms` (a bound for a failing run, never reached by a passing one). */
function settledWithin(call: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise((resolve) => {
    timer = setTimeout(() => resolve('still pending'), ms);
  });
  return Promise.race([
    call.then(
      (value) => ({ resolved: value }),
      (error: unknown) => error,
    ),
    pending,
  ]).finally(() => clearTimeout(timer));
}

test(
  'a retry whose body stalls after 15 bytes, through a fetch that lost its abort link, ends at its timeout',
  async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(500, 'upstream'), stalledAfter15Bytes);
    cutTheAbortLink();
    const crm = clientFor(fault(), { timeout: 300, maxRetries: 1 });

    const outcome = await settledWithin(crm.opportunities.get(OPP_ID), 10_000);

    expect(outcome).toBeInstanceOf(CrmTimeoutError);
    expect((outcome as Error).message).toContain('No response within 300 ms');
    const seen = fault().received('GET', OPP_PATH);
    expect(seen).toHaveLength(2);
    // The body it stopped reading was cancelled: the connection was closed, not left to the server.
    await vi.waitFor(() => expect(seen[1]?.closedEarly).toBe(true), { timeout: 5_000 });
  },
  GENEROUS,
);

test(
  'a retry whose body stalls, through a fetch that lost its abort link, ends within totalTimeout',
  async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(500, 'upstream'), stalledAfter15Bytes);
    cutTheAbortLink();
    const crm = clientFor(fault(), { timeout: 60_000, maxRetries: 1, totalTimeout: 1_500 });

    const outcome = await settledWithin(crm.opportunities.get(OPP_ID), 10_000);

    expect(outcome).toBeInstanceOf(CrmTimeoutError);
    expect((outcome as Error).message).toContain('totalTimeout');
  },
  GENEROUS,
);

test(
  "a retry whose body stalls, through a fetch that lost its abort link, ends at the caller's abort",
  async () => {
    fault().script('GET', OPP_PATH, reply.jsonError(500, 'upstream'), stalledAfter15Bytes);
    cutTheAbortLink();
    const crm = clientFor(fault(), { timeout: 60_000, maxRetries: 1 });
    const controller = new AbortController();

    const call = settledWithin(crm.opportunities.get(OPP_ID, { signal: controller.signal }), 10_000);
    await fault().waitForRequests(2);
    controller.abort();

    expect(await call).toBeInstanceOf(CrmAbortError);
  },
  GENEROUS,
);

/** A fetch that ignores its signal: a 500 first, then the headers and 15 bytes of a body that never ends. */
function deafStallingFetch() {
  const seen = { calls: 0, cancelled: 0 };
  const fetch = async (_input: RequestInfo | URL, _init?: RequestInit): Promise<Response> => {
    seen.calls += 1;
    if (seen.calls === 1) return Response.json({ success: false, error: { message: 'upstream' } }, { status: 500 });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"success":true'));
      },
      cancel() {
        seen.cancelled += 1;
      },
    });
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': '1000' },
    });
  };
  return { seen, fetch };
}

test(
  'a retry whose global fetch ignores its signal and stalls its body ends at its timeout, and its body is cancelled',
  async () => {
    const { seen, fetch } = deafStallingFetch();
    vi.stubGlobal('fetch', fetch);
    const crm = new CrmClient({ baseUrl: 'http://deaf.invalid', apiKey: 'key_deaf', tenantId: 'tenant_deaf' });

    const outcome = await settledWithin(crm.opportunities.get('opp_1', { timeout: 200, maxRetries: 1 }), 10_000);

    expect(outcome).toBeInstanceOf(CrmTimeoutError);
    expect(seen).toEqual({ calls: 2, cancelled: 1 });
  },
  GENEROUS,
);

test(
  "a first attempt whose global fetch ignores its signal and never answers ends at the caller's abort",
  async () => {
    vi.stubGlobal('fetch', () => new Promise<Response>(() => {}));
    const crm = new CrmClient({ baseUrl: 'http://deaf.invalid', apiKey: 'key_deaf', tenantId: 'tenant_deaf' });
    const controller = new AbortController();

    const call = settledWithin(crm.opportunities.get('opp_1', { signal: controller.signal, maxRetries: 0 }), 10_000);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();

    expect(await call).toBeInstanceOf(CrmAbortError);
  },
  GENEROUS,
);

test(
  "a fetch of the caller's that ignores its signal and stalls its body ends at the caller's abort, its body cancelled",
  async () => {
    const { seen, fetch } = deafStallingFetch();
    const crm = new CrmClient({ baseUrl: 'http://deaf.invalid', apiKey: 'key_deaf', tenantId: 'tenant_deaf', fetch });
    const controller = new AbortController();

    const call = settledWithin(crm.opportunities.get('opp_1', { signal: controller.signal, maxRetries: 1 }), 10_000);
    await vi.waitFor(() => expect(seen.calls).toBe(2), { timeout: 5_000 });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();

    expect(await call).toBeInstanceOf(CrmAbortError);
    await vi.waitFor(() => expect(seen.cancelled).toBe(1), { timeout: 5_000 });
  },
  GENEROUS,
);
