import { describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { type Harness, overRealSockets, throughMsw } from '../support/fake-harness';

const accountsOf = ({ fake }: Harness) => [...fake.store.accounts.values()];
const clientOf = ({ fake, baseUrl }: Harness, options = {}) =>
  new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0, ...options });

describe.each([
  ['through MSW', throughMsw],
  ['over real sockets', overRealSockets],
])('applied faults, %s', (_name, start) => {
  test('applied and dropped: the record is stored, and the create fails with a connection error that may have acted', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    const error = await clientOf(harness)
      .accounts.create({ name: 'Acme' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'CrmConnectionError', sideEffects: 'unknown' });
    expect(accountsOf(harness).map((a) => a.name)).toEqual(['Acme']);
  });

  test('applied and answered 502: the record is stored, and the create fails with a server error that may have acted', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', applied: true, status: 502 });
    const error = await clientOf(harness)
      .accounts.create({ name: 'Acme' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'CrmServerError', status: 502, sideEffects: 'unknown' });
    expect(accountsOf(harness).map((a) => a.name)).toEqual(['Acme']);
    expect(harness.fake.requests.map((r) => r.status)).toEqual([502]);
  });

  test('applied and answered late: the record is stored at once, and a client that timed out may have acted', async () => {
    const harness = await start();
    // A timeout of seconds, so that the request has reached the fake when it fires, on a busy
    // machine too (with 100 ms, it sometimes had not: nothing was stored).
    harness.fake.failNext({ endpoint: 'createAccount', applied: true, delayMs: 30_000 });
    const pending = clientOf(harness, { timeout: 1_000 }).accounts.create({ name: 'Acme' });
    const error = await pending.catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'CrmTimeoutError', sideEffects: 'unknown' });
    expect(accountsOf(harness).map((a) => a.name)).toEqual(['Acme']);
  });

  test('a fault without applied stores nothing', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', drop: true });
    await clientOf(harness)
      .accounts.create({ name: 'Acme' })
      .catch(() => {});
    expect(accountsOf(harness)).toEqual([]);
  });

  test('an applied fault on a create that the API refuses stores nothing: the refusal is the answer the fault replaces', async () => {
    const harness = await start();
    harness.fake.failNext({ endpoint: 'createAccount', applied: true, status: 502 });
    const bad = await fetch(`${harness.baseUrl}/integrations/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': harness.fake.credentials.apiKey ?? '' },
      body: JSON.stringify({ tenantId: harness.fake.credentials.tenantId, name: '' }),
    }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 502 });
    expect(accountsOf(harness)).toEqual([]);
  });
});
