import { describe, expect, it } from 'vitest';
import { sideEffectsOf } from '../../src/core/errors';
import { type Attempted, decide, type Tries } from '../../src/internal/retry/decide';

const answer = (method: string, status: number, retryAfterMs?: number): Attempted => ({
  method,
  status,
  retryAfter: retryAfterMs !== undefined,
  retryAfterMs,
  sideEffects: sideEffectsOf({ status, retryAfter: retryAfterMs !== undefined }),
});
const failed = (method: string, how: 'timeout' | 'network' | 'other', cause?: unknown): Attempted => ({
  method,
  status: undefined,
  failed: how,
  retryAfter: false,
  retryAfterMs: undefined,
  sideEffects: sideEffectsOf({ status: undefined, cause }),
});
const refusedConnection = Object.assign(new TypeError('fetch failed'), {
  cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
});
const fresh: Tries = {
  retries: 0,
  refusals: 0,
  maxRetries: 2,
  maxRetryAfter: 60_000,
  msLeft: undefined,
  paced: undefined,
};
// The middle of the jitter: half the backoff kept, plus half of the other half.
const half = () => 0.5;

describe('the retry decision', () => {
  it.each([
    ['GET', 500],
    ['GET', 502],
    ['GET', 503],
    ['GET', 504],
    ['GET', 408],
    ['GET', 429],
    ['PUT', 500],
    ['DELETE', 503],
  ])('retries %s answered %i after the backoff', (method, status) => {
    expect(decide(answer(method, status), fresh, half)).toEqual({ retry: true, waitMs: 225, refusal: false });
  });

  it.each([400, 401, 403, 404, 409, 422, 301, 200])('does not retry a GET answered %i', (status) => {
    expect(decide(answer('GET', status), fresh, half)).toEqual({ retry: false });
  });

  it.each([
    ['POST', 500],
    ['POST', 502],
    ['POST', 503],
    ['POST', 408],
    ['PATCH', 500],
  ])('never repeats a %s answered %i: the server may have acted', (method, status) => {
    expect(decide(answer(method, status), fresh, half)).toEqual({ retry: false });
  });

  it('repeats a POST refused with 429 or with 503 and Retry-After: the server proves it did not act', () => {
    expect(decide(answer('POST', 429), fresh, half)).toEqual({ retry: true, waitMs: 225, refusal: false });
    expect(decide(answer('POST', 503, 2000), fresh, half)).toEqual({ retry: true, waitMs: 2000, refusal: false });
  });

  it.each([
    ['timeout', true],
    ['network', true],
    ['other', false],
  ] as const)('retries a GET whose attempt failed by %s: %s', (how, retried) => {
    expect(decide(failed('GET', how), fresh, half).retry).toBe(retried);
  });

  it('never repeats a POST whose attempt timed out or lost its connection', () => {
    expect(decide(failed('POST', 'timeout'), fresh, half)).toEqual({ retry: false });
    expect(decide(failed('POST', 'network'), fresh, half)).toEqual({ retry: false });
  });

  it('repeats a POST whose connection never opened, after the backoff: nothing of it was sent', () => {
    expect(decide(failed('POST', 'network', refusedConnection), fresh, half)).toEqual({
      retry: true,
      waitMs: 225,
      refusal: false,
    });
  });

  it('does not repeat a POST answered 408: it did nothing, but the server did not ask for it again', () => {
    expect(decide(answer('POST', 408), fresh, half)).toEqual({ retry: false });
  });

  it('doubles the backoff per retry, up to 8 s, keeping between half and all of it', () => {
    const waits = [0, 1, 2, 3, 4, 5, 6].map((retries) => {
      const decision = decide(answer('GET', 500), { ...fresh, retries, maxRetries: 10 }, () => 1);
      return decision.retry ? decision.waitMs : undefined;
    });
    expect(waits).toEqual([300, 600, 1200, 2400, 4800, 8000, 8000]);
    const least = decide(answer('GET', 500), fresh, () => 0);
    expect(least).toEqual({ retry: true, waitMs: 150, refusal: false });
  });

  it('waits what Retry-After says on a 429 or a 503, a fraction rounded up to the second, at most maxRetryAfter', () => {
    expect(decide(answer('GET', 429, 1200), fresh, half)).toMatchObject({ waitMs: 2000 });
    expect(decide(answer('GET', 503, 0), fresh, half)).toMatchObject({ waitMs: 0 });
    expect(decide(answer('GET', 429, 90_000), fresh, half)).toMatchObject({ waitMs: 60_000 });
    expect(decide(answer('GET', 429, 5000), { ...fresh, maxRetryAfter: 1500 }, half)).toMatchObject({ waitMs: 1500 });
  });

  it('ignores Retry-After on a status that is not a refusal', () => {
    expect(decide(answer('GET', 500, 9000), fresh, half)).toMatchObject({ waitMs: 225 });
  });

  it('stops when its retries are used up', () => {
    expect(decide(answer('GET', 500), { ...fresh, retries: 2 }, half)).toEqual({ retry: false });
    expect(decide(answer('GET', 500), { ...fresh, maxRetries: 0 }, half)).toEqual({ retry: false });
  });

  it('stops at once when the server asks for a wait that totalTimeout cannot afford', () => {
    expect(decide(answer('GET', 429, 5000), { ...fresh, msLeft: 4000 }, half)).toEqual({ retry: false });
    expect(decide(answer('GET', 429, 3000), { ...fresh, msLeft: 4000 }, half)).toMatchObject({ retry: true });
  });

  it("waits out a paced call's refusal at its key's pace, without using up maxRetries", () => {
    const paced = { ...fresh, paced: { waitsOut: true } };
    expect(decide(answer('POST', 429, 1000), paced, half)).toEqual({ retry: true, waitMs: 0, refusal: true });
    expect(decide(answer('POST', 429), { ...paced, retries: 5, refusals: 5 }, half)).toMatchObject({ refusal: true });
    // Its other retries count as usual: two used beside the refusals.
    expect(decide(answer('GET', 500), { ...paced, retries: 7, refusals: 5 }, half)).toEqual({ retry: false });
  });

  it('bounds the refusals a paced call waits out', () => {
    const paced = { ...fresh, paced: { waitsOut: true } };
    expect(decide(answer('GET', 429), { ...paced, retries: 22, refusals: 22 }, half)).toEqual({ retry: false });
  });

  it("counts the refusals its pacer does not wait out (a key refused whatever its pace, a barren phase's later requests), as without a pacer", () => {
    const hopeless = { ...fresh, retries: 2, paced: { waitsOut: false } };
    expect(decide(answer('GET', 429), hopeless, half)).toEqual({ retry: false });
  });
});

describe('a create redirected to a GET', () => {
  it('is not repeated when the GET is refused: the redirect says the create was acted on', () => {
    // The transport classifies a redirect to a GET as having acted, whatever the GET came to.
    const refusedGet = { ...answer('POST', 429, 0), sideEffects: 'unknown' as const };
    expect(decide(refusedGet, fresh, half)).toEqual({ retry: false });
    expect(decide({ ...answer('POST', 503, 0), sideEffects: 'unknown' }, fresh, half)).toEqual({ retry: false });
    expect(decide(refusedGet, { ...fresh, paced: { waitsOut: true } }, half)).toEqual({ retry: false });
  });

  it('a GET or PUT redirected is retried as before', () => {
    expect(decide({ ...answer('PUT', 500), sideEffects: 'unknown' }, fresh, half)).toEqual({
      retry: true,
      waitMs: 225,
      refusal: false,
    });
  });
});
