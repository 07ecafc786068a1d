import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { expect, test, vi } from 'vitest';
import { CrmResponseTooLargeError } from '../../src/core/errors';
import * as sdk from '../../src/index';
import {
  ACTIVITIES_PATH,
  clientFor,
  failure,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

const MB = 1024 * 1024;
const HUGE = 40 * MB;
const DEFAULT_LIMIT = 10 * MB;

// A full collection before the baseline keeps earlier tests' garbage out of the measurement.
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Runs `call`, sampling the heap meanwhile; returns the largest growth over the baseline, in bytes. */
async function heapGrowthDuring(call: () => Promise<unknown>): Promise<number> {
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, 2);
  try {
    await call();
  } finally {
    clearInterval(sampler);
    sample();
  }
  return peak - baseline;
}

test('a 40 MB chunked body fails with CrmResponseTooLargeError at the 10 MiB default, with bounded memory', async () => {
  fault().otherwise('GET', OPP_PATH, reply.stream(HUGE, { contentLength: false }));
  const crm = clientFor(fault());

  let error: unknown;
  const growth = await heapGrowthDuring(async () => {
    ({ error } = await failure(crm.opportunities.get(OPP_ID)));
  });

  expect(error).toBeInstanceOf(CrmResponseTooLargeError);
  expect((error as Error).name).toBe('CrmResponseTooLargeError');
  expect((error as Error).message).toContain(`maxResponseBytes (${DEFAULT_LIMIT})`);
  expect(growth).toBeLessThan(30 * MB);
  // Not retried: one request, which the client hung up on long before the 40 MB were sent.
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  await vi.waitFor(() => expect(seen[0]?.closedEarly).toBe(true));
  expect(seen[0]?.bytesSent).toBeLessThan(HUGE);
});

test('a 40 MB body with a content-length fails with CrmResponseTooLargeError before its body is read', async () => {
  fault().otherwise('GET', OPP_PATH, reply.stream(HUGE, { contentLength: true }));
  const crm = clientFor(fault());

  let error: unknown;
  const growth = await heapGrowthDuring(async () => {
    ({ error } = await failure(crm.opportunities.get(OPP_ID)));
  });

  expect(error).toBeInstanceOf(CrmResponseTooLargeError);
  expect((error as Error).message).toContain(`at least ${HUGE} bytes`);
  expect(growth).toBeLessThan(10 * MB);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(1);
  await vi.waitFor(() => expect(seen[0]?.closedEarly).toBe(true));
  expect(seen[0]?.bytesSent).toBeLessThan(HUGE / 2);
});

test('a gzip bomb (40 MB inflated from a few KB) fails with CrmResponseTooLargeError as it inflates', async () => {
  const bomb = gzipSync(Buffer.alloc(HUGE, 'a'));
  fault().otherwise(
    'GET',
    OPP_PATH,
    reply.with(200, bomb, { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
  );
  const crm = clientFor(fault());

  let error: unknown;
  const growth = await heapGrowthDuring(async () => {
    ({ error } = await failure(crm.opportunities.get(OPP_ID)));
  });

  expect(bomb.byteLength).toBeLessThan(MB);
  expect(error).toBeInstanceOf(CrmResponseTooLargeError);
  expect(growth).toBeLessThan(30 * MB);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('with maxResponseBytes of 64 MiB a valid 20 MB page is read in full', async () => {
  const activities = Array.from({ length: 200 }, (_, i) => ({
    id: `act_${i}`,
    subject: `Call ${i}`,
    description: 'x'.repeat(100_000),
  }));
  const page = reply.ok(activities, { extra: { pagination: { page: 1, limit: 200, total: 200, pages: 1 } } });
  fault().otherwise('GET', ACTIVITIES_PATH, page);

  const crm = clientFor(fault(), { maxResponseBytes: 64 * MB });
  const result = await crm.activities.list({ opportunityId: OPP_ID });

  expect(result.data).toHaveLength(200);
  expect(result.data[199]?.description).toHaveLength(100_000);
  const seen = fault().received('GET', ACTIVITIES_PATH);
  expect(seen).toHaveLength(1);
  expect(seen[0]?.bytesSent).toBeGreaterThan(20_000_000);
});

test('maxResponseBytes is a limit the caller sets: a small one refuses an ordinary answer over it', async () => {
  fault().otherwise('GET', OPP_PATH, reply.ok({ ...OPPORTUNITY, description: 'x'.repeat(2_000) }));

  const { error } = await failure(clientFor(fault(), { maxResponseBytes: 1_024 }).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmResponseTooLargeError);
  expect((error as Error).message).toContain('maxResponseBytes (1024)');
});

test('the package entry point exports CrmResponseTooLargeError, so callers can catch it by class', () => {
  expect(Object.keys(sdk)).toContain('CrmResponseTooLargeError');
});
