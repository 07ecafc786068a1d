// Finding a phase's rate is a measurement: what one process heard of its own requests, and what
// the store kept of the others' reservations, whose sends it never saw. Its corrections (a busy
// machine's lateness, the turns' order in time, outcomes that bound the rate from one side only)
// each came from a workload that measured wrong; they are kept here, apart from the pacer, which
// only decides when a rate is found and whom it is told to.
import type { PaceLearned, PaceReservation, PaceStore } from '../core/pace-store';
import { RAMP_START, rateOf, UNKNOWN } from '../internal/waiting/pacer';
import type { Learned } from './learned-pace';

/** A rate found this far below the pace of the phase that found it corrects that pace (see phaseRate). */
const CORRECTED = 0.97;
/** The least share of its pace that a phase paced at a rate known may set the rate to (see phaseRate). */
const FALLS_TO = 0.5;

/** A phase this pacer's refusal ended, still hearing from the requests it had on their way. */
export interface Ended {
  readonly store: PaceStore;
  readonly phase: number;
  readonly reservations: readonly PaceReservation[];
  /** What became of this process's turns of the phase. */
  readonly outcomes: Map<number, number>;
  /** When this process's turns of the phase went (the store's clock): truer than their schedule on a busy machine. */
  readonly sent: Map<number, number>;
  readonly dry: number;
  /**
   * How late this process's requests were going when its refusal ended the phase, measured as it
   * tells the store with its leases (`reserve()`'s `lateMs`); undefined before it has sent enough.
   */
  readonly lateMs: number | undefined;
}

/** Whether a reservation's turns are ones a store could give: a wrong answer (a turn far out, a count of millions) is not a loop to run. */
const reasonable = (turn: number, count: number): boolean => turn >= 0 && turn + count <= 100_000;

/**
 * The rate of a phase this pacer's refusal ended, from what it has heard of the phase's requests so
 * far. `pace` and `dueOf`: the pacer's pace now and its schedule (SharedPacer's #due), by which the
 * others' turns went as well; `last`: what the pacer had learned before.
 */
export function phaseRate(
  ended: Ended,
  pace: number,
  last: Learned | undefined,
  dueOf: (scheduled: number, start: number, turn: number, pace: number) => number,
): PaceLearned {
  const { reservations, outcomes, sent, dry } = ended;
  const times: number[] = [];
  /** How late each of this process's turns of the phase went after its schedule. */
  const late: number[] = [];
  let paceAtDry = Number.POSITIVE_INFINITY;
  const start = reservations[0]?.turn === 0 ? reservations[0].at : Number.NEGATIVE_INFINITY;
  try {
    for (const { turn, count, at, intervalMs } of reservations) {
      if (!reasonable(turn, count)) break;
      for (let i = 0; i < count; i++) {
        const due = dueOf(at, start, turn, pace) + i * Math.max(intervalMs, 1000 / pace);
        const went = sent.get(turn + i);
        if (went !== undefined) late.push(went - due);
        times[turn + i] = went ?? due;
      }
      if (dry >= turn && dry < turn + count) paceAtDry = 1000 / intervalMs;
    }
  } catch {}
  let complete = times.length > dry;
  for (let i = 0; complete && i <= dry; i++) complete = Number.isFinite(times[i]);
  let learned: PaceLearned;
  if (complete && dry >= 2) {
    const phase = inTimeOrder(times, sent, laterThanThis(ended), outcomes, dry, lateness(late));
    const found = rateOf(phase.times, phase.heard, phase.dry, last?.rate !== undefined);
    // Refused within a few turns of a phase paced at a known rate, rateOf() takes the refusal for
    // a whim (another client's) and soon searches past what it found. Found well below the
    // phase's own pace, though, the refusal says that pace was too fast, and the rate rests on
    // the outcomes: searching past it a second or two later cost a 20/s job one more pause of a
    // second, every time (W6 at 20/s: a rate found from the ramp at 23/s, then 20/s at the
    // next refusal, then 22/s a second after it).
    const corrected = found.rate < pace * CORRECTED ? rateOf(phase.times, phase.heard, phase.dry, false) : found;
    learned = corrected;
    if (last?.rate !== undefined && corrected.rate < pace * FALLS_TO) {
      // Outcomes that bound the rate from above only (the first turn accepted, the next ones
      // refused: the bucket emptied by requests the phase does not see) leave it anywhere below
      // that bound, and their middle falls towards the least rate: 1/s from a phase paced at
      // 20/s, kept for 30 s (W6 at 20/s held 1.2/s for 75 s in 2 rounds of 10). A phase paced
      // at a rate known falls to half its pace at most, climbing back as a phase of its turns
      // allows (a few turns: within seconds); a limit that did fall that far is found by halves.
      const rate = pace * FALLS_TO;
      learned = { rate, ceiling: rate, quietMs: found.quietMs };
    }
  } else if (last?.rate !== undefined) {
    // Dry at its first turns, the bucket was empty before the phase (another client of the key):
    // that tells nothing of its rate. The pace climbs again from the rate known, not past this one.
    learned = {
      rate: last.rate,
      ceiling: Math.max(last.rate, Math.min(last.ceiling ?? last.rate, paceAtDry)),
      quietMs: last.quietMs,
    };
  } else {
    learned = { ramp: Math.max(1, (last?.ramp ?? RAMP_START) / 4) };
  }
  return learned;
}

/**
 * The middle of `late` (sorted in place), from 0 to LATE_MOST: how late a process's requests went
 * after their turns, as the finder measures its own and each process tells the store
 * (shared-pacer.ts). Taken for how late the other processes' turns went, where they did not tell. A busy machine (a journal's work between a turn
 * and its send, a lease's answer read late) sent each of them 15 to 45 ms after its schedule in
 * W8; the others' turns, taken as sent on schedule, then went before this one's that ran the
 * bucket dry, and the rate found was half the bucket's (106/s of 200), kept for 30 s.
 */
export function lateness(late: number[]): number {
  if (late.length === 0) return 0;
  const sorted = late.sort((a, b) => a - b);
  return Math.min(LATE_MOST, Math.max(0, sorted[Math.floor((sorted.length - 1) / 2)] as number));
}
/** The most lateness taken for the others' turns: a stall is not a pace. */
const LATE_MOST = 100;

/**
 * By turn, how much later than this process's the other processes' requests went, from what each
 * told the store with its reservations (`lateMs`) against what this one told nearest in turns:
 * both measured alike (the middle of a process's last requests' lateness, before a lease), about
 * the same time, so that what differs is the process, not the machine's moment. (Taken as late as
 * this process, one worker 40 ms late among three 5 ms late found 208/s of a 200/s bucket, every
 * time, and was refused again ten seconds on; the process whose refusal ends a phase is the
 * likeliest to be the least busy one, its answers read soonest.) Empty where nothing was told.
 */
function laterThanThis({ reservations, sent, dry, lateMs }: Ended): (number | undefined)[] {
  const later: (number | undefined)[] = [];
  /** What this process told, by the first turn of each of its reservations, in turn order. */
  const ownTold: { turn: number; late: number }[] = [];
  for (const { turn, count, lateMs: told } of reservations) {
    if (!reasonable(turn, count)) break;
    if (told !== undefined && sent.has(turn)) ownTold.push({ turn, late: told });
  }
  // And what it would have told with a lease at the dry turn.
  if (lateMs !== undefined) ownTold.push({ turn: dry, late: lateMs });
  if (ownTold.length === 0) return later;
  ownTold.sort((a, b) => a.turn - b.turn);
  for (const { turn, count, lateMs: told } of reservations) {
    if (!reasonable(turn, count)) break;
    if (told === undefined || sent.has(turn)) continue;
    const difference = beyondAlike(Math.min(told, LATE_MOST) - nearest(ownTold, turn));
    for (let i = 0; i < count; i++) later[turn + i] = difference;
  }
  return later;
}

/**
 * What two processes' lateness may differ by when they are alike: each told is the middle of 16
 * requests' (shared-pacer.ts), which for requests going 0 to 30 ms late at random differ by 4 ms
 * or so. Placed by that noise, the others' turns were counted before the dry one more often than
 * not (those after it are not counted), and 6 jobs of 24 so paced on the fake clock found a rate
 * above the bucket's, to be refused again later (1 of 24 when nothing was told). With this margin,
 * 1 of 24 again, and the worker 40 ms late among three 5 ms late finds 200.7/s.
 */
const ALIKE_MS = 10;

/** How much later (or sooner) than this process another went, beyond what processes alike differ by. */
const beyondAlike = (difference: number): number =>
  Math.sign(difference) * Math.max(0, Math.abs(difference) - ALIKE_MS);

/** The lateness of the entry of `list` (in turn order, not empty) nearest to `turn`. */
function nearest(list: readonly { turn: number; late: number }[], turn: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((list[middle] as { turn: number }).turn < turn) low = middle + 1;
    else high = middle;
  }
  const after = list[low];
  const before = list[low - 1];
  if (after === undefined) return (before as { late: number }).late;
  if (before === undefined) return after.late;
  return turn - before.turn <= after.turn - turn ? before.late : after.late;
}

/**
 * A phase's requests in the order they went, for rateOf(): this process's at the times they went
 * (`sent`), the others' at their schedule's, `late` ms later and, where their processes told, as
 * much later or sooner than this one as they were (`later`); their outcomes, and where the dry one
 * is. In the turns' order, the others' turns numbered before the dry one but sent after it
 * were taken as accepted, and each time this process's turns and the others' went back and forth
 * the bucket refilled twice over the same time: a rate found far below the bucket's.
 */
function inTimeOrder(
  times: readonly number[],
  sent: ReadonlyMap<number, number>,
  later: readonly (number | undefined)[],
  outcomes: ReadonlyMap<number, number>,
  dry: number,
  late: number,
): { times: number[]; heard: number[]; dry: number } {
  const at: number[] = [];
  const order: number[] = [];
  // A turn no reservation holds (a store's wrong answer) is left out, not taken for one sent at NaN.
  for (let turn = 0; turn < times.length; turn++) {
    const time = times[turn];
    if (time === undefined || !Number.isFinite(time)) continue;
    at[turn] = sent.has(turn) ? time : time + Math.min(LATE_MOST, Math.max(0, late + (later[turn] ?? 0)));
    order.push(turn);
  }
  order.sort((a, b) => (at[a] as number) - (at[b] as number) || a - b);
  return {
    times: order.map((turn) => at[turn] as number),
    heard: order.map((turn) => outcomes.get(turn) ?? UNKNOWN),
    dry: order.indexOf(dry),
  };
}
