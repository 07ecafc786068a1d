import { describe, expect, test, vi } from 'vitest';
import { Pacers } from '../../src/internal/waiting/pacer';
import { memoryStore } from '../../src/redis/index';
import { usePacedClock, worstExcess } from '../support/paced';

/*
 * Workers sharing a pace through a store, when the event loop stalls: the fake clock jumps on
 * without running the timers due meanwhile (see test/waiting/throttle-stall.test.ts).
 */
usePacedClock();

const stall = (ms: number) => (setTimeout as unknown as { clock: { jump(ms: number): number } }).clock.jump(ms);
const KEY = 'sk_stall_5d1e2f3a4b5c6d7e8f9a';

describe('a shared pace after the event loop stalls', () => {
  test("workers stalled past their leases do not send the turns left in them on top of the others' leases: after the stall, no interval of t gets more than burst + rate × t", async () => {
    const store = memoryStore();
    // The store knows the key's rate: 200/s (a burst of 20, a tenth of a second of it).
    await store.learn(KEY, 0, { rate: 200, ceiling: 200, quietMs: 30_000 });
    const given: number[] = [];
    for (const pacer of Array.from({ length: 4 }, () => new Pacers(undefined).of(KEY, store))) {
      for (let i = 0; i < 400; i++) {
        void pacer.turn(false, undefined, undefined).then((ticket) => {
          pacer.sent(ticket);
          given.push(performance.now());
          // Every request is accepted at once (the first one's answer lets the others go).
          pacer.learned(ticket, 200, new Headers(), 60_000);
        });
      }
    }
    await vi.advanceTimersByTimeAsync(500);
    const stalledAt = performance.now();
    const before = given.length;
    expect(worstExcess(given, 200, 20)).toBeLessThanOrEqual(0);
    stall(2000);
    await vi.advanceTimersByTimeAsync(1000);

    const after = given.filter((at) => at >= stalledAt + 2000).sort((a, b) => a - b);
    expect(before).toBeGreaterThan(50);
    expect(after.length).toBeGreaterThan(100);
    expect(worstExcess(after, 200, 20)).toBeLessThanOrEqual(0);
  });
});
