import { describe, expect, test } from 'vitest';
import { FakeCrmCore } from '../../src/testing/index';

/*
 * The fake's request log is bounded by count and by bytes: a fake left running as a shared
 * development server must not grow with every request (60 POSTs of 4 MiB held 362 MiB).
 */

const MiB = 1024 * 1024;

/** A POST of a contact whose name makes the body `bytes` long (the fake refuses it; the log keeps it). */
function post(fake: FakeCrmCore, bytes: number, n: number): Promise<Response> {
  const prefix = JSON.stringify({ tenantId: fake.tenantId, n, name: '' }).slice(0, -3);
  const body = `${prefix}"${'x'.repeat(Math.max(0, bytes - prefix.length - 3))}"}`;
  return fake.handle(
    new Request(`${fake.baseUrl}/integrations/v1/contacts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': String(fake.credentials.apiKey) },
      body,
    }),
  );
}

const get = (fake: FakeCrmCore, n: number) =>
  fake.handle(
    new Request(`${fake.baseUrl}/integrations/v1/contacts?tenantId=${fake.tenantId}&page=${n}`, {
      headers: { 'x-api-key': String(fake.credentials.apiKey) },
    }),
  );

describe('the request log', () => {
  test('keeps the newest maxLoggedRequests requests, drops the oldest first, and says how many it dropped', async () => {
    const fake = new FakeCrmCore({ maxLoggedRequests: 3 });

    for (let n = 1; n <= 5; n++) await get(fake, n);

    expect(fake.requests.map((request) => request.query.page)).toEqual(['3', '4', '5']);
    expect(fake.requests.dropped).toBe(2);
    // The count is no element of the array: it compares and spreads as the requests alone.
    expect([...fake.requests]).toHaveLength(3);
    expect(Object.keys(fake.requests)).toEqual(['0', '1', '2']);
  });

  test('keeps at most maxLoggedBytes of requests, the newest whatever its size', async () => {
    const fake = new FakeCrmCore({ maxLoggedBytes: 3 * MiB });

    for (let n = 1; n <= 8; n++) await post(fake, MiB - 1_000, n);
    const bodies = () => fake.requests.map((request) => (request.body as { n: number }).n);

    expect(bodies()).toEqual([6, 7, 8]);
    expect(fake.requests.dropped).toBe(5);
    await post(fake, 4 * MiB - 1_000, 9);
    expect(bodies()).toEqual([9]);
    expect(fake.requests.dropped).toBe(8);
  });

  test('by default keeps 64 MiB of requests: 20 POSTs of 4 MiB keep the newest 15', async () => {
    const fake = new FakeCrmCore();

    for (let n = 1; n <= 20; n++) await post(fake, 4 * MiB, n);

    expect(fake.requests.map((request) => (request.body as { n: number }).n)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 6),
    );
    expect(fake.requests.dropped).toBe(5);
  });

  test('by default keeps the newest 10,000 requests', async () => {
    const fake = new FakeCrmCore();

    for (let n = 1; n <= 10_050; n++) await get(fake, n);

    expect(fake.requests).toHaveLength(10_000);
    expect(fake.requests[0]?.query.page).toBe('51');
    expect(fake.requests.dropped).toBe(50);
  });

  test('reset() empties the log and its count of dropped requests; a log emptied by hand counts again from nothing', async () => {
    const fake = new FakeCrmCore({ maxLoggedRequests: 2, maxLoggedBytes: 3 * MiB });
    for (let n = 1; n <= 4; n++) await post(fake, MiB - 1_000, n);

    fake.reset();
    expect([fake.requests.length, fake.requests.dropped]).toEqual([0, 0]);
    await post(fake, MiB - 1_000, 5);
    fake.requests.length = 0;
    for (let n = 6; n <= 8; n++) await post(fake, MiB / 2, n);
    expect(fake.requests.map((request) => (request.body as { n: number }).n)).toEqual([7, 8]);
  });

  test('maxLoggedRequests: 0 keeps no request', async () => {
    const fake = new FakeCrmCore({ maxLoggedRequests: 0 });
    await get(fake, 1);
    expect([fake.requests.length, fake.requests.dropped]).toEqual([0, 1]);
  });

  test.each([
    [{ maxLoggedRequests: -1 }, 'maxLoggedRequests must be a whole number, 0 or more, not -1'],
    [{ maxLoggedBytes: 1.5 }, 'maxLoggedBytes must be a whole number, 0 or more, not 1.5'],
    [{ maxLoggedBytes: Number.NaN }, 'maxLoggedBytes must be a whole number, 0 or more, not NaN'],
  ])('refuses %o', (options, message) => {
    expect(() => new FakeCrmCore(options)).toThrow(new RangeError(message));
  });
});
