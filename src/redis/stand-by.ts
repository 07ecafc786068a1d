import type { PaceLease } from '../core/pace-store';
import type { Learned } from './learned-pace';
import { rampPace, rampTurns } from './phase-schedule';

/**
 * How long a process stands by between its asks while another ramps alone. Its asks are requests
 * too, which the finder of the rate places by their schedule: fewer of them, fewer to misplace.
 * (Every 100 ms, one worker 40 ms late among three 5 ms late found 207/s of 200 when a standing
 * worker's refusal ended the ramp; every 250 ms, 193.5/s when the ramping one's did.) It is also
 * how long a ramping process whose turns stopped holds the others up.
 */
export const STAND_MS = 400;

/**
 * Whether a process stands by while another ramps: no rate is known, and another process was given
 * the phase's first turn. It then asks for one turn every STAND_MS, until a rate is known or an ask
 * finds that the ramp fell behind (the ramping process has too few calls, or stopped). (Four
 * workers ramping together, the one whose refusal ended the ramp placed the others' requests by
 * their schedule, 15 to 106 ms before they reached the server on W8's busy machine: 203 to 220/s
 * found of a 200/s bucket, a second refusal and pause. One process finds the rate from when its
 * own requests went.)
 */
export interface StandBy {
  readonly standing: boolean;
  /** Until when (this process's clock, ms) its next ask waits, while it stands by. */
  readonly until: number;
  /** When it last asked (this process's clock, ms). */
  readonly askedAt: number;
}

export const NOT_STANDING: StandBy = { standing: false, until: 0, askedAt: 0 };

/** What a lease just taken tells: see standBy(). */
export interface StandAsk {
  /** Whether this process would ramp: a store shared, no rate known, not hopeless. */
  readonly ramping: boolean;
  /** Whether the lease is of a phase this process did not know (it joins it). */
  readonly joined: boolean;
  readonly lease: PaceLease;
  /** The turns the others took between this process's last two leases. */
  readonly othersTook: number;
  readonly learned: Learned | undefined;
  /** This process's clock (ms) as the lease came. */
  readonly now: number;
}

/** Whether a process stands by after the lease of `ask`, having stood by as `was` says. */
export function standBy(was: StandBy, { ramping, joined, lease, othersTook, learned, now }: StandAsk): StandBy {
  let { standing } = was;
  // Joining a phase: another process has its first turn, and is ramping now if the phase has given
  // half the turns the ramp gives by now, at least. (A phase an earlier job left with no refusal,
  // its ramp long stopped: standing by, each small job's first requests after the first waited
  // STAND_MS.)
  if (joined) {
    standing = ramping && lease.turn !== 0 && lease.turn >= rampTurns(learned, lease.now - lease.startedAt) / 2;
  } else if (standing) {
    // The turns the ramp gave others since this process's last ask, against half of what the
    // ramp's pace at the turn of that ask gives in the time since. (Against this process's own
    // pace, which counts those turns again, every process standing by stopped halfway up the
    // ramp.) Fewer, the ramping process has stopped taking turns: this one ramps too.
    const expected = (rampPace(learned, lease.turn - othersTook) * (now - was.askedAt)) / 1000;
    standing = ramping && othersTook >= expected / 2;
  }
  return { standing, until: standing ? now + STAND_MS : was.until, askedAt: now };
}
