import { inspect } from 'node:util';
import { expect, test } from 'vitest';
import type { CrmRequestLog } from '../../src/index';
import {
  ADMIN_TOKEN,
  API_KEY,
  API_KEY_GENERATE_PATH,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

function recorder() {
  const lines: string[] = [];
  const entries: CrmRequestLog[] = [];
  return {
    lines,
    entries,
    logger: (line: string, entry: CrmRequestLog) => {
      lines.push(line);
      entries.push(entry);
    },
    /** Everything the logger was given, as text. */
    dump: () => `${lines.join('\n')}\n${JSON.stringify(entries)}\n${inspect(entries, { depth: 5 })}`,
  };
}

test('the logger gets one line per attempt with method, path, status, duration and attempt number', async () => {
  fault().script(
    'GET',
    OPP_PATH,
    reply.reset(),
    reply.jsonError(503, 'busy', { 'retry-after': '0' }),
    reply.ok(OPPORTUNITY),
  );
  const log = recorder();

  await clientFor(fault(), { logger: log.logger }).opportunities.get(OPP_ID);

  expect(log.lines).toHaveLength(3);
  const path = `${OPP_PATH}?tenantId=${TENANT}`;
  expect(log.entries.map(({ method, url, status, attempt }) => ({ method, url, status, attempt }))).toEqual([
    { method: 'GET', url: path, status: 0, attempt: 1 },
    { method: 'GET', url: path, status: 503, attempt: 2 },
    { method: 'GET', url: path, status: 200, attempt: 3 },
  ]);
  expect(log.entries[0]?.error).toMatch(/fetch failed/);
  expect(log.entries[2]?.error).toBeUndefined();
  for (const entry of log.entries) {
    expect(entry.durationMs).toBeGreaterThanOrEqual(0);
    expect(entry.durationMs).toBeLessThan(5_000);
  }
  expect(log.lines[0]).toMatch(new RegExp(`^crm GET ${escapeRegExp(path)} failed \\(.*\\) \\d+ms attempt=1 headers=`));
  expect(log.lines[1]).toMatch(new RegExp(`^crm GET ${escapeRegExp(path)} 503 \\d+ms attempt=2 headers=`));
  expect(log.lines[2]).toMatch(new RegExp(`^crm GET ${escapeRegExp(path)} 200 \\d+ms attempt=3 headers=`));
  expect(fault().received('GET', OPP_PATH)).toHaveLength(3);
});

test('the logger sees x-api-key masked and never the key, which the server did receive', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
  const log = recorder();

  await clientFor(fault(), { logger: log.logger }).opportunities.get(OPP_ID);

  expect(log.entries[0]?.headers['x-api-key']).toBe('[redacted]');
  expect(log.entries[0]?.headers['x-tenant-id']).toBe(TENANT);
  expect(log.dump()).not.toContain(API_KEY);
  expect(fault().received('GET', OPP_PATH)[0]?.headers['x-api-key']).toBe(API_KEY);
});

test('the logger sees the admin authorization header masked and never the token', async () => {
  fault().otherwise('POST', API_KEY_GENERATE_PATH, reply.ok({ apiKey: 'key_new' }));
  const log = recorder();

  await clientFor(fault(), { logger: log.logger }).apiKey.generate();

  expect(log.entries).toHaveLength(1);
  expect(log.entries[0]?.method).toBe('POST');
  expect(log.entries[0]?.url).toBe(API_KEY_GENERATE_PATH);
  expect(log.entries[0]?.headers.authorization).toBe('[redacted]');
  expect(log.dump()).not.toContain(ADMIN_TOKEN);
  expect(fault().received('POST', API_KEY_GENERATE_PATH)[0]?.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
});

test('a failed attempt is logged with status 0 and the failure, and a POST is logged once', async () => {
  fault().script('POST', '/integrations/v1/opportunities', reply.reset());
  const log = recorder();

  await failure(clientFor(fault(), { logger: log.logger }).opportunities.create({ name: 'N', accountId: 'acc_1' }));

  expect(log.entries).toHaveLength(1);
  expect(log.entries[0]?.status).toBe(0);
  expect(log.entries[0]?.error).toBeDefined();
  expect(log.dump()).not.toContain(API_KEY);
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('an async logger that rejects is ignored: the call returns its data and no rejection goes unhandled', async () => {
  fault().script('GET', OPP_PATH, reply.jsonError(503, 'busy', { 'retry-after': '0' }), reply.ok(OPPORTUNITY));
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  let calls = 0;
  try {
    const crm = clientFor(fault(), {
      logger: async () => {
        calls += 1;
        throw new Error('log sink is down');
      },
    });

    await expect(crm.opportunities.get(OPP_ID)).resolves.toEqual(OPPORTUNITY);
    // Let any rejection surface before looking.
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }

  expect(calls).toBe(2);
  expect(unhandled).toEqual([]);
});

test('a proxy-authorization header is masked in the log like the credentials', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY));
  const log = recorder();

  await clientFor(fault(), { logger: log.logger }).opportunities.get(OPP_ID, {
    headers: { 'proxy-authorization': 'Basic cHJveHk6czNjcjN0' },
  });

  expect(log.entries[0]?.headers['proxy-authorization']).toBe('[redacted]');
  expect(log.dump()).not.toContain('cHJveHk6czNjcjN0');
});
