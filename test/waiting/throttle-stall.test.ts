import { describe, expect, test, vi } from 'vitest';
import { Pacers } from '../../src/internal/waiting/pacer';
import { makeClient } from '../support/capture';
import { contactsServer, created, refused, type Seen, settle, usePacedClock, worstExcess } from '../support/paced';

/*
 * An event loop that stalls (a garbage collection, a machine busy with other work): the fake
 * clock jumps on without running the timers due meanwhile, which then run late, all at once, as
 * a stalled loop runs them (issue 34: 2 s of nothing, then 1,432 refused in one second).
 */
usePacedClock();

/** The loop stalls for `ms`: the clock moves on, and the timers due meanwhile run once it is over. */
const stall = (ms: number) => (setTimeout as unknown as { clock: { jump(ms: number): number } }).clock.jump(ms);

/** A token bucket of `rate` a second holding `burst`, answering 429 with Retry-After when dry. */
function bucket(rate: number, burst: number) {
  let tokens = burst;
  let last = Date.now();
  return (index: number) => {
    const now = Date.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
    last = now;
    if (tokens < 1) return refused(1);
    tokens -= 1;
    return created(index);
  };
}

describe("throttle: 'auto' after the event loop stalls", () => {
  test('a stall during the ramp loses time and never turns into a flood: the ramp goes on from the pace it had', async () => {
    const pacers = new Pacers(undefined);
    const pacer = pacers.of('key', true);
    const given: number[] = [];
    const turns = Array.from({ length: 3000 }, () =>
      pacer.turn(false, undefined, undefined).then((ticket) => {
        given.push(performance.now());
        return ticket;
      }),
    );
    await vi.advanceTimersByTimeAsync(0);
    // The first request's answer: the ramp starts.
    pacer.learned(await (turns[0] as Promise<object>), 200, new Headers(), 60_000);
    await vi.advanceTimersByTimeAsync(200);
    const before = given.filter((at) => at > performance.now() - 100).length;
    const stalledAt = performance.now();
    stall(2000);
    await vi.advanceTimersByTimeAsync(100);

    const after = given.filter((at) => at >= stalledAt + 2000).length;
    // The ramp doubles every 100 ms: the 100 ms after the stall give about twice the 100 ms before
    // it (with the catch-up of a late timer), not the queue (2,9xx at once when the ramp was timed).
    expect(before).toBeGreaterThan(5);
    expect(after).toBeLessThanOrEqual(3 * before);
  });

  test('1,000 creates against a 100/s bucket, the loop stalled 2 s early in the job: few refused, and after the stall no interval of t gets more than burst + rate × t', async () => {
    const seen = contactsServer(bucket(100, 10));
    const crm = makeClient({ throttle: 'auto' });
    const job = Promise.all(Array.from({ length: 1000 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` })));
    job.catch(() => {});
    // Into the ramp, before the first refusal.
    await vi.advanceTimersByTimeAsync(100);
    expect(seen.filter((request) => request.status === 429)).toEqual([]);
    const stalledAt = Date.now();
    stall(2000);
    await settle(job);

    expect(seen.filter((request) => request.status === 200)).toHaveLength(1000);
    const refusals = seen.filter((request) => request.status === 429);
    expect(refusals.length).toBeLessThanOrEqual(50);
    // Once the stall is over and the rate is known (the first refusal's pause is over).
    const known = (refusals.at(0) as Seen).at + 1000;
    const times = seen.filter((request) => request.at >= Math.max(stalledAt + 2000, known)).map((r) => r.at);
    expect(worstExcess(times, 100, 10)).toBeLessThanOrEqual(0);
  }, 60_000);
});
