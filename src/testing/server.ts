import type { IncomingMessage, ServerResponse } from 'node:http';
import { FAKE_EXPORT_TYPES, type FakeExportType } from './export';
import { FakeCrmCore, type FakeCrmOptions, newRequestId } from './fake';
import type { FakeStore } from './store';

/** Options of `startFakeCrmServer()`: where to listen, and the fake's own options. */
export interface FakeCrmServerOptions extends Omit<FakeCrmOptions, 'baseUrl'> {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number | undefined;
  /** Interface to listen on. Default `127.0.0.1` (loopback only). */
  host?: string | undefined;
}

/** A running fake server. */
export interface FakeCrmServer {
  /** The base URL to give the client, such as `http://127.0.0.1:40123`. */
  readonly url: string;
  /** The fake behind the server: its store, request log, credentials and faults. */
  readonly fake: FakeCrmCore;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/**
 * node:http where the runtime has one (Node 22.3+, Bun, Deno), through process.getBuiltinModule
 * rather than an `import`, static or dynamic: a bundler for the browser refuses a Node built-in,
 * and this entry must bundle there for createFakeCrm() and setupWorker.
 */
function nodeHttp(): typeof import('node:http') {
  const http = globalThis.process?.getBuiltinModule?.('http');
  if (!http) {
    throw new Error(
      'startFakeCrmServer() needs Node (22.3 or later), Bun or Deno: it opens a real HTTP server, ' +
        "which this runtime cannot. In a browser, use createFakeCrm() with msw's setupWorker.",
    );
  }
  return http;
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, OPTIONS',
  'access-control-allow-headers': 'content-type, accept, authorization, x-api-key, x-tenant-id',
  'access-control-expose-headers': 'retry-after, x-request-id',
};

/** A request's body as a web stream, read as it is pulled; cancelling it stops reading. */
function streamOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  const chunks = req[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(value as Uint8Array);
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

/** Where the server's own export answers (not an endpoint of the API): `/_fake/export/accounts.csv`. */
const EXPORT_PATH = /^\/_fake\/export\/([a-z]+)\.csv$/;

/**
 * `GET /_fake/export/<type>.csv`: the tenant's records of that type as CSV ({@link FakeStore.exportCsv}),
 * as a CRM's export would give them. The tenant's `x-api-key` is required, with its id in
 * `x-tenant-id` or `?tenantId=`, so that one tenant never reads another's. Not in the request log:
 * it is the test's look at the store, not a call of the API.
 */
function exported(fake: FakeCrmCore, url: URL, req: IncomingMessage, res: ServerResponse): boolean {
  const match = EXPORT_PATH.exec(url.pathname);
  if (!match || req.method !== 'GET') return false;
  const answer = (status: number, code: string, message: string) => {
    res.writeHead(status, { ...CORS, 'content-type': 'application/json', 'x-request-id': newRequestId() });
    res.end(JSON.stringify({ success: false, error: { code, message } }));
  };
  const type = match[1] as FakeExportType;
  if (!FAKE_EXPORT_TYPES.includes(type)) {
    answer(404, 'NOT_FOUND', `No export of ${type}: ${FAKE_EXPORT_TYPES.join(', ')}`);
    return true;
  }
  const header = req.headers['x-tenant-id'];
  const tenantId = url.searchParams.get('tenantId') ?? (typeof header === 'string' ? header : undefined);
  const key = req.headers['x-api-key'];
  const tenant = tenantId === undefined ? undefined : fake.store.tenants.get(tenantId);
  if (!tenant || typeof key !== 'string' || tenant.apiKey !== key) {
    answer(401, 'UNAUTHORIZED', 'A valid x-api-key for the tenant (x-tenant-id or ?tenantId=) is required');
    return true;
  }
  const csv = Buffer.from(fake.store.exportCsv(type, tenant.id));
  res.writeHead(200, {
    ...CORS,
    'content-type': 'text/csv; charset=utf-8',
    'content-length': csv.length,
    'x-request-id': newRequestId(),
  });
  res.end(csv);
  return true;
}

async function serve(fake: FakeCrmCore, base: string, req: IncomingMessage, res: ServerResponse) {
  if (exported(fake, new URL(req.url ?? '/', base), req, res)) return;
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { ...CORS, 'x-request-id': newRequestId() }).end();
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  // Streamed, not buffered: the fake reads no more of a body than its maxRequestBytes, and its
  // 413 says `connection: close`, on which Node closes the connection rather than drain the rest.
  const body = req.method === 'GET' || req.method === 'HEAD' ? null : streamOf(req);
  // `duplex: 'half'`, which a streamed body needs, is not in the DOM types yet.
  const init: RequestInit & { duplex: 'half' } = { method: req.method ?? 'GET', headers, body, duplex: 'half' };
  const response = await fake.handle(new Request(new URL(req.url ?? '/', base), init));
  if (response.type === 'error') {
    req.socket.destroy();
    return;
  }

  const payload = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, {
    ...CORS,
    ...Object.fromEntries(response.headers),
    'content-length': payload.length,
  });
  res.end(payload);
}

/**
 * Serves the fake over real HTTP (node:http), on loopback by default, so the SDK can be used
 * over real sockets and curl or another language can talk to it. Answers CORS preflights.
 *
 * @example
 * ```ts
 * const server = await startFakeCrmServer();
 * const crm = new CrmClient({ ...server.fake.credentials, baseUrl: server.url });
 * await server.close();
 * ```
 */
export async function startFakeCrmServer(options: FakeCrmServerOptions = {}): Promise<FakeCrmServer> {
  const { createServer } = nodeHttp();
  const host = options.host ?? '127.0.0.1';
  const { port: _port, host: _host, ...fakeOptions } = options;
  const server = createServer();
  // Node's 5 s closes connections that a busy client, late on its timers, may still reuse: it
  // then fails a request the server never read ("other side closed"). Load balancers keep 60 s.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's backlog of 511 drops the connections of a larger burst (a bulk job's Promise.all),
    // which the client then retries a second later; the system may cap this one lower.
    server.listen({ port: options.port ?? 0, host, backlog: 4096 }, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const fake = new FakeCrmCore({ ...fakeOptions, baseUrl: url });
  server.on('request', (req, res) => {
    serve(fake, url, req, res).catch((error: unknown) => {
      res.writeHead(500, { ...CORS, 'content-type': 'application/json', 'x-request-id': newRequestId() });
      res.end(JSON.stringify({ success: false, error: { code: 'FAKE_CRASHED', message: String(error) } }));
    });
  });
  return {
    url,
    fake,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
