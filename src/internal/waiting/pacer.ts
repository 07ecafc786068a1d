import { retryAfterMsOf } from '../../core/retry-after';
import { isRefusal } from '../call/failure';
import { type Place, Queue } from './queue';
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
 * server did. The next phase is paced just below it. After QUIET_MS without a refusal, the pace is
 * raised, by more each time, so that a raised limit is found.
 */

/** Requests a second before anything is known, doubled every RAMP_MS. */
const RAMP_START = 50;
const RAMP_MS = 100;
/** The burst a bucket is taken to hold, in seconds of its rate (nothing tells it apart from the rate). */
const BURST_SECONDS = 0.1;
/** The pace, as a share of the rate learned: a little below it. */
const MARGIN = 0.995;
/** The most request times a phase keeps, to find the rate from: a phase that long has a known rate. */
const TIMES_KEPT = 5000;
/** Phases in a row refused with nothing accepted, after which a key is taken to be refused whatever its pace. */
const BARREN = 3;
/** Pacers a transport keeps before it drops the idle ones (an `apiKey` function may serve many keys). */
const PACERS_KEPT = 1000;
/** How long without a refusal before the pace is raised. */
const QUIET_MS = 30_000;
/** The wait after a refusal that does not say how long (no `Retry-After`). */
const DEFAULT_PAUSE_MS = 1000;
/** The rates tried between the two bounds when no rate agrees with every outcome of a phase. */
const SCAN_STEPS = 200;
/** How long the first calls wait for the first request's answer, at most. */
const PROBE_MS = 250;
/** How late the pace may catch up with, at once: timers fire late on a busy machine. */
const CATCH_UP_MS = 50;
/** A turn given: when, and in which phase, so that its outcome is counted there. */
export interface Ticket {
  readonly phase: number;
  /** Its place among the phase's requests (their times and outcomes); -1 for one not kept. */
  readonly index: number;
}

/** What became of a request: not heard yet, accepted (anything but a refusal), refused. */
const UNKNOWN = 0;
const ACCEPTED = 1;
const REFUSED = 2;

/** A phase that ended in a refusal, still hearing from the requests it had on their way. */
interface Ended {
  readonly times: readonly number[];
  readonly outcomes: number[];
  readonly dry: number;
}

/** The pace of one credential's calls. */
export class Pacer {
  /** Requests a second, once learned. */
  #rate: number | undefined;
  #phase = 0;
  #accepted = 0;
  /** Phases in a row that ended in a refusal with nothing accepted. */
  #barren = 0;
  /** When this phase's requests were sent: the bucket's input, to find its rate from. */
  #times: number[] = [];
  /** What the server made of each of them (UNKNOWN, ACCEPTED, REFUSED). */
  #outcomes: number[] = [];
  /** The phase the last refusal ended, whose rate is found when the pause is over. */
  #ended: Ended | undefined;
  /** Until when the first calls wait for the first request's answer (0: not waiting). */
  #probing = 0;
  #probed = false;
  #pausedUntil = 0;
  #next = 0;
  #quietSince = 0;
  #raise = 0.1;
  readonly #queue = new Queue<Waiting<Ticket>>();
  readonly #waits: Waits;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `waits`: the transport's waits for a turn at a pace, shared by its pacers. */
  constructor(waits: Waits) {
    this.#waits = waits;
  }

  /**
   * Resolves when a request may go out: after any pause, at the pace. A retry goes before the
   * calls that wait for their first attempt. Rejects with an `AttemptFailure` of kind `queued`
   * when `signal` aborts or `deadline` (epoch ms) passes first.
   */
  turn(retry: boolean, signal: AbortSignal | undefined, deadline: number | undefined): Promise<Ticket> {
    let place: Place<Waiting<Ticket>> | undefined;
    const waiting = this.#waits.start<Ticket>(signal, deadline, () => {
      if (place) this.#queue.remove(place);
      // Nobody left to wake: a pause's timer must not keep the process alive.
      if (this.#queue.size === 0) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
      }
    });
    if (signal?.aborted) return waiting.promise;
    place = this.#queue.add(waiting, retry);
    this.#pump();
    return waiting.promise;
  }

  /** Whether a turn given is still good: no refusal has paused the key since. */
  holds(ticket: Ticket): boolean {
    return ticket.phase === this.#phase && performance.now() >= this.#pausedUntil;
  }

  /** What the server made of a request sent at `ticket`: a refusal pauses every call and sets the pace. */
  learned(ticket: Ticket, status: number, headers: Headers, maxRetryAfter: number): void {
    const refusal = isRefusal(status, headers.has('retry-after'));
    // The first request's answer: the calls behind it may go.
    if (ticket.phase === 0 && ticket.index < 0 && this.#probing !== 0) {
      this.#probing = 0;
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
    const now = performance.now();
    const wait = Math.min(retryAfterMsOf(headers) ?? DEFAULT_PAUSE_MS, maxRetryAfter);
    const dry = ticket.index;
    this.#barren = this.#accepted === 0 ? this.#barren + 1 : 0;
    // Dry at its first requests, the bucket was empty before the phase (another client of the key):
    // that tells nothing of its rate.
    this.#ended = dry >= 2 ? { times: this.#times, outcomes: this.#outcomes, dry } : undefined;
    this.#pausedUntil = now + wait;
    this.#next = this.#pausedUntil;
    this.#phase += 1;
    this.#times = [];
    this.#outcomes = [];
    this.#accepted = 0;
    this.#quietSince = this.#pausedUntil;
    this.#raise = 0.1;
    this.#pump();
  }

  /**
   * Whether the key is refused whatever its pace (BARREN phases in a row with nothing accepted: a
   * quota used up, a key blocked): its calls then fail as they would without a pacer, each after
   * its retries (retry-policy.ts), rather than waiting for ever, one at a time.
   */
  get hopeless(): boolean {
    return this.#barren >= BARREN;
  }

  /** Whether nothing waits and no pause is on: a pacer that may be dropped. */
  idle(): boolean {
    return this.#queue.size === 0 && performance.now() >= this.#pausedUntil;
  }

  /** The pace now, in requests a second. */
  #pace(now: number): number {
    // Refused whatever the pace: the calls go out together after each pause, to fail the sooner.
    if (this.hopeless) return Number.POSITIVE_INFINITY;
    const rate = this.#rate;
    if (rate === undefined) return RAMP_START * 2 ** ((now - (this.#times[0] ?? now)) / RAMP_MS);
    if (now - this.#quietSince < QUIET_MS) return rate;
    // Long without a refusal: perhaps the limit was raised. Found by raising the pace, by more each time.
    this.#rate = rate * (1 + this.#raise);
    this.#raise = Math.min(1, this.#raise * 2);
    this.#quietSince = now;
    return this.#rate;
  }

  /**
   * Gives the waiting calls their turns, as the pause and the pace allow; a timer for the rest.
   * The wait for the first answer ends with that answer or with its timer (`timedOut`), never by
   * the clock alone: a process busy queuing its calls cannot have heard the answer yet.
   */
  #pump(timedOut = false): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (timedOut && performance.now() >= this.#probing) this.#probing = 0;
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
        this.#rate = Math.max(1, rateOf(ended.times, ended.outcomes, ended.dry) * MARGIN);
      }
      let index = -1;
      if (!this.#probed) {
        // The first request goes alone, and the others wait for its answer (at most PROBE_MS): the
        // moments after a bulk job starts its calls are the busiest of the process, and what is sent
        // then reaches the server late and bunched. The ramp, and its times, start after.
        this.#probed = true;
        this.#probing = now + PROBE_MS;
      } else if (this.#times.length < TIMES_KEPT) {
        index = this.#times.length;
        this.#times.push(now);
        this.#outcomes.push(UNKNOWN);
      }
      if (this.#quietSince === 0) this.#quietSince = now;
      // Late by a little (a timer on a busy machine): caught up. Idle: nothing saved up to send at once.
      if (now - this.#next > CATCH_UP_MS) this.#next = now;
      this.#next += 1000 / this.#pace(now);
      this.#queue.shift()?.done({ phase: this.#phase, index });
    }
  }
}

/**
 * The rate R of a bucket (burst BURST_SECONDS * R, full at the first request) that the requests
 * sent at `times` (ms) meet as the server said (`outcomes`): the first refused at `dry`, those
 * before it accepted. Each accepted request says the bucket held a token then, which it does
 * from some rate up; each refused one that it was dry, which it is up to some rate. The answer
 * is the middle of the rates that agree with every outcome heard. Where none do (the server saw
 * some requests at other times than they were sent: a stall bunched or spread them), the middle of
 * the rates that get the fewest outcomes wrong: either bound alone was seen to miss by 10% or more.
 */
function rateOf(times: readonly number[], outcomes: readonly number[], dry: number): number {
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
      if (i > 0) tokens = Math.min(burst, tokens + (((times[i] as number) - (times[i - 1] as number)) / 1000) * rate);
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
  // below some rate, over above some. Between the two, the rates that agree with every outcome.
  const low = boundary((rate) => misses(rate).short === 0);
  const high = boundary((rate) => misses(rate).over > 0);
  if (low <= high) return Math.sqrt(low * high);
  // None agrees with all (the server saw some requests bunched or spread, a stall of the client
  // or of the server): the middle of the rates that get the fewest outcomes wrong.
  let fewest = Number.POSITIVE_INFINITY;
  let first = high;
  let last = high;
  for (let step = 0; step <= SCAN_STEPS; step++) {
    const rate = high * (low / high) ** (step / SCAN_STEPS);
    const { short, over } = misses(rate);
    if (short + over < fewest) {
      fewest = short + over;
      first = rate;
    }
    if (short + over === fewest) last = rate;
  }
  return Math.sqrt(first * last);
}

/** The rate from which `holds` is true, for a `holds` false below some rate and true above it. */
function boundary(holds: (rate: number) => boolean): number {
  let low = 0.1;
  let high = 1e6;
  while (high - low > low * 1e-4) {
    const rate = Math.sqrt(low * high);
    if (holds(rate)) high = rate;
    else low = rate;
  }
  return high;
}

/** The pacers of a transport's credentials, one for each. */
export class Pacers {
  readonly #byCredential = new Map<string, Pacer>();
  readonly #waits = new Waits('pace');

  /** The pacer of a credential (its key, or its token). */
  of(credential: string): Pacer {
    let pacer = this.#byCredential.get(credential);
    if (!pacer) {
      if (this.#byCredential.size >= PACERS_KEPT) {
        for (const [key, each] of this.#byCredential) if (each.idle()) this.#byCredential.delete(key);
      }
      pacer = new Pacer(this.#waits);
      this.#byCredential.set(credential, pacer);
    }
    return pacer;
  }
}
