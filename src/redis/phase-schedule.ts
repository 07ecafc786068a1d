// Every process sharing a key places the turns of a phase by the same rule, from the same numbers
// (the phase's start on the store's clock, a turn's number, the pace learned): so their sends
// interleave rather than pile onto the server. That rule is arithmetic on those numbers alone, kept
// here apart from the pacer's state, so that it reads as the one rule every process follows.
import { climbed, RAMP_START } from '../internal/waiting/pacer';
import type { Learned } from './learned-pace';

/**
 * A lease spans about this long, so that a shared store is asked once for several turns, and
 * holds at most LEASE_MAX of them (LEASE_RAMP while no rate is known: the ramp overshoots the
 * bucket, and the turns a lease holds go out whatever another process's refusal said meanwhile).
 */
export const LEASE_MS = 50;
export const LEASE_MAX = 10;
export const LEASE_RAMP = 2;
/**
 * Until a rate is known, the pace rises by this much (requests a second) with each turn the phase
 * has given: a ramp that doubles every SHARED_RAMP_MS, counted in turns rather than in time (the
 * pace after n turns of r0 * 2^(t / T) is r0 + n * ln 2 / T). Timed from each process's first
 * answer, four workers starting together filled the shared schedule's first 160 ms at the ramp's
 * start, one lease after another. Slower than the pacer's RAMP_MS: the sends of several processes
 * starting a job reach the server with more jitter, and a slower rise past the rate gives the
 * phase more time to measure it (the first rate of a 200/s bucket over four workers came out
 * between 191 and 206 in 13 runs of W6 with RAMP_MS, between 198 and 202 in 5 with this).
 */
const SHARED_RAMP_MS = 150;
/**
 * How many turns a phase may have given before this process's first in it, as far as its ramp
 * counts them: the workers of a job each ask once as it starts (turns 0, 1, 2...).
 */
const JOINED = 20;
const RAMP_STEP = (Math.LN2 * 1000) / SHARED_RAMP_MS;

/**
 * The pace now, in requests a second, from what was learned; `known`: the phase's turns given as of
 * the last lease, `firstTurn`: the first of them this process was given, `othersTook`: how many the
 * others took between its last two leases.
 */
export function phasePace(
  hopeless: boolean,
  learned: Learned | undefined,
  known: number,
  firstTurn: number,
  othersTook: number,
): number {
  // Refused whatever the pace: the calls go out together after each pause, to fail the sooner.
  if (hopeless) return Number.POSITIVE_INFINITY;
  if (learned?.rate === undefined) {
    // The turns before this process's first in the phase count up to JOINED of them: the ramp's
    // first turns are the workers' asks, but a store numbering its turns from far above 0
    // (against its contract) must not start the ramp at thousands a second.
    const turns = known - Math.max(0, firstTurn - JOINED) + othersTook;
    return (learned?.ramp ?? RAMP_START) + turns * RAMP_STEP;
  }
  // The quiet time it climbs by is the time the phase's turns took at the rate, the same for every
  // process: a key's idle time is not quiet, it says nothing of the limit. (Counted by the clock
  // from when the rate was learned, four workers whose key had been idle ten minutes sent their
  // next job's 400 calls within 100 ms, 380 over a bucket of 20 at 200/s.)
  return climbed(learned.rate, learned.ceiling ?? learned.rate, (known * 1000) / learned.rate, learned.quietMs);
}

/**
 * When turn `turn` of a phase started at `start` goes, reserved for `scheduled`, at `pace`
 * (see SharedPacer's #take); `hopeless` and `learned`: the pacer's.
 */
export function dueAt(
  scheduled: number,
  start: number,
  turn: number,
  pace: number,
  hopeless: boolean,
  learned: Learned | undefined,
): number {
  // On the ramp, bounded at the ramp's pace for that turn, which every process reads alike: a
  // process standing by (stand-by.ts) paces slower than the one ramping, and bounded at its own
  // pace, its asks went 20 to 30 ms away from where the finder of the rate placed them.
  const bound = learned?.rate === undefined && !hopeless ? rampPace(learned, turn) : pace;
  return Math.min(
    Math.max(scheduled, start + sinceStart(turn, pace, hopeless, learned)),
    scheduled + (LEASE_MAX * 1000) / bound,
  );
}

/** The ramp's pace (requests a second) at turn `turn` of a phase, while no rate is known: the same in every process. */
export const rampPace = (learned: Learned | undefined, turn: number): number =>
  (learned?.ramp ?? RAMP_START) + turn * RAMP_STEP;

/**
 * How many turns the ramp gives in the first `ms` of a phase, while no rate is known (the inverse
 * of sinceStart()): what a phase that is being ramped has given by then.
 */
export const rampTurns = (learned: Learned | undefined, ms: number): number =>
  ((learned?.ramp ?? RAMP_START) * Math.expm1((Math.max(0, ms) * RAMP_STEP) / 1000)) / RAMP_STEP;

/** How long after a phase's start (ms) its turn `turn` may go, at `pace` (a rate learned), or at the ramp's. */
function sinceStart(turn: number, pace: number, hopeless: boolean, learned: Learned | undefined): number {
  if (hopeless) return 0;
  if (learned?.rate !== undefined) return (turn * 1000) / pace;
  // The ramp, r0 + n * RAMP_STEP after n turns, gives n turns in ln(1 + n * RAMP_STEP / r0) / RAMP_STEP s.
  const start = learned?.ramp ?? RAMP_START;
  return (1000 * Math.log1p((turn * RAMP_STEP) / start)) / RAMP_STEP;
}
