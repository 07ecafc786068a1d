import { request } from 'node:http';
import { http, passthrough } from 'msw';
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  createFakeCrm,
  type FakeCrm,
  FakeCrmCore,
  type FakeCrmOptions,
  startFakeCrmServer,
} from '../../src/testing/index';
import { server } from '../support/msw-server';

/*
 * The fake's rate limit (a token bucket per credential) and latency. The clock is injected (or
 * faked with vi.useFakeTimers) so that refills are exact; requests are sent raw with fetch.
 */

const TENANT = 'tenant_demo';
const START = Date.parse('2026-03-01T10:00:00.000Z');

afterEach(() => {
  vi.useRealTimers();
});

/** A clock that moves only when told to. */
function manualClock() {
  let now = START;
  return {
    now: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A fake with the given options, its handlers installed for this test. */
function startFake(options: FakeCrmOptions = {}): FakeCrm {
  const fake = createFakeCrm(options);
  server.use(...fake.handlers);
  return fake;
}

interface Reply {
  status: number;
  retryAfter: string | null;
  body: { success: boolean; error?: { code: string; message: string } };
}

async function reply(response: Response): Promise<Reply> {
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as Reply['body'],
  };
}

/** Creates contact `n` of `tenantId` with `key` (the fake's own key by default). */
async function createContact(
  fake: FakeCrm,
  n: number,
  tenant: { id: string; key: string | null | undefined } = { id: TENANT, key: fake.credentials.apiKey },
) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (tenant.key) headers['x-api-key'] = tenant.key;
  const body = JSON.stringify({ tenantId: tenant.id, email: `c${n}@bulk.test` });
  return reply(await fetch(`${fake.baseUrl}/integrations/v1/contacts`, { method: 'POST', headers, body }));
}

const statuses = async (fake: FakeCrm, count: number) => {
  const out: number[] = [];
  for (let n = 0; n < count; n++) out.push((await createContact(fake, n)).status);
  return out;
};

const emails = (fake: FakeCrm) => [...fake.store.contacts.values()].map((c) => c.email);

describe('a rate-limited fake', () => {
  test('accepts a full bucket of requests at once, then answers 429 RATE_LIMITED with Retry-After', async () => {
    const clock = manualClock();
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 2, burst: 3 } });

    const replies = [];
    for (let n = 0; n < 5; n++) replies.push(await createContact(fake, n));

    expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 429, 429]);
    expect(replies[3]).toEqual({
      status: 429,
      retryAfter: '1',
      body: { success: false, error: { code: 'RATE_LIMITED', message: 'Too many requests: retry after 1 s' } },
    });
    expect(emails(fake)).toEqual(['c0@bulk.test', 'c1@bulk.test', 'c2@bulk.test']);
  });

  test('a refused create changes nothing: no contact, the key not marked as used, and it is logged with status 429', async () => {
    const clock = manualClock();
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 1, burst: 1 } });
    await createContact(fake, 0);
    const tenant = fake.store.tenants.get(TENANT);
    const usedAt = tenant?.keyLastUsedAt;
    clock.advance(500);

    const refused = await createContact(fake, 1);

    expect(refused.status).toBe(429);
    expect(fake.store.contacts.size).toBe(1);
    expect(emails(fake)).toEqual(['c0@bulk.test']);
    expect(tenant?.keyLastUsedAt).toBe(usedAt);
    expect(fake.requests.map((r) => [r.endpoint, r.status, r.receivedAt])).toEqual([
      ['createContact', 201, START],
      ['createContact', 429, START + 500],
    ]);
  });

  test('Retry-After is the whole seconds until a request would be accepted, rounded up', async () => {
    const clock = manualClock();
    // One request every 4 seconds.
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 0.25, burst: 1 } });
    expect((await createContact(fake, 0)).status).toBe(201);

    const waits = [];
    for (const step of [0, 1000, 1500, 1000]) {
      clock.advance(step);
      waits.push((await createContact(fake, 1)).retryAfter);
    }

    // 4 s left, then 3, then 1.5 (rounded up to 2), then 0.5 (rounded up to 1).
    expect(waits).toEqual(['4', '3', '2', '1']);
    clock.advance(500);
    expect((await createContact(fake, 1)).status).toBe(201);
  });

  test('Retry-After is at least 1 even when a token is a millisecond away', async () => {
    const clock = manualClock();
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 1000, burst: 1 } });
    await createContact(fake, 0);

    const refused = await createContact(fake, 1);

    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
  });

  test('the bucket refills at perSecond and holds no more than burst', async () => {
    const clock = manualClock();
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 10, burst: 5 } });
    expect(await statuses(fake, 6)).toEqual([201, 201, 201, 201, 201, 429]);

    clock.advance(100); // one token
    expect(await statuses(fake, 2)).toEqual([201, 429]);

    clock.advance(250); // two and a half
    expect(await statuses(fake, 3)).toEqual([201, 201, 429]);

    clock.advance(60_000); // far more than the bucket holds
    expect(await statuses(fake, 6)).toEqual([201, 201, 201, 201, 201, 429]);
    expect(fake.store.contacts.size).toBe(13);
  });

  test('without an injected clock the bucket refills by Date, so fake timers drive it', async () => {
    vi.useFakeTimers({ now: START, toFake: ['Date'] });
    const fake = startFake({ rateLimit: { perSecond: 1, burst: 1 } });
    expect(await statuses(fake, 2)).toEqual([201, 429]);

    vi.advanceTimersByTime(999);
    expect((await createContact(fake, 2)).status).toBe(429);
    vi.advanceTimersByTime(1);
    expect((await createContact(fake, 3)).status).toBe(201);
    expect(fake.requests.map((r) => r.receivedAt)).toEqual([START, START, START + 999, START + 1000]);
  });

  test('each API key has a bucket of its own: one tenant at its limit does not slow another', async () => {
    const clock = manualClock();
    const fake = startFake({
      now: clock.now,
      rateLimit: { perSecond: 1, burst: 2 },
      tenantId: TENANT,
      seed: { tenants: [{ id: 't2', apiKey: 'k2' }] },
    });
    const other = { id: 't2', key: 'k2' };
    expect(await statuses(fake, 3)).toEqual([201, 201, 429]);

    const replies = [];
    for (let n = 10; n < 13; n++) replies.push((await createContact(fake, n, other)).status);

    expect(replies).toEqual([201, 201, 429]);
    expect(fake.store.contactsOf('t2')).toHaveLength(2);
    expect(fake.store.contactsOf(TENANT)).toHaveLength(2);
  });

  test("a tenant's own rateLimit replaces the fake's for its API key", async () => {
    const clock = manualClock();
    const fake = startFake({
      now: clock.now,
      rateLimit: { perSecond: 1, burst: 1 },
      tenantId: TENANT,
      seed: { tenants: [{ id: 't2', apiKey: 'k2', rateLimit: { perSecond: 1, burst: 3 } }] },
    });
    const other = { id: 't2', key: 'k2' };

    const replies = [];
    for (let n = 0; n < 4; n++) replies.push((await createContact(fake, n, other)).status);

    expect(replies).toEqual([201, 201, 201, 429]);
    expect(await statuses(fake, 2)).toEqual([201, 429]);
  });

  test('a tenant with a rateLimit of its own is limited even when the fake has none', async () => {
    const fake = startFake({ now: manualClock().now });
    fake.store.addTenant({ id: 't2', apiKey: 'k2', rateLimit: { perSecond: 1, burst: 1 } });
    const other = { id: 't2', key: 'k2' };

    expect((await createContact(fake, 0, other)).status).toBe(201);
    expect((await createContact(fake, 1, other)).status).toBe(429);
    expect(await statuses(fake, 3)).toEqual([201, 201, 201]);
  });

  test("the admin endpoints are limited by the bearer token, apart from the tenant's API key", async () => {
    const fake = startFake({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 1 } });
    const status = async () => {
      const headers = { authorization: `Bearer ${fake.adminToken}` };
      return reply(await fetch(`${fake.baseUrl}/integrations/api-key`, { headers }));
    };

    expect((await status()).status).toBe(200);
    const refused = await status();

    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('RATE_LIMITED');
    expect(await statuses(fake, 1)).toEqual([201]);
  });

  test('a request without a credential is not limited: it is answered 401', async () => {
    const fake = startFake({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 1 } });
    const anonymous = { id: TENANT, key: null };

    const replies = [];
    for (let n = 0; n < 3; n++) replies.push((await createContact(fake, n, anonymous)).status);

    expect(replies).toEqual([401, 401, 401]);
    expect(await statuses(fake, 2)).toEqual([201, 429]);
  });

  test('an injected fault is answered before the rate limit and takes no token', async () => {
    const fake = startFake({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 1 } });
    fake.failNext({ status: 503, times: 2 });

    expect(await statuses(fake, 4)).toEqual([503, 503, 201, 429]);
  });

  test('setting fake.rateLimit raises or lowers the limit mid-test; a bucket keeps its tokens, up to the new burst', async () => {
    const clock = manualClock();
    const fake = startFake({ now: clock.now, rateLimit: { perSecond: 1, burst: 1 } });
    expect(await statuses(fake, 2)).toEqual([201, 429]);

    fake.rateLimit = { perSecond: 100, burst: 4 };
    clock.advance(1000); // 100 tokens at the new pace, capped at 4
    expect(await statuses(fake, 5)).toEqual([201, 201, 201, 201, 429]);

    clock.advance(1000);
    expect(await statuses(fake, 1)).toEqual([201]); // refilled to 4 at 100/s; 3 left
    fake.rateLimit = { perSecond: 1, burst: 2 }; // 3 tokens, cut to 2
    expect(await statuses(fake, 3)).toEqual([201, 201, 429]);

    fake.rateLimit = undefined;
    expect(await statuses(fake, 3)).toEqual([201, 201, 201]);
  });

  test('fake.reset() fills every bucket again', async () => {
    const fake = startFake({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 2 } });
    expect(await statuses(fake, 3)).toEqual([201, 201, 429]);

    fake.reset();

    expect(await statuses(fake, 3)).toEqual([201, 201, 429]);
  });

  test.each([
    [{ perSecond: 0, burst: 1 }, 'rateLimit.perSecond must be a finite number above 0, not 0'],
    [{ perSecond: Number.POSITIVE_INFINITY, burst: 1 }, 'rateLimit.perSecond must be a finite number above 0'],
    [{ perSecond: '5', burst: 1 }, 'rateLimit.perSecond must be a finite number above 0, not 5'],
    [{ perSecond: 5, burst: 0 }, 'rateLimit.burst must be a whole number, 1 or more, not 0'],
    [{ perSecond: 5, burst: 1.5 }, 'rateLimit.burst must be a whole number, 1 or more, not 1.5'],
    [{ perSecond: 5 }, 'rateLimit.burst must be a whole number, 1 or more, not undefined'],
  ])('rateLimit %j is refused with a RangeError, by the constructor and the setter', (rateLimit, message) => {
    const limit = rateLimit as never;
    expect(() => new FakeCrmCore({ rateLimit: limit })).toThrow(new RangeError(message).message);
    expect(() => new FakeCrmCore({ rateLimit: limit })).toThrow(RangeError);
    const fake = new FakeCrmCore();
    expect(() => {
      fake.rateLimit = limit;
    }).toThrow(message);
    expect(fake.rateLimit).toBeUndefined();
  });

  test("a tenant's invalid rateLimit is refused with a RangeError naming the tenant", () => {
    const seed = { tenants: [{ id: 't2', apiKey: 'k2', rateLimit: { perSecond: -1, burst: 1 } }] };
    expect(() => new FakeCrmCore({ seed })).toThrow("tenant t2's rateLimit.perSecond must be a finite number above 0");
  });
});

describe('latency', () => {
  const create = (fake: FakeCrmCore, key = fake.credentials.apiKey ?? '') =>
    fake.handle(
      new Request(`${fake.baseUrl}/integrations/v1/contacts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ tenantId: TENANT, email: 'late@bulk.test' }),
      }),
    );

  /** Whether `promise` has settled once pending callbacks have run. */
  async function settled(promise: Promise<unknown>): Promise<boolean> {
    let done = false;
    void promise.then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    return done;
  }

  test('latencyMs delays every answer: a success, an error and a 429', async () => {
    vi.useFakeTimers({ now: START });
    const fake = new FakeCrmCore({ latencyMs: 20, rateLimit: { perSecond: 1, burst: 1 } });
    const answers = [create(fake), create(fake, 'wrong-key'), create(fake)];

    await vi.advanceTimersByTimeAsync(19);
    for (const answer of answers) expect(await settled(answer)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);

    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([201, 401, 429]);
  });

  test('the request is handled when it arrives: the record is stored before its answer is sent', async () => {
    vi.useFakeTimers({ now: START });
    const fake = new FakeCrmCore({ latencyMs: 1000 });

    const answer = create(fake);
    await vi.advanceTimersByTimeAsync(0);

    expect(fake.store.contacts.size).toBe(1);
    expect(fake.requests.map((r) => [r.status, r.receivedAt])).toEqual([[201, START]]);
    expect(await settled(answer)).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await answer).status).toBe(201);
  });

  test.each([-1, Number.NaN, 2 ** 31])('latencyMs %s is refused with a RangeError', (latencyMs) => {
    expect(() => new FakeCrmCore({ latencyMs })).toThrow(RangeError);
  });
});

describe('over real HTTP', () => {
  test('startFakeCrmServer({ rateLimit, latencyMs }) limits and delays what it serves', async () => {
    server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
    const served = await startFakeCrmServer({ rateLimit: { perSecond: 1, burst: 2 }, latencyMs: 30 });
    try {
      const { tenantId, apiKey = '' } = served.fake.credentials;
      const send = () =>
        fetch(`${served.url}/integrations/v1/contacts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
          body: JSON.stringify({ tenantId, email: 'http@bulk.test' }),
        });
      const started = performance.now();
      const answers = await Promise.all([send(), send(), send()]);

      // A lower bound only: the three were delayed, whatever else the machine is doing.
      expect(performance.now() - started).toBeGreaterThanOrEqual(29);
      expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 429]);
      const refused = answers.find((r) => r.status === 429);
      expect(refused?.headers.get('retry-after')).toBe('1');
      expect(await refused?.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
      expect(served.fake.store.contacts.size).toBe(2);
    } finally {
      await served.close();
    }
  });

  test('the server keeps an idle connection open for 60 s, so that a busy bulk client does not reuse one it closed', async () => {
    server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
    const served = await startFakeCrmServer();
    try {
      // node:http, not fetch: fetch hides the connection's own headers.
      const keepAlive = await new Promise((resolve, reject) => {
        request(`${served.url}/integrations/v1/contacts`, (res) => {
          res.resume();
          resolve(res.headers['keep-alive']);
        })
          .on('error', reject)
          .end();
      });
      expect(keepAlive).toBe('timeout=60');
    } finally {
      await served.close();
    }
  });
});
