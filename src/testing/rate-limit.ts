/**
 * A rate limit of the fake: a token bucket per credential. The bucket holds `burst` requests and
 * starts full; every request takes one, and it refills at `perSecond`. A request that finds it
 * empty is answered 429 with `Retry-After`, and takes nothing.
 *
 * @example
 * ```ts
 * const fake = createFakeCrm({ rateLimit: { perSecond: 200, burst: 20 } });
 * ```
 */
export interface FakeRateLimit {
  /** How fast the bucket refills: requests per second, on average. More than 0; fractions allowed (0.5 is one every 2 s). */
  readonly perSecond: number;
  /** How many requests the bucket holds, and so how many it accepts at once after a quiet spell: a whole number, 1 or more. */
  readonly burst: number;
}

/** Throws a RangeError naming `what` unless `limit` is a rate limit the fake can apply. */
export function checkRateLimit(limit: FakeRateLimit | undefined, what: string): void {
  if (limit === undefined) return;
  const { perSecond, burst } = limit as { perSecond: unknown; burst: unknown };
  if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond <= 0) {
    throw new RangeError(`${what}.perSecond must be a finite number above 0, not ${String(perSecond)}`);
  }
  if (typeof burst !== 'number' || !Number.isSafeInteger(burst) || burst < 1) {
    throw new RangeError(`${what}.burst must be a whole number, 1 or more, not ${String(burst)}`);
  }
}

/** One credential's bucket: the tokens it held when last read, and when that was (ms, the fake's clock). */
export interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Takes a token from `bucket` at time `now` (ms). Returns 0 when it took one, else the whole
 * seconds until one is there (at least 1), for `Retry-After`.
 */
export function take(bucket: Bucket, limit: FakeRateLimit, now: number): number {
  // A clock that steps back refills nothing, and does not move `at` back (which would refill twice).
  if (now > bucket.at) {
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) * limit.perSecond) / 1000);
    bucket.at = now;
  }
  // A limit lowered mid-test leaves a bucket fuller than its new size.
  if (bucket.tokens > limit.burst) bucket.tokens = limit.burst;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  // The epsilon keeps float error (0.9999999 of a token short by 1e-13) from adding a second.
  return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond - 1e-9));
}
