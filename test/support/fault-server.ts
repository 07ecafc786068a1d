import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { http, passthrough } from 'msw';
import { afterEach, beforeEach, expect } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { type ClientOptions, CrmClient } from '../../src/index';
import { pathOf } from './endpoint-paths';
import { server as msw } from './msw-server';

/*
 * A real node:http server on 127.0.0.1 whose behaviour each test scripts, request by request, and
 * which records what it received. Not MSW: the faults here (a reset socket, half a body, silence,
 * a huge stream) happen on a real TCP connection, as they do in production.
 */

export const API_KEY = 'key_live_f4ult5ecret';
export const ADMIN_TOKEN = 'eyJadmin.f4ult.t0ken';
export const TENANT = 'tenant_faults';

export const OPP_ID = 'opp_1';
export const OPP_PATH = pathOf(endpoints.getOpportunity, { id: OPP_ID });
export const OPPS_PATH = pathOf(endpoints.createOpportunity);
export const ACTIVITIES_PATH = pathOf(endpoints.listActivities);
export const ACCOUNTS_PATH = pathOf(endpoints.createAccount);
export const CONTACTS_PATH = pathOf(endpoints.listContacts);
export const API_KEY_GENERATE_PATH = pathOf(endpoints.generateApiKey);
export const OPPORTUNITY = { id: OPP_ID, name: 'Renewal 2027', accountId: 'acc_1', amount: 12_000 };

/** MSW (set up for every test file) must let loopback through; its handlers are reset after each test. */
const letLoopbackThrough = (): void => {
  msw.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
};

/** One request the server received, and what became of it. */
export interface Received {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The request body as text ('' when there was none). */
  readonly body: string;
  /** `Date.now()` when the request arrived. */
  readonly at: number;
  /** The status of a response sent to the end, else undefined (reset, cut, never answered). */
  readonly status: number | undefined;
  /** Body bytes handed to the socket. */
  readonly bytesSent: number;
  /** True when the connection closed before the response was complete (client gave up, or the script cut it). */
  readonly closedEarly: boolean;
}

type MutableReceived = { -readonly [K in keyof Received]: Received[K] };

type Body = string | Uint8Array;

/** What the server does with one request. */
export type Action =
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly body: Body;
      readonly delayMs: number;
    }
  /** Destroys the socket before any byte of the response. */
  | { readonly kind: 'reset' }
  /** Sends the status, the headers and the first `bytes` of `body`, then destroys the socket. */
  | {
      readonly kind: 'cut';
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly body: string;
      readonly bytes: number;
      readonly contentLength: boolean;
    }
  /** Sends the status, the headers and the first `bytes` of `body`, then nothing more, ever. */
  | { readonly kind: 'stall'; readonly headers: Record<string, string>; readonly body: string; readonly bytes: number }
  /** Never answers. */
  | { readonly kind: 'hang' }
  /** Streams `totalBytes`: `prefix`, then `fill` repeated, honouring backpressure. */
  | {
      readonly kind: 'stream';
      readonly headers: Record<string, string>;
      readonly prefix: string;
      readonly totalBytes: number;
      readonly contentLength: boolean;
    };

const JSON_TYPE = { 'content-type': 'application/json' };

/** Builders of actions. */
export const reply = {
  /** Any status, headers and body; `body` objects are sent as JSON. */
  with(
    status: number,
    body: Body | object,
    options: { headers?: Record<string, string>; delayMs?: number } = {},
  ): Action {
    const json = typeof body !== 'string' && !(body instanceof Uint8Array);
    return {
      kind: 'respond',
      status,
      headers: { ...(json ? JSON_TYPE : {}), ...options.headers },
      body: json ? JSON.stringify(body) : body,
      delayMs: options.delayMs ?? 0,
    };
  },
  /** A success envelope. */
  ok(data: unknown, options: { extra?: object; headers?: Record<string, string>; delayMs?: number } = {}): Action {
    return reply.with(200, { success: true, data, ...options.extra }, options);
  },
  /** An error status with a JSON error body. */
  jsonError(status: number, message: string, headers: Record<string, string> = {}): Action {
    return reply.with(status, { success: false, error: { message } }, { headers });
  },
  /** An error status with an HTML page, as a proxy or load balancer sends. */
  htmlError(status: number, title: string, headers: Record<string, string> = {}): Action {
    return reply.with(status, htmlPage(title), { headers: { 'content-type': 'text/html; charset=utf-8', ...headers } });
  },
  reset: (): Action => ({ kind: 'reset' }),
  /** A 200 JSON response cut after `fraction` of its body. */
  cut(body: string, options: { fraction?: number; contentLength?: boolean } = {}): Action {
    const bytes = Math.floor(Buffer.byteLength(body) * (options.fraction ?? 0.5));
    return { kind: 'cut', status: 200, headers: JSON_TYPE, body, bytes, contentLength: options.contentLength ?? true };
  },
  /** Headers and half a body, then silence. */
  stall(body: string): Action {
    return { kind: 'stall', headers: JSON_TYPE, body, bytes: Math.floor(Buffer.byteLength(body) / 2) };
  },
  hang: (): Action => ({ kind: 'hang' }),
  stream(totalBytes: number, options: { contentLength?: boolean; prefix?: string } = {}): Action {
    return {
      kind: 'stream',
      headers: JSON_TYPE,
      prefix: options.prefix ?? '{"success":true,"data":{"id":"opp_1","description":"',
      totalBytes,
      contentLength: options.contentLength ?? false,
    };
  },
};

export const htmlPage = (title: string): string =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1><hr><center>nginx</center></body></html>`;

/** A success envelope as text. */
export const okBody = (data: unknown): string => JSON.stringify({ success: true, data });

const FILL = Buffer.alloc(64 * 1024, 'a');

export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in order of arrival. */
  readonly requests: readonly Received[];
  /** The most requests ever in flight at once. */
  readonly maxInFlight: number;
  /** Queues actions for the next requests to `method path` (path without query), in order. */
  script(method: string, path: string, ...actions: Action[]): void;
  /** What `method path` gets once its queue is empty (default: a 404 naming the unscripted request). */
  otherwise(method: string, path: string, action: Action): void;
  /** Requests received at `method path`. */
  received(method: string, path: string): Received[];
  /** Requests at `method path` answered to the end with a 2xx: executions that succeeded. */
  succeeded(method: string, path: string): number;
  /** Resolves once `count` requests in all have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Ends every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a scripted server on 127.0.0.1, port 0. */
async function startFaultServer(): Promise<FaultServer> {
  const queues = new Map<string, Action[]>();
  const fallbacks = new Map<string, Action>();
  const requests: MutableReceived[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<{ count: number; resolve: () => void }>();
  let inFlight = 0;
  let maxInFlight = 0;

  const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

  const next = (method: string, path: string): Action => {
    const key = keyOf(method, path);
    return (
      queues.get(key)?.shift() ??
      fallbacks.get(key) ??
      reply.with(404, { success: false, error: { message: `Unscripted request: ${key}` } })
    );
  };

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  const execute = async (action: Action, req: IncomingMessage, res: ServerResponse, record: MutableReceived) => {
    switch (action.kind) {
      case 'respond': {
        const send = () => {
          if (res.destroyed) return;
          const body = typeof action.body === 'string' ? Buffer.from(action.body) : action.body;
          res.writeHead(action.status, { ...action.headers, 'content-length': String(body.byteLength) });
          record.bytesSent = body.byteLength;
          res.end(body);
        };
        if (action.delayMs > 0) later(action.delayMs, send);
        else send();
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'cut': {
        const body = Buffer.from(action.body);
        const headers = action.contentLength
          ? { ...action.headers, 'content-length': String(body.byteLength) }
          : action.headers;
        res.writeHead(action.status, headers);
        res.flushHeaders();
        record.bytesSent = action.bytes;
        // Destroy only once the partial body has reached the socket.
        res.write(body.subarray(0, action.bytes), () => later(20, () => req.socket.destroy()));
        return;
      }
      case 'stall': {
        const body = Buffer.from(action.body);
        res.writeHead(200, { ...action.headers, 'content-length': String(body.byteLength) });
        record.bytesSent = action.bytes;
        res.write(body.subarray(0, action.bytes));
        return;
      }
      case 'hang':
        return;
      case 'stream': {
        const headers = action.contentLength
          ? { ...action.headers, 'content-length': String(action.totalBytes) }
          : action.headers;
        res.writeHead(200, headers);
        const prefix = Buffer.from(action.prefix);
        res.write(prefix);
        let sent = prefix.byteLength;
        while (sent < action.totalBytes && !res.destroyed) {
          const chunk = FILL.subarray(0, Math.min(FILL.byteLength, action.totalBytes - sent));
          const flowing = res.write(chunk);
          sent += chunk.byteLength;
          record.bytesSent = sent;
          if (!flowing) await drained(res);
        }
        if (!res.destroyed) res.end();
        return;
      }
    }
  };

  const http_ = createServer(async (req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const record: MutableReceived = {
      method: req.method ?? '',
      url: req.url ?? '',
      path: new URL(req.url ?? '/', 'http://x').pathname,
      query: new URL(req.url ?? '/', 'http://x').searchParams,
      headers: req.headers,
      body: '',
      at: Date.now(),
      status: undefined,
      bytesSent: 0,
      closedEarly: false,
    };
    res.on('finish', () => {
      done = true;
      record.status = res.statusCode;
    });
    res.on('close', () => {
      inFlight -= 1;
      if (!done) record.closedEarly = true;
    });
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      // The client went away while sending; still recorded.
    }
    record.body = Buffer.concat(chunks).toString('utf8');
    requests.push(record);
    for (const waiter of waiters) {
      if (requests.length >= waiter.count) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
    try {
      await execute(next(record.method, record.path), req, res, record);
    } catch {
      // A script that cannot go on (the client left mid-write) ends the connection, never the test.
      req.socket.destroy();
    }
  });

  await new Promise<void>((resolve) => http_.listen(0, '127.0.0.1', resolve));
  const { port } = http_.address() as AddressInfo;

  const received = (method: string, path: string) =>
    requests.filter((r) => r.method === method.toUpperCase() && r.path === path);

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    script(method, path, ...actions) {
      const key = keyOf(method, path);
      queues.set(key, [...(queues.get(key) ?? []), ...actions]);
    },
    otherwise(method, path, action) {
      fallbacks.set(keyOf(method, path), action);
    },
    received,
    succeeded(method, path) {
      return received(method, path).filter((r) => r.status !== undefined && r.status >= 200 && r.status < 300).length;
    },
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.add({ count, resolve }));
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      http_.closeAllConnections();
      await new Promise<void>((resolve) => http_.close(() => resolve()));
    },
  };
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** A client of the fault server with every credential; options override the defaults. */
export const clientFor = (fault: FaultServer, options: ClientOptions = {}): CrmClient =>
  new CrmClient({ baseUrl: fault.url, apiKey: API_KEY, tenantId: TENANT, adminToken: ADMIN_TOKEN, ...options });

/** Runs `call` and returns what it threw (failing the test when it did not throw), and how long it took. */
export async function failure(call: PromiseLike<unknown>): Promise<{ error: unknown; elapsed: number }> {
  const started = performance.now();
  try {
    await call;
  } catch (error) {
    return { error, elapsed: performance.now() - started };
  }
  throw new Error('Expected the call to fail, but it succeeded');
}

/**
 * What `run` rejected with (failing the test when it resolved). `run` calls the SDK from a named
 * function of the test's own, for the stack tests.
 */
export async function rejectionOf(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('Expected a rejection');
}

/**
 * Asserts that the server saw `path` POSTed twice with the same body, and executed it once: a
 * create repeated because the first answer proved nothing was done.
 */
export function expectRepeatedOnceExecutedOnce(fault: FaultServer, path: string): void {
  const seen = fault.received('POST', path);
  expect(seen).toHaveLength(2);
  expect(seen[1]?.body).toBe(seen[0]?.body);
  expect(fault.succeeded('POST', path)).toBe(1);
}

/** Milliseconds between the arrival of request `i` and request `i + 1` (as the server saw them). */
export const gapAfter = (received: readonly Received[], i: number): number => {
  const a = received[i];
  const b = received[i + 1];
  if (!a || !b) throw new Error(`Expected requests ${i} and ${i + 1}, got ${received.length}`);
  return b.at - a.at;
};

/**
 * Registers, for the calling test file, a fresh fault server per test (and MSW's loopback
 * passthrough, which MSW drops after each test); returns a getter for the current one.
 */
export function useFaultServer(): () => FaultServer {
  let current: FaultServer | undefined;
  beforeEach(async () => {
    letLoopbackThrough();
    current = await startFaultServer();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error('No fault server: call inside a test');
    return current;
  };
}

/** A loopback port that nothing listens on: taken, then given back. */
export async function closedPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
