import { describe, expect, test, vi } from 'vitest';
import type { PaceLearned } from '../../src/core/pace-store';
import { Pacers, type Ticket } from '../../src/internal/waiting/pacer';
import { memoryStore, sharedPaceStore } from '../../src/redis/index';
import { bucket, usePacedClock } from '../support/paced';

/*
 * A phase paced at a rate known, refused after a few turns whose outcomes bound the rate from
 * above only: its first accepted, the next ones refused (the bucket emptied by requests the phase
 * does not see). On the fake clock, one worker, its answers given by hand.
 */
usePacedClock();

const KEY = 'sk_few_0a1b2c3d4e5f60718293';

describe('a shared pace refused after a few turns', () => {
  test('the rate it learns from them falls to half the pace of the phase at most, and the pace climbs back within seconds, not 30', async () => {
    const inner = memoryStore();
    await inner.learn(KEY, 0, { rate: 20, ceiling: 20, quietMs: 30_000 });
    const told: PaceLearned[] = [];
    const store = sharedPaceStore({
      reserve: (key: string, count: number, intervalMs: number) => inner.reserve(key, count, intervalMs),
      refuse: (key: string, phase: number, turn: number, pauseMs: number) => inner.refuse(key, phase, turn, pauseMs),
      learn: (key: string, phase: number, learned: PaceLearned) => {
        told.push(learned);
        return inner.learn(key, phase, learned);
      },
    });
    const pacer = new Pacers(undefined).of(KEY, store);
    const sent: Ticket[] = [];
    for (let i = 0; i < 400; i++)
      void pacer.turn(false, undefined, undefined).then((ticket) => {
        pacer.sent(ticket);
        sent.push(ticket);
      });
    const answer = (i: number, status: number) =>
      pacer.learned(sent[i] as Ticket, status, new Headers(status === 429 ? { 'retry-after': '1' } : {}), 60_000);
    // The phase's first turn (the probe) is accepted; then turns at the pace of 20/s.
    await vi.advanceTimersByTimeAsync(0);
    answer(0, 201);
    while (sent.length < 3) await vi.advanceTimersByTimeAsync(1);
    // The third turn's refusal is heard first (it ends the phase); the second's a little later.
    answer(2, 429);
    await vi.advanceTimersByTimeAsync(20);
    answer(1, 429);
    await vi.advanceTimersByTimeAsync(20);

    // What the phase's outcomes, all heard, tell the store. From them alone, the rate lies anywhere
    // below 1 / 50 ms: their middle was 1/s, kept for 30 s (W6 at 20/s: 1.2/s for 75 s).
    const learned = told[told.length - 1];
    expect(learned?.rate).toBeGreaterThanOrEqual(9.5);
    expect(learned?.quietMs).toBeLessThanOrEqual(3000);
    // Then a bucket of 20/s (a burst of 2) answers every request as it goes: over the 8 s after
    // the pause, the pace is near it again (1/s before: 8 accepted).
    const take = bucket(20, 2);
    let answered = 3;
    let accepted = 0;
    for (let ms = 0; ms < 9000; ms += 5) {
      while (answered < sent.length) {
        const ok = take();
        if (ok) accepted++;
        answer(answered++, ok ? 201 : 429);
      }
      await vi.advanceTimersByTimeAsync(5);
    }
    expect(accepted).toBeGreaterThanOrEqual(100);
  });
});
