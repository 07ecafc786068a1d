// A store of the user's may answer anything (a foreign value, a clock stepped back, a bug), and the
// pacer must not pace by what no server's answers could have set: each answer is checked here, apart
// from the pacer, so that what a store may answer is read in one place, against the contract of
// src/core/pace-store.ts, and a wrong answer becomes a failure of the store like any other.
import type { PaceLearned, PaceLease, PaceReservation } from '../core/pace-store';
import { QUIET_TIMES, RATES } from '../internal/waiting/pacer';

/** The longest wait a timer can take: a store's longer one is a wrong answer, not a pause. */
export const DELAY_MAX = 2_147_483_647;
/** How far ahead of the store's own clock what it learned may be stamped (clocks of a cluster's nodes). */
const SKEW_MS = 1000;

/**
 * A store's lease, if it is one that a server's answers could justify (a store of the user's may
 * answer anything): its first turn within `longestMs`, the rates it learned among those rateOf()
 * finds, learned no later than its own now. Anything else is a failure of the store, refused.
 */
export function checkedLease(lease: PaceLease, longestMs: number): PaceLease {
  const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
  const whole = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
  if (
    typeof lease !== 'object' ||
    lease === null ||
    !whole(lease.phase) ||
    !whole(lease.turn) ||
    !finite(lease.now) ||
    !finite(lease.startedAt) ||
    !finite(lease.delayMs) ||
    lease.delayMs < 0
  ) {
    throw new TypeError('The pace store answered reserve() with something else than a lease');
  }
  if (lease.delayMs > Math.min(longestMs, DELAY_MAX)) {
    throw new TypeError(
      `The pace store asked for a wait of ${Math.round(lease.delayMs)} ms before the next turn, longer than maxRetryAfter allows`,
    );
  }
  const { learned } = lease;
  if (learned === undefined) return lease;
  if (
    typeof learned !== 'object' ||
    learned === null ||
    !finite(learned.at) ||
    learned.at > lease.now + SKEW_MS ||
    (learned.base !== undefined && typeof learned.base !== 'string') ||
    (learned.refusals !== undefined && !whole(learned.refusals))
  ) {
    throw new TypeError('The pace store answered reserve() with something else than what was learned');
  }
  const within = (name: keyof PaceLearned, { least, most }: { least: number; most: number }) => {
    const value = learned[name];
    if (value === undefined || value === null) return undefined;
    if (!finite(value) || value < least || value > most) {
      throw new TypeError(`The pace store answered reserve() with a ${name} no server's answers could set`);
    }
    return value;
  };
  return {
    ...lease,
    learned: {
      rate: within('rate', RATES),
      ceiling: within('ceiling', RATES),
      ramp: within('ramp', RATES),
      quietMs: within('quietMs', QUIET_TIMES),
      base: learned.base,
      refusals: learned.refusals,
      at: learned.at,
    },
  };
}

/** A store's reservations of an ended phase, if they are such (undefined: not ended by this refusal). */
export function checkedReservations(
  reservations: readonly PaceReservation[] | undefined,
): readonly PaceReservation[] | undefined {
  if (reservations === undefined || reservations === null) return undefined;
  const ok =
    Array.isArray(reservations) &&
    reservations.every(
      (r: PaceReservation) =>
        Number.isSafeInteger(r?.turn) &&
        r.turn >= 0 &&
        Number.isSafeInteger(r.count) &&
        r.count >= 1 &&
        r.turn + r.count <= 100_000 &&
        Number.isFinite(r.at) &&
        Number.isFinite(r.intervalMs) &&
        r.intervalMs >= 0 &&
        (r.lateMs === undefined || (Number.isFinite(r.lateMs) && r.lateMs >= 0)),
    );
  if (!ok) throw new TypeError('The pace store answered refuse() with something else than the reservations of a phase');
  return reservations;
}
