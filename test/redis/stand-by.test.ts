import { describe, expect, test } from 'vitest';
import type { PaceLease } from '../../src/core/pace-store';
import { rampPace, rampTurns } from '../../src/redis/phase-schedule';
import { NOT_STANDING, STAND_MS, type StandAsk, standBy } from '../../src/redis/stand-by';

/** A lease of a phase started at the store's 10,000 ms, `sinceStart` ms before it was given. */
const lease = (turn: number, sinceStart: number): PaceLease => ({
  phase: 3,
  turn,
  delayMs: 0,
  now: 10_000 + sinceStart,
  startedAt: 10_000,
  learned: undefined,
});

const ask = (over: Partial<StandAsk>): StandAsk => ({
  ramping: true,
  joined: true,
  lease: lease(1, 0),
  othersTook: 0,
  learned: undefined,
  now: 5_000,
  ...over,
});

describe('joining a phase', () => {
  test('a process given the phase first turn ramps: it does not stand by', () => {
    expect(standBy(NOT_STANDING, ask({ lease: lease(0, 0) })).standing).toBe(false);
  });

  test('a process joining a phase another is ramping stands by, and its next ask waits STAND_MS', () => {
    const turns = Math.ceil(rampTurns(undefined, 300));
    const next = standBy(NOT_STANDING, ask({ lease: lease(turns, 300), now: 5_000 }));
    expect(next).toEqual({ standing: true, until: 5_000 + STAND_MS, askedAt: 5_000 });
  });

  test('a process joining a phase whose ramp gave fewer than half its turns by now (an earlier job, long stopped) ramps at once', () => {
    const given = Math.floor(rampTurns(undefined, 2_000) / 2) - 1;
    expect(standBy(NOT_STANDING, ask({ lease: lease(given, 2_000) })).standing).toBe(false);
    expect(standBy(NOT_STANDING, ask({ lease: lease(given + 2, 2_000) })).standing).toBe(true);
  });

  test('a process that would not ramp itself (a rate known, its store failed, or hopeless: not `ramping`) does not stand by', () => {
    expect(standBy(NOT_STANDING, ask({ ramping: false, lease: lease(50, 300) })).standing).toBe(false);
  });
});

describe('standing by in a phase', () => {
  const standing = standBy(NOT_STANDING, ask({ lease: lease(20, 300), now: 5_000 }));
  // Between this ask and the last, STAND_MS; the ramp's pace at the turn of the last ask.
  const half = (turn: number, othersTook: number) => (rampPace(undefined, turn - othersTook) * STAND_MS) / 1000 / 2;

  test('the process of these tests stands by after its first lease', () => {
    expect(standing.standing).toBe(true);
  });

  test('a process goes on standing by while the others took at least half the turns the ramp gives since its last ask', () => {
    const othersTook = 39;
    expect(othersTook).toBeGreaterThanOrEqual(half(60, othersTook));
    const next = standBy(standing, ask({ joined: false, lease: lease(60, 700), othersTook, now: 5_000 + STAND_MS }));
    expect(next).toEqual({ standing: true, until: 5_000 + 2 * STAND_MS, askedAt: 5_000 + STAND_MS });
  });

  test('a process standing by ramps once the others took fewer than half the turns the ramp gives (the ramping one stopped)', () => {
    const othersTook = 1;
    expect(half(22, othersTook)).toBeGreaterThan(othersTook);
    const next = standBy(standing, ask({ joined: false, lease: lease(22, 700), othersTook, now: 5_000 + STAND_MS }));
    expect(next.standing).toBe(false);
    expect(next.askedAt).toBe(5_000 + STAND_MS);
  });

  test('a process standing by ramps once a rate is known', () => {
    const next = standBy(
      standing,
      ask({ ramping: false, joined: false, lease: lease(60, 700), othersTook: 39, now: 5_400 }),
    );
    expect(next.standing).toBe(false);
  });

  test('a process that ramps in a phase does not start standing by in it', () => {
    const ramping = standBy(NOT_STANDING, ask({ lease: lease(0, 0) }));
    const next = standBy(ramping, ask({ joined: false, lease: lease(40, 700), othersTook: 0, now: 5_400 }));
    expect(next.standing).toBe(false);
  });
});
