import type { CrmLogger } from '../../core/log';
import { retryAfterMsOf } from '../../core/retry-after';
import { isRefusal } from '../call/failure';
import type { PaceMemory, RememberedPace, RememberingPacer } from './pace-memory';
import { Queue } from './queue';
import { type Waiting, Waits } from './wait';

/**
 * `throttle: 'auto'`: the calls of one credential (one tenant's key) paced to the rate its server
 * accepts, learned from its refusals (README.md, "Bulk work and rate limits").
 *
 * A server that limits a rate usually keeps a token bucket: a burst of B requests, refilled at R
 * a second. The first request goes alone, and the others wait for its answer: a bulk job's first
 * moments keep its process busy, and what it sends then reaches the server late and bunched.
 * Until it first refuses, the pace then starts low and doubles every RAMP_MS. A refusal (a 429,
 * or a 503 with `Retry-After`) says that the bucket ran dry at that request, and the requests still
 * on their way say more: refused, it was still dry; accepted, it had refilled. Every call of the
 * credential waits for `Retry-After`, after which the bucket is full again; by then every request
 * of the phase has been heard from, and the rate is the one at which a bucket, with a burst of
 * BURST_SECONDS of it, fed the requests this phase sent (their times are kept) meets each as the
 * server did (each request counted at the time it went, which the transport tells: `sent()`).
 * The next phase is paced just below it; after a phase whose times were distorted, the pace
 * climbs CLIMB a second to a ceiling above it (a rate found low there does not stay low), and
 * after a quiet time more, by more each time, so that a raised limit or a rate found low is found
 * (see QUIET_MS). A phase that told nothing (dry
 * at its first requests) starts the next ramp lower, so that a slow bucket is measured too.
 *
 * With `throttle: { mode: 'auto', store }` a key's calls are paced by the store's own pacer
 * (`crm-integration-sdk/redis`), which shares the schedule with other processes: see `Pacers`.
 */

/**
 * Requests a second before anything is known, doubled every RAMP_MS: counted in turns rather than
 * in time (the pace after n turns of r0 * 2^(t / T) is r0 + n * ln 2 / T), so that a stall of the
 * event loop does not raise it. Timed, a 2 s stall put the ramp at 50 * 2^20 a second, and the
 * calls queued went out at once (1,432 refused in one second).
 */
export const RAMP_START = 50;
const RAMP_MS = 100;
const RAMP_STEP = (Math.LN2 * 1000) / RAMP_MS;
/** The burst a bucket is taken to hold, in seconds of its rate (nothing tells it apart from the rate). */
const BURST_SECONDS = 0.1;
/** The pace, as a share of the rate learned: a little below it. */
const MARGIN = 0.995;
/** The most request times a phase keeps, to find the rate from: a phase that long has a known rate. */
const TIMES_KEPT = 5000;
/** Phases in a row refused with nothing accepted, after which a key is taken to be refused whatever its pace. */
export const BARREN = 3;
/**
 * ...and as long without a request of the key accepted. Barren phases alone are not enough where
 * other processes share the key unseen (throttle: 'auto' in each, or a shared store that is down):
 * pausing together, they meet at the pause's end, and a bucket of 2 refuses two first turns of
 * four. Three such phases in a row took a worker for refused whatever its pace: 31 to 72 requests
 * sent at once, and its calls failed after their retries (3 jobs in 12 of W6 at 20/s, store down).
 * A worker sharing the key has a request accepted every few seconds; a blocked key has none.
 */
export const HOPELESS_MS = 10_000;
/** Pacers a transport keeps before it drops the idle ones (an `apiKey` function may serve many keys). */
export const PACERS_KEPT = 1000;
/**
 * Sending without a refusal for about this long, the pace is raised past its ceiling (climbed()), after a
 * phase whose times agree with its outcomes: its rate then rests on them (rateOf()), and
 * searching past it sooner cost a 40/s job a second refusal, one more pause. Sooner where the
 * ceiling is a guess: QUIET_DISTORTED_MS after a phase whose times do not agree (a stall bunched or
 * spread them: a start-up phase on a loaded machine put a 100/s bucket at 69/s, kept for 30 s);
 * after a phase paced at a known rate and refused within SURE_TURNS turns, QUIET_MS times their
 * share squared, down to QUIET_MIN_MS (a refusal on a whim, another client's, says little of the
 * rate, and a job paced at a quarter of its limit waited 30 s).
 */
const QUIET_MS = 30_000;
const QUIET_DISTORTED_MS = 3000;
const SURE_TURNS = 25;
const QUIET_MIN_MS = 1000;
/** How much the pace climbs a second without a refusal, up to its ceiling. */
const CLIMB = 1.1;
/** How far past a rate found from distorted times (bounds that cross, turns bunched) the pace may climb. */
const DISTORTED = 1.1;
/** The wait after a refusal that does not say how long (no `Retry-After`). */
const DEFAULT_PAUSE_MS = 1000;
/**
 * The least pause after a phase refused with nothing accepted (barren), doubled with each such
 * phase in a row up to BARREN_PAUSE_MAX, whatever `Retry-After` says: its first turn, the probe,
 * is the one refusal of the phase a call does not count against its retries (see waitsOut()), so
 * the probes of a key refused whatever its pace come at a pace that falls, to one a second.
 * (`Retry-After: 0`, an HTTP date past or `0.0000001`, taken as "now", made every pause nothing:
 * 50 calls sent 1,150 requests in 50 ms, 23 a call.) No longer than DEFAULT_PAUSE_MS: up to 2 s,
 * workers pacing one key alone (a bucket of 2 at 20/s) paused longer after meeting at pauses'
 * ends, and one run of 24 took 43 s with 116 refused, against 24.75 s and 62.
 */
const BARREN_PAUSE_MS = 250;
export const BARREN_PAUSE_MAX = DEFAULT_PAUSE_MS;
/**
 * The pause after a refusal: the server's (`retryAfterMs`, at most `maxRetryAfter`), and after
 * `barren` barren phases in a row at least BARREN_PAUSE_MS doubled `barren - 1` times, up to
 * BARREN_PAUSE_MAX (maxRetryAfter does not shorten it: it is the pacer's own, as a backoff is).
 */
export const pauseAfter = (retryAfterMs: number | undefined, maxRetryAfter: number, barren: number): number => {
  const wait = Math.min(retryAfterMs ?? DEFAULT_PAUSE_MS, maxRetryAfter);
  return barren > 0 ? Math.max(wait, Math.min(BARREN_PAUSE_MAX, BARREN_PAUSE_MS * 2 ** (barren - 1))) : wait;
};
/** How long the first calls wait for the first request's answer, at most. */
export const PROBE_MS = 250;
/** How late the pace may catch up with, at once: timers fire late on a busy machine. */
const CATCH_UP_MS = 50;
/** A turn given, as the pacer that gave it reads it (in which phase, so that its outcome is counted there). */
export type Ticket = object;

/** What the transport asks of a key's pacer, in this process or shared through a store. */
export interface KeyPacer {
  /**
   * Resolves when a request may go out: after any pause, at the pace. A retry goes before the
   * calls that wait for their first attempt. Rejects with an `AttemptFailure` of kind `queued`
   * when `signal` aborts or `deadline` (epoch ms) passes first. `maxRetryAfter`: the caller's,
   * the longest pause it waits out, whoever asked for it (a shared store's pause included).
   */
  turn(
    retry: boolean,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
    maxRetryAfter?: number,
  ): Promise<Ticket>;
  /** Whether a turn given is still good: no refusal has paused the key since. */
  holds(ticket: Ticket): boolean;
  /** The request of `ticket` is handed to `fetch` now: the time the rate is found from. */
  sent(ticket: Ticket): void;
  /** What the server made of a request sent at `ticket`: a refusal pauses every call and sets the pace. */
  learned(ticket: Ticket, status: number, headers: Headers, maxRetryAfter: number): void;
  /**
   * Whether the pacer waits out the refusal of the request sent at `ticket`, rather than the call
   * counting it against its `maxRetries`: a refusal that tells of the pace (its phase had a request
   * accepted), or a probe (its phase's first turn, whose pauses grow). Not when the key is refused
   * whatever its pace, nor for the other requests of a phase refused with nothing accepted: a
   * server that accepts nothing sees at most `maxRetries + 1` requests a call, beside the probes.
   */
  waitsOut(ticket: Ticket): boolean;
  /** Whether nothing waits and no pause is on: a pacer that may be dropped. */
  idle(): boolean;
}

/** This pacer's turn: its phase, and its place among the phase's requests (their times and outcomes); -1 for one not kept. */
interface Turn {
  readonly phase: number;
  readonly index: number;
}

/** What became of a request: not heard yet, accepted (anything but a refusal), refused. */
export const UNKNOWN = 0;
export const ACCEPTED = 1;
export const REFUSED = 2;

/** A phase that ended in a refusal, still hearing from the requests it had on their way. */
interface Ended {
  readonly times: readonly number[];
  readonly outcomes: number[];
  readonly dry: number;
}

/** The pace of one credential's calls, in this process. */
class Pacer implements KeyPacer, RememberingPacer {
  /** Requests a second, once learned, and the most it may climb to without a refusal. */
  #rate: number | undefined;
  #ceiling = 0;
  /** How long the pace keeps to its ceiling without a refusal before it passes it. */
  #quietMs = QUIET_MS;
  /** Where the ramp starts: lower after each phase that told nothing. */
  #ramp = RAMP_START;
  #phase = 0;
  #accepted = 0;
  /** Phases in a row that ended in a refusal with nothing accepted. */
  #barren = 0;
  /** The last phase in which a request of the key was accepted (-1: none yet). */
  #acceptedPhase = -1;
  /** When a request of the key was last accepted (or the pacer made), and last refused. */
  #acceptedAt = performance.now();
  #refusedAt = Number.NEGATIVE_INFINITY;
  /** When this phase's requests were sent: the bucket's input, to find its rate from. */
  #times: number[] = [];
  /** The shortest round trip of this phase's requests, and when the first request's answer came. */
  #rtt = Number.POSITIVE_INFINITY;
  #firstAnswered = 0;
  /** What the server made of each of them (UNKNOWN, ACCEPTED, REFUSED). */
  #outcomes: number[] = [];
  /** The phase the last refusal ended, whose rate is found when the pause is over. */
  #ended: Ended | undefined;
  /** Until when the first calls wait for the first request's answer (0: not waiting). */
  #probing = 0;
  #probed = false;
  /** The turns given since the ramp started (the first answer, or the phase's start): its pace. */
  #rampTurns = 0;
  /**
   * How long the pace has spent on its turns since the last refusal (the sum of their intervals):
   * the quiet time it climbs by. A key's idle time is not quiet: it says nothing of the limit.
   * (Counted by the clock, a key idle for ten minutes after its rate was learned sent its next
   * job's 80 calls within 100 ms, 80 refused by a bucket of 2 at 20/s.)
   */
  #pacedMs = 0;
  #pausedUntil = 0;
  #next = 0;
  readonly #queue = new Queue<Waiting<Turn>>();
  readonly #waits: Waits;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The refusals the rate remembered at the start had taken (see seed()), and when the rate was last learned (epoch ms). */
  #refusalsBefore = 0;
  #learnedAt = 0;

  /** `waits`: the transport's waits for a turn at a pace, shared by its pacers. */
  constructor(waits: Waits) {
    this.#waits = waits;
  }

  /**
   * Starts at a rate remembered from an earlier run, as if this pacer had learned it: paced at it
   * from the first request (after the probe), corrected by the first refusal, climbing past it
   * after a quiet time. Nothing is done once the pacer has given a turn.
   */
  seed(remembered: RememberedPace): void {
    if (this.#rate !== undefined || this.#probed || this.#phase !== 0) return;
    // As a rate that rested on its outcomes (see remembered()): a ceiling above it was a guess of
    // the run that found it (times a stall distorted), and climbing to it on a quiet start cost
    // the next night's run a refusal at 200/s, every time.
    const { rate, quietMs } = rememberedForm(remembered);
    this.#rate = rate;
    this.#ceiling = rate;
    this.#quietMs = quietMs;
    this.#refusalsBefore = remembered.refusals;
    this.#learnedAt = remembered.learnedAt;
  }

  /** What this pacer knows of its key's rate, to be remembered; undefined until it knows one. */
  remembered(): RememberedPace | undefined {
    const rate = this.#rate;
    if (rate === undefined) return undefined;
    return {
      rate,
      ceiling: this.#ceiling,
      quietMs: this.#quietMs,
      // Each phase ended with one refusal.
      refusals: this.#refusalsBefore + this.#phase,
      learnedAt: this.#learnedAt,
    };
  }

  turn(retry: boolean, signal: AbortSignal | undefined, deadline: number | undefined): Promise<Turn> {
    // Nobody left to wake: a pause's timer must not keep the process alive.
    const promise = this.#waits.inQueue(this.#queue, signal, deadline, retry, () => {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    });
    // With a timer set, the calls before this one wait for a time that this one does not change:
    // the timer serves it too. (A job queuing 3,000 calls re-armed it 3,000 times: a fifth of the
    // time before its first request went out.)
    if (!signal?.aborted && this.#timer === undefined) this.#pump();
    return promise;
  }

  holds(ticket: Turn): boolean {
    return ticket.phase === this.#phase && performance.now() >= this.#pausedUntil;
  }

  sent(ticket: Turn): void {
    if (ticket.phase === this.#phase && ticket.index >= 0) this.#times[ticket.index] = performance.now();
  }

  learned(ticket: Turn, status: number, headers: Headers, maxRetryAfter: number): void {
    const refusal = isRefusal(status, headers.has('retry-after'));
    const now = performance.now();
    if (refusal) this.#refusedAt = now;
    else {
      this.#acceptedAt = now;
      this.#acceptedPhase = Math.max(this.#acceptedPhase, ticket.phase);
    }
    if (ticket.phase === this.#phase && ticket.index >= 0) {
      if (ticket.phase === 0 && ticket.index === 0) this.#firstAnswered = now;
      else this.#rtt = Math.min(this.#rtt, now - (this.#times[ticket.index] as number));
    }
    // The first request's answer: the calls behind it may go.
    // (While it is awaited, no other turn is given: turn 0 of phase 0.)
    if (ticket.index === 0 && this.#probing !== 0) {
      this.#rampStarts();
      if (!refusal) this.#pump();
    }
    // A request of the phase a refusal ended, answered during the pause: it counts towards that phase's rate.
    const ended = this.#ended;
    if (ended && ticket.phase === this.#phase - 1 && ticket.index >= 0) {
      ended.outcomes[ticket.index] = refusal ? REFUSED : ACCEPTED;
      return;
    }
    if (ticket.phase !== this.#phase) return;
    if (ticket.index >= 0) this.#outcomes[ticket.index] = refusal ? REFUSED : ACCEPTED;
    if (!refusal) {
      this.#accepted += 1;
      return;
    }
    // The first refusal of a phase says where its bucket ran dry; the requests still on their way
    // say more (refused: still dry; accepted: refilled), so the rate is found when the pause is over.
    const dry = ticket.index;
    this.#barren = this.#accepted === 0 ? this.#barren + 1 : 0;
    const wait = pauseAfter(retryAfterMsOf(headers), maxRetryAfter, this.#barren);
    // Dry at its first requests, the bucket was empty before the phase (another client of the key),
    // or the ramp started too high for it: that tells nothing of its rate, but the next ramp starts lower.
    // The job's first request opened a connection while its process was still queuing the job's
    // calls: it reached the server as late as its answer less the phase's shortest round trip,
    // well after it was handed to fetch (a 20/s bucket was read at 17/s in half the runs).
    const first = this.#times[0];
    if (this.#firstAnswered > 0 && first !== undefined)
      this.#times[0] = Math.min(Math.max(first, this.#firstAnswered - this.#rtt), this.#times[1] ?? first);
    this.#ended = dry >= 2 ? { times: this.#times, outcomes: this.#outcomes, dry } : undefined;
    // With a rate known, the pace climbs again from it (or from the one found when the pause is
    // over), not past this pace.
    if (this.#rate !== undefined) this.#ceiling = Math.min(this.#ceiling, this.#pace());
    // No lower than 1/s: a key refused whatever its pace (a quota used up) made it 50 / 4^n, and
    // once the key was tried again (see hopeless), its first turn was more than ten minutes away.
    else if (dry < 2) this.#ramp = Math.max(1, this.#ramp / 4);
    // The climb starts again when the pause is over, from the rate found then.
    this.#pacedMs = 0;
    this.#pausedUntil = now + wait;
    this.#next = this.#pausedUntil;
    this.#phase += 1;
    this.#times = [];
    this.#outcomes = [];
    this.#rtt = Number.POSITIVE_INFINITY;
    this.#firstAnswered = 0;
    this.#accepted = 0;
    this.#rampTurns = 0;
    this.#pump();
  }

  /**
   * Whether the key is refused whatever its pace (BARREN phases in a row with nothing accepted,
   * and nothing accepted for HOPELESS_MS: a quota used up, a key blocked): its calls then fail as
   * they would without a pacer, each after its retries (retry/decide.ts), rather than waiting for
   * ever, one at a time. It is so while the key is refused: unused for HOPELESS_MS since its last
   * refusal (a worker's next job, the quota renewed), the key is tried again at its pace. (Judged
   * once for good, a key refused through one job sent the next job's 80 calls at once, ten minutes
   * later, and a bucket of 2 at 20/s refused 78 of them.)
   */
  get hopeless(): boolean {
    const now = performance.now();
    return this.#barren >= BARREN && now - this.#acceptedAt >= HOPELESS_MS && now - this.#refusedAt < HOPELESS_MS;
  }

  waitsOut(ticket: Turn): boolean {
    return !this.hopeless && (ticket.index === 0 || this.#acceptedPhase >= ticket.phase);
  }

  /** Whether nothing waits and no pause is on: a pacer that may be dropped. */
  idle(): boolean {
    return this.#queue.size === 0 && performance.now() >= this.#pausedUntil;
  }

  /** The pace now, in requests a second. */
  #pace(): number {
    // Refused whatever the pace: the calls go out together after each pause, to fail the sooner.
    if (this.hopeless) return Number.POSITIVE_INFINITY;
    const rate = this.#rate;
    if (rate === undefined) return this.#ramp + this.#rampTurns * RAMP_STEP;
    return climbed(rate, this.#ceiling, this.#pacedMs, this.#quietMs);
  }

  /**
   * The wait for the first answer is over: the ramp starts now. Its turns are not owed for the
   * wait (no catch-up): sent at once, they reached a slow bucket together and told nothing.
   */
  #rampStarts(): void {
    this.#probing = 0;
    this.#rampTurns = 0;
    this.#next = performance.now();
  }

  /**
   * Gives the waiting calls their turns, as the pause and the pace allow; a timer for the rest.
   * The wait for the first answer ends with that answer or with its timer (`timedOut`), never by
   * the clock alone: a process busy queuing its calls cannot have heard the answer yet.
   */
  #pump(timedOut = false): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (timedOut && this.#probing !== 0 && performance.now() >= this.#probing) this.#rampStarts();
    while (this.#queue.size > 0) {
      const now = performance.now();
      const at = Math.max(this.#next, this.#pausedUntil, this.#probing);
      if (at > now || this.#probing !== 0) {
        this.#timer = setTimeout(() => this.#pump(true), Math.max(0, Math.ceil(at - now)));
        return;
      }
      const ended = this.#ended;
      if (ended) {
        // The pause is over: every request of the phase it ended has been heard from, or never will be.
        this.#ended = undefined;
        ({
          rate: this.#rate,
          ceiling: this.#ceiling,
          quietMs: this.#quietMs,
        } = rateOf(ended.times, ended.outcomes, ended.dry, this.#rate !== undefined));
        this.#learnedAt = Date.now();
      }
      let index = -1;
      if (this.#times.length < TIMES_KEPT) {
        index = this.#times.length;
        this.#times.push(now);
        this.#outcomes.push(UNKNOWN);
      }
      if (!this.#probed) {
        // The first request goes alone, and the others wait for its answer (at most PROBE_MS): the
        // moments after a bulk job starts its calls are the busiest of the process, and what is sent
        // then reaches the server late and bunched. The ramp starts after; the first request's own
        // time counts (the bucket was full then), which a slow bucket's short first phase needs.
        this.#probed = true;
        this.#probing = now + PROBE_MS;
      }
      // Late by a little (a timer on a busy machine): caught up. Idle, or late by more (a stall):
      // nothing saved up to send at once. At most 1 + CATCH_UP_MS of the pace in a burst, then the pace.
      if (now - this.#next > CATCH_UP_MS) this.#next = now;
      const interval = 1000 / this.#pace();
      this.#next += interval;
      if (this.#rate !== undefined) this.#pacedMs += interval;
      this.#rampTurns += 1;
      this.#queue.shift()?.done({ phase: this.#phase, index });
    }
  }
}

/**
 * The pace after `ms` of sending at a rate learned (idle time does not count: see Pacer's
 * #pacedMs): a little below it, climbing CLIMB a second to its ceiling; and, perhaps the limit
 * was raised or the rate found low, raised past it by more and more without a refusal (+10% after
 * `quietMs`, +46% after twice that, x2.4, x4.6...).
 */
export const climbed = (rate: number, ceiling: number, ms: number, quietMs = QUIET_MS): number =>
  Math.min(Math.max(rate, ceiling), rate * CLIMB ** (ms / 1000)) * MARGIN * 1.1 ** (Math.floor(ms / quietMs) ** 2);

/**
 * The rate R of a bucket (burst BURST_SECONDS * R, full at the first request) that the requests
 * sent at `times` (ms) meet as the server said (`outcomes`): the first refused at `dry`, those
 * before it accepted. Each accepted request says the bucket held a token then, which it does
 * from some rate up; each refused one that it was dry, which it is up to some rate. The answer
 * is the middle of the rates that agree with every outcome heard, and the pace keeps to it: over
 * a job of seconds, a pace 1% over the rate drains a bucket of a tenth of a second in 10 s and
 * costs a pause (7% of a 15 s job), where 1% under costs 1%. (Climbing to the highest rate that
 * agreed, or halfway, gave a 20/s or 40/s job a second refusal in most runs, and a 200/s job over
 * four workers one in some.) Where none agree (by more than 5%), or where a quarter of the turns
 * went out bunched, the server saw requests at other times than they were sent (a stall bunched
 * or spread them), which was seen to put the middle 5 to 10% low: the middle still, and a
 * ceiling DISTORTED above it that the pace climbs to. `known`: whether the phase was paced at a
 * rate learned before, rather than ramped (see QUIET_MS).
 */
export function rateOf(
  times: readonly number[],
  outcomes: readonly number[],
  dry: number,
  known: boolean,
): { rate: number; ceiling: number; quietMs: number } {
  // Those before the dry one that were not heard from are taken as accepted; after it, the
  // outcomes stop at the first not heard from (its token, taken or not, is not known).
  let end = dry + 1;
  while (end < times.length && outcomes[end] !== UNKNOWN) end += 1;
  /** How many outcomes the rate gets wrong: accepted without a token (short), refused with one (over). */
  const misses = (rate: number) => {
    const burst = Math.max(1, rate * BURST_SECONDS);
    let tokens = burst;
    let short = 0;
    let over = 0;
    for (let i = 0; i < end; i++) {
      // Sent out of order by a little (their turns' order is not their sends'): no time between them.
      if (i > 0)
        tokens = Math.min(burst, tokens + (Math.max(0, (times[i] as number) - (times[i - 1] as number)) / 1000) * rate);
      if (outcomes[i] === REFUSED) {
        if (tokens >= 1) over += 1;
      } else {
        if (tokens < 1) short += 1;
        tokens -= 1;
      }
    }
    return { short, over };
  };
  // With the outcomes fixed, the bucket holds more at every request the higher the rate: short
  // below some rate, over above some. Between the two, the rates that agree with every outcome;
  // where none do (the two bounds cross: the server saw some requests bunched or spread, a stall
  // of the client or of the server), the middle of the two still.
  const low = boundary((rate) => misses(rate).short === 0);
  const high = boundary((rate) => misses(rate).over > 0);
  const rate = Math.sqrt(low * high);
  // Turns given at once (a busy event loop) reach the server otherwise than their times say.
  let bunched = 0;
  for (let i = 1; i <= dry; i++) if ((times[i] as number) - (times[i - 1] as number) < 1) bunched++;
  // Bounds that cross by a little are rounding (a request on the edge of a token), not distortion.
  if (low > high * 1.05 || bunched * 4 > dry) return { rate, ceiling: rate * DISTORTED, quietMs: QUIET_DISTORTED_MS };
  const quietMs = known && dry < SURE_TURNS ? Math.max(QUIET_MIN_MS, QUIET_MS * (dry / SURE_TURNS) ** 2) : QUIET_MS;
  return { rate, ceiling: rate, quietMs };
}

/**
 * What a rate learned is remembered as between jobs: the rate, with no ceiling above it and the
 * quiet time of a rate that rests on its outcomes (QUIET_MS at least), so that the next job keeps
 * to it and climbs past it only after that long without a refusal. A ceiling above the rate and a
 * short quiet time are guesses of the phase that found it (times a stall distorted, a refusal a
 * few turns in), which the next job, started a day later, has no reason to follow: climbing to
 * 220/s from a 200/s rate remembered so cost the next run a refusal.
 */
export const rememberedForm = <T extends { readonly rate: number; readonly quietMs?: number | undefined }>(
  learned: T,
): T & { ceiling: number; quietMs: number } => ({
  ...learned,
  ceiling: learned.rate,
  quietMs: Math.max(learned.quietMs ?? QUIET_MS, QUIET_MS),
});

/**
 * The rates (requests a second) a server's answers can set a pace to: those rateOf() can find.
 * A store's rate outside them is a wrong answer, not a pace (1e-9/s stalled a key for 24.8 days).
 */
export const RATES = { least: 0.1, most: 1e6 } as const;
/** The quiet times (ms) a phase can set (see QUIET_MS), with room for other versions: a few ms made the pace run away. */
export const QUIET_TIMES = { least: QUIET_MIN_MS, most: 3_600_000 } as const;

/** The rate from which `holds` is true, for a `holds` false below some rate and true above it. */
function boundary(holds: (rate: number) => boolean): number {
  let low: number = RATES.least;
  let high: number = RATES.most;
  while (high - low > low * 1e-4) {
    const rate = Math.sqrt(low * high);
    if (holds(rate)) high = rate;
    else low = rate;
  }
  return high;
}

/**
 * The pacer of a key whose pace a store shares, made once per transport (its `waits` for a turn)
 * and key; `logger`: the client's, for the warning when the store fails; `base`: the transport's base
 * URL, whose fingerprint goes with what the pacer learns (a rate of another server is not used).
 */
export type SharedPacerFactory = (waits: Waits, key: string, logger: CrmLogger | undefined, base?: string) => KeyPacer;

/**
 * Where a store made by `crm-integration-sdk/redis` (`redisStore()`, `memoryStore()`,
 * `sharedPaceStore()`) carries the pacer that shares its pace: that code ships with the store, so
 * that the main entry does not grow by it.
 */
export const SHARED_PACER = Symbol.for('crm-integration-sdk.shared-pacer');

/** The factory a store carries, if it does (what else it carries there, settings.ts refuses). */
export const sharedPacerOf = (store: unknown): SharedPacerFactory | undefined =>
  (store as { [SHARED_PACER]?: SharedPacerFactory } | undefined)?.[SHARED_PACER];

/** The pacers of a transport's credentials, one for each credential (and store). */
export class Pacers implements PaceMemory {
  readonly made = new Map<string, Pacer>();
  onMade: ((credential: string, pacer: RememberingPacer) => void) | undefined;
  readonly #waits = new Waits('pace');
  readonly #logger: CrmLogger | undefined;
  readonly #base: string;

  /** `logger`: the client's, told when a shared store fails; `base`: the transport's base URL. */
  constructor(logger: CrmLogger | undefined, base = '') {
    this.#logger = logger;
    this.#base = base;
  }

  /** The pacer of a credential (its key, or its token): in this process (`true`), or shared through `store`, which keeps its own. */
  of(credential: string, store: object | true): KeyPacer {
    if (store !== true)
      return (sharedPacerOf(store) as SharedPacerFactory)(this.#waits, credential, this.#logger, this.#base);
    let pacer = this.made.get(credential);
    if (!pacer) {
      if (this.made.size >= PACERS_KEPT) {
        for (const [key, each] of this.made) if (each.idle()) this.made.delete(key);
      }
      pacer = new Pacer(this.#waits);
      this.made.set(credential, pacer);
      this.onMade?.(credential, pacer);
    }
    return pacer;
  }
}
