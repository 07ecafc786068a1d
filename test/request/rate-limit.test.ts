import { describe, expect, test } from 'vitest';
import { CrmRateLimitError } from '../../src/index';
import { withoutTime } from '../support/fault-clock';
import {
  clientFor,
  expectRepeatedOnceExecutedOnce,
  failure,
  gapAfter,
  OPP_ID,
  OPP_PATH,
  OPPORTUNITY,
  OPPS_PATH,
  reply,
  useFaultServer,
} from '../support/fault-server';

const fault = useFaultServer();

const tooMany = (retryAfter?: string) =>
  reply.jsonError(429, 'Too many requests', retryAfter === undefined ? {} : { 'retry-after': retryAfter });

test('a 429 with Retry-After in seconds is honoured: the retry comes no sooner than asked, and succeeds', async () => {
  fault().script('GET', OPP_PATH, tooMany('1'), reply.ok(OPPORTUNITY));

  const opportunity = await clientFor(fault()).opportunities.get(OPP_ID);

  expect(opportunity).toEqual(OPPORTUNITY);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(2);
  expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(900);
  expect(gapAfter(seen, 0)).toBeLessThan(3_000);
});

test('a 429 with Retry-After as an HTTP date is honoured: the retry does not come before that date', async () => {
  // On a whole second (HTTP dates have no milliseconds), at least 400 ms ahead: further than the
  // 150-300 ms backoff the client would use if it ignored the date.
  const retryAt = Math.ceil((Date.now() + 400) / 1000) * 1000;
  fault().script('GET', OPP_PATH, tooMany(new Date(retryAt).toUTCString()), reply.ok(OPPORTUNITY));

  const opportunity = await clientFor(fault()).opportunities.get(OPP_ID);

  expect(opportunity).toEqual(OPPORTUNITY);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(2);
  expect(seen[1]?.at).toBeGreaterThanOrEqual(retryAt - 20);
  expect(seen[1]?.at).toBeLessThan(retryAt + 2_000);
});

test('a Retry-After longer than maxRetryAfter is shortened to it', async () => {
  fault().script('GET', OPP_PATH, tooMany('3600'), reply.ok(OPPORTUNITY));

  const opportunity = await clientFor(fault(), { maxRetryAfter: 50 }).opportunities.get(OPP_ID);

  expect(opportunity).toEqual(OPPORTUNITY);
  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(2);
  expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(40);
  // Unshortened, an hour: seconds tell the two apart on a busy machine too.
  expect(gapAfter(seen, 0)).toBeLessThan(10_000);
});

test('exhausted retries surface CrmRateLimitError with the server’s Retry-After hint in milliseconds', async () => {
  fault().otherwise('GET', OPP_PATH, tooMany('3600'));

  const { error } = await failure(clientFor(fault(), { maxRetries: 1, maxRetryAfter: 50 }).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmRateLimitError);
  expect((error as CrmRateLimitError).status).toBe(429);
  expect((error as CrmRateLimitError).retryAfterMs).toBe(3_600_000);
  expect((error as CrmRateLimitError).body).toEqual({ success: false, error: { message: 'Too many requests' } });
  expect(fault().received('GET', OPP_PATH)).toHaveLength(2);
});

test('a CrmRateLimitError carries a Retry-After HTTP date as milliseconds from now', async () => {
  const retryAt = Date.now() + 120_000;
  fault().otherwise('GET', OPP_PATH, tooMany(new Date(retryAt).toUTCString()));

  const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));

  expect(error).toBeInstanceOf(CrmRateLimitError);
  const hint = (error as CrmRateLimitError).retryAfterMs;
  expect(hint).toBeGreaterThan(115_000);
  expect(hint).toBeLessThanOrEqual(120_000);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a 429 whose Retry-After outlasts totalTimeout surfaces CrmRateLimitError with the hint, not a timeout', async () => {
  fault().otherwise('GET', OPP_PATH, tooMany('1'));

  const { error, elapsed } = await withoutTime(() =>
    failure(clientFor(fault(), { totalTimeout: 250 }).opportunities.get(OPP_ID)),
  );

  // The server answered: the caller needs its hint to know when to come back.
  expect(error).toBeInstanceOf(CrmRateLimitError);
  expect((error as CrmRateLimitError).retryAfterMs).toBe(1_000);
  expect(elapsed).toBe(0);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

test('a POST answered 429 was not processed: it is repeated and the server executes it once', async () => {
  fault().script('POST', OPPS_PATH, tooMany('0'), reply.ok({ ...OPPORTUNITY, id: 'opp_created' }));

  const created = await clientFor(fault()).opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' });

  expect(created.id).toBe('opp_created');
  expectRepeatedOnceExecutedOnce(fault(), OPPS_PATH);
});

test('a POST answered 429 without Retry-After is also repeated, after a backoff, and executed once', async () => {
  fault().script('POST', OPPS_PATH, tooMany(), reply.ok({ ...OPPORTUNITY, id: 'opp_created' }));

  const created = await clientFor(fault()).opportunities.create({ name: 'Renewal 2027', accountId: 'acc_1' });

  expect(created.id).toBe('opp_created');
  expectRepeatedOnceExecutedOnce(fault(), OPPS_PATH);
});

test('a fractional Retry-After is honoured, rounded up to the next whole second', async () => {
  fault().script('GET', OPP_PATH, tooMany('0.5'), reply.ok(OPPORTUNITY));

  await expect(clientFor(fault()).opportunities.get(OPP_ID)).resolves.toEqual(OPPORTUNITY);

  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(2);
  expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(900);
  expect(gapAfter(seen, 0)).toBeLessThan(3_000);
});

test('X-RateLimit-Reset and RateLimit-Reset, which the spec never mentions, do not set the wait: the usual backoff does', async () => {
  const inAMinute = String(Math.ceil(Date.now() / 1000) + 60);
  fault().script(
    'GET',
    OPP_PATH,
    reply.jsonError(429, 'Too many requests', { 'x-ratelimit-reset': inAMinute, 'ratelimit-reset': '60' }),
    reply.ok(OPPORTUNITY),
  );

  await expect(clientFor(fault()).opportunities.get(OPP_ID)).resolves.toEqual(OPPORTUNITY);

  const seen = fault().received('GET', OPP_PATH);
  expect(seen).toHaveLength(2);
  // The first backoff is 0.3 s, jittered down to no less than half of it.
  expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(100);
  expect(gapAfter(seen, 0)).toBeLessThan(5_000);
});

test('a fractional Retry-After longer than what totalTimeout leaves ends at once with CrmRateLimitError', async () => {
  fault().otherwise('GET', OPP_PATH, tooMany('2.5'));

  const { error, elapsed } = await withoutTime(() =>
    failure(clientFor(fault(), { totalTimeout: 1_000 }).opportunities.get(OPP_ID)),
  );

  expect(error).toBeInstanceOf(CrmRateLimitError);
  expect((error as CrmRateLimitError).retryAfterMs).toBe(2_500);
  expect(elapsed).toBe(0);
  expect(fault().received('GET', OPP_PATH)).toHaveLength(1);
});

for (const value of [`1${'0'.repeat(21)}`, `1${'0'.repeat(400)}`, '99999999999']) {
  test(`a Retry-After of ${value.length} digits outlasting totalTimeout ends at once with CrmRateLimitError`, async () => {
    fault().otherwise('GET', OPP_PATH, reply.jsonError(429, 'slow down', { 'retry-after': value }));
    const { error, elapsed } = await withoutTime(() =>
      failure(clientFor(fault(), { totalTimeout: 2_000 }).opportunities.get(OPP_ID)),
    );
    const seen = fault().received('GET', OPP_PATH).length;
    expect(
      error,
      `${(error as Error).name}: ${(error as Error).message}; requests=${seen}; elapsed=${Math.round(elapsed)}`,
    ).toBeInstanceOf(CrmRateLimitError);
    expect(elapsed, `requests=${seen}`).toBe(0);
  });
}

describe('a Retry-After the SDK cannot read', () => {
  const slowDown = (value: string) => reply.jsonError(429, 'slow down', { 'retry-after': value });
  for (const value of ['-1', '+5', '2 3', '1.5.2']) {
    test(`a Retry-After: ${JSON.stringify(value)} (not seconds, not an HTTP date) is ignored: the usual backoff applies, not a wait of 0`, async () => {
      fault().script('GET', OPP_PATH, slowDown(value), reply.ok(OPPORTUNITY));
      await clientFor(fault()).opportunities.get(OPP_ID);
      const seen = fault().received('GET', OPP_PATH);
      // The usual backoff is >= 150 ms (0.3 s jittered to half at least).
      expect(gapAfter(seen, 0)).toBeGreaterThanOrEqual(100);
    });
  }

  test('a Retry-After: -1 on the error leaves retryAfterMs undefined, not 0', async () => {
    fault().otherwise('GET', OPP_PATH, slowDown('-1'));
    const { error } = await failure(clientFor(fault(), { maxRetries: 0 }).opportunities.get(OPP_ID));
    expect(error).toBeInstanceOf(CrmRateLimitError);
    expect((error as CrmRateLimitError).retryAfterMs).toBeUndefined();
  });
});
