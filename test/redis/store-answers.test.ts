import { describe, expect, test } from 'vitest';
import type { PaceReservation } from '../../src/core/pace-store';
import { checkedReservations } from '../../src/redis/store-answers';

/** An ended phase's reservations as a store of the user's might answer them. */
const phase = (lateMs: unknown): PaceReservation[] => [
  { turn: 0, count: 2, at: 100, intervalMs: 5 },
  { turn: 2, count: 3, at: 110, intervalMs: 5, lateMs } as PaceReservation,
];

describe("a store's reservations of an ended phase", () => {
  test('taken as they are when each says how late its process was, or says nothing', () => {
    expect(checkedReservations(phase(12.5))).toEqual(phase(12.5));
    expect(checkedReservations(phase(0))).toEqual(phase(0));
    expect(checkedReservations(phase(undefined))).toEqual(phase(undefined));
  });

  test.each([
    ['negative', -1],
    ['not a number', Number.NaN],
    ['infinite', Number.POSITIVE_INFINITY],
    ['text', '12'],
    ['null', null],
  ])('refused as a wrong answer when a lateness is %s, whatever the rest', (_, lateMs) => {
    expect(() => checkedReservations(phase(lateMs))).toThrow(
      'The pace store answered refuse() with something else than the reservations of a phase',
    );
  });
});
