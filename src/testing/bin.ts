#!/usr/bin/env node
/**
 * `crm-fake`: serves the fake CRM over HTTP and prints how to reach it. `crm-fake --help` for the options.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startFakeCrmServer } from './server';
import { type ServedTenants, TenantsError, tenantsFromList, tenantsFromSeed } from './tenants';

const USAGE = `Usage: crm-fake [options]
       crm-fake dump [--url <url>] [--tenant <id>] [--type <type>]

Serves a fake of the CRM integration API over HTTP, for tests and demos, and prints the base URL
and the credentials it accepts (CRM_BASE_URL, CRM_TENANT_ID, CRM_API_KEY, CRM_ADMIN_TOKEN).
Needs Node, Bun or Deno; msw is not needed.

Options:
  --port <n>         port to listen on; 0 picks a free one (default: 0)
  --host <name>      interface to listen on (default: 127.0.0.1, loopback only)
  --records <n>      generated accounts, contacts and opportunities, and 10 x n activities,
                     for each tenant (default: 5)
  --tenants <ids>    serve these tenants, comma-separated (acme,globex,initech): each with its
                     own records, API key and admin token, printed one line each; the first is
                     also printed as CRM_TENANT_ID, CRM_API_KEY and CRM_ADMIN_TOKEN
                     (default: tenant_demo)
  --seed <file>      serve the tenants and records of a JSON seed file instead of generated
                     ones (README: "Seeding crm-fake"); not with --tenants or --records
  --rate-limit <n>   requests per second each API key (or admin token) may send, on average;
                     one more is answered 429 with Retry-After (default: no limit)
  --burst <n>        requests a key may send at once after a quiet spell: the size of its
                     token bucket, which starts full (default: the --rate-limit, rounded up)
  --latency <ms>     delay every answer by this many milliseconds (default: 0)
  --log-requests <n> the most requests the fake's log keeps, the oldest dropped first
                     (default: 10000)
  --log-bytes <n>    the most bytes of requests (bodies, paths, headers) the log keeps, the
                     oldest dropped first (default: 67108864, 64 MiB)
  -h, --help         print this help and exit

Export: GET <url>/_fake/export/<type>.csv (accounts, contacts, opportunities, activities) gives a
tenant's records as CSV, an id column and the fields as the API names them, as a CRM's export
would: what crm sync resolve --match reads. It needs the tenant's key:
  curl -H "x-api-key: $CRM_API_KEY" "$CRM_BASE_URL/_fake/export/accounts.csv?tenantId=$CRM_TENANT_ID"
or, with the variables crm-fake printed set, crm-fake dump (crm-fake dump --help).
`;

// `crm-fake dump`: a look at a running fake's store, from another shell.
if (process.argv[2] === 'dump') {
  const { runDump } = await import('./dump');
  const code = await runDump(process.argv.slice(3), {
    env: process.env,
    out: (text) => new Promise<void>((done) => process.stdout.write(text, () => done())),
    err: (text) => process.stderr.write(text),
  });
  process.exit(code);
}

// Exit codes: 0 served and stopped by a signal (or --help), 1 could not serve, 2 wrong usage.
function usageError(message: string): never {
  process.stderr.write(`crm-fake: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      strict: true,
      options: {
        port: { type: 'string', default: '0' },
        host: { type: 'string', default: '127.0.0.1' },
        records: { type: 'string' },
        tenants: { type: 'string' },
        seed: { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        latency: { type: 'string', default: '0' },
        'log-requests': { type: 'string' },
        'log-bytes': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    // parseArgs explains an unknown option or a missing value in its message; a stack adds nothing.
    return usageError(error instanceof Error ? error.message : String(error));
  }
}

function wholeNumber(name: string, text: string, max?: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || (max !== undefined && value > max)) {
    usageError(`--${name} must be a whole number${max === undefined ? '' : ` from 0 to ${max}`}, not "${text}"`);
  }
  return value;
}

const values = parse();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
// A number above 0, fractions allowed (0.5: one request every 2 s); no exponent, sign or hex.
function rate(text: string): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(value) || value <= 0) {
    usageError(`--rate-limit must be a number of requests per second above 0, not "${text}"`);
  }
  return value;
}

const port = wholeNumber('port', values.port, 65_535);
if (values.seed !== undefined && (values.tenants !== undefined || values.records !== undefined)) {
  usageError(
    `--seed gives the tenants and records itself: not with --${values.tenants === undefined ? 'records' : 'tenants'}`,
  );
}
const records = wholeNumber('records', values.records ?? '5');
const served = servedTenants();
// The largest delay setTimeout honours: past it, it fires at once.
const latencyMs = wholeNumber('latency', values.latency, 2_147_483_647);
const maxLoggedRequests =
  values['log-requests'] === undefined ? undefined : wholeNumber('log-requests', values['log-requests']);
const maxLoggedBytes = values['log-bytes'] === undefined ? undefined : wholeNumber('log-bytes', values['log-bytes']);
if (values.burst !== undefined && values['rate-limit'] === undefined) usageError('--burst needs --rate-limit');
const perSecond = values['rate-limit'] === undefined ? undefined : rate(values['rate-limit']);
let rateLimit: { perSecond: number; burst: number } | undefined;
if (perSecond !== undefined) {
  const burst = values.burst === undefined ? Math.ceil(perSecond) : wholeNumber('burst', values.burst);
  if (burst < 1) usageError(`--burst must be 1 or more, not "${values.burst}"`);
  rateLimit = { perSecond, burst };
}

/** The tenants to serve, from --seed, --tenants, or the one default tenant. */
function servedTenants(): ServedTenants {
  try {
    if (values.seed === undefined) return tenantsFromList(values.tenants ?? 'tenant_demo', records);
    let text: string;
    try {
      text = readFileSync(values.seed, 'utf8');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return usageError(`--seed ${values.seed}: cannot read it${typeof code === 'string' ? ` (${code})` : ''}`);
    }
    return tenantsFromSeed(text, values.seed);
  } catch (error) {
    if (error instanceof TenantsError) return usageError(error.message);
    throw error;
  }
}

const server = await startFakeCrmServer({
  port,
  host: values.host,
  rateLimit,
  latencyMs,
  maxLoggedRequests,
  maxLoggedBytes,
  tenantId: served.tenantId,
  seed: served.seed,
}).catch((error: unknown) => {
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(`crm-fake: cannot serve on ${values.host}:${port}: ${reason}\n`);
  process.exit(1);
});
const { tenantId, apiKey, adminToken } = server.fake.credentials;
// With more than one tenant, one line each, to paste as environment (the first also above).
const perTenant =
  served.tenants.length > 1
    ? served.tenants.map(
        (t) =>
          `tenant ${t.id}: CRM_TENANT_ID=${t.id} CRM_API_KEY=${t.apiKey ?? ''}${t.adminToken ? ` CRM_ADMIN_TOKEN=${t.adminToken}` : ''}`,
      )
    : [];
const limits = [
  rateLimit && `${rateLimit.perSecond} requests/s per key, burst ${rateLimit.burst}`,
  latencyMs > 0 && `${latencyMs} ms latency`,
].filter(Boolean);
process.stdout.write(
  [
    `crm-fake listening on ${server.url}${limits.length ? ` (${limits.join('; ')})` : ''}`,
    `CRM_BASE_URL=${server.url}`,
    `CRM_TENANT_ID=${tenantId}`,
    `CRM_API_KEY=${apiKey}`,
    `CRM_ADMIN_TOKEN=${adminToken}`,
    ...perTenant,
    '',
  ].join('\n'),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
