import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/**
 * `throttle: 'auto'`: the calls of one credential (one tenant's key) paced to the rate its server
 * accepts, learned from its refusals (README.md, "Bulk work and rate limits").
 *
 * A server that limits a rate usually keeps a token bucket: a burst of B requests, refilled at R
 * a second. Until it first refuses, the pace starts low and doubles every RAMP_MS. A refusal (a
 * 429, or a 503 with `Retry-After`) says that the bucket ran dry at that request, the first to
 * find it so since the phase began with it full: the rate is the one at which a bucket, with a
 * burst of BURST_SECONDS of it, fed the requests this phase sent (their times are kept) runs dry
 * at that very request. Every call of the credential then waits for `Retry-After`, after which
 * the bucket is full again and the next phase is paced just below the rate. After QUIET_MS
 * without a refusal, the pace is raised, by more each time, so that a raised limit is found.
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
/** How late the pace may catch up with, at once: timers fire late on a busy machine. */
const CATCH_UP_MS = 50;
/** A turn given: when, and in which phase, so that its outcome is counted there. */
export interface Ticket {
  readonly at: number;
  readonly phase: number;
}

interface Waiter {
  readonly give: (ticket: Ticket) => void;
  readonly leave: () => void;
}

/** The pace of one credential's calls. */
export class Pacer {
  readonly #kit: Kit;
  /** Requests a second, once learned. */
  #rate: number | undefined;
  #phase = 0;
  #accepted = 0;
  /** Phases in a row that ended in a refusal with nothing accepted. */
  #barren = 0;
  /** When this phase's requests were sent: the bucket's input, to find its rate from. */
  #times: number[] = [];
  #pausedUntil = 0;
  #next = 0;
  #quietSince = 0;
  #raise = 0.1;
  readonly #queue: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(kit: Kit) {
    this.#kit = kit;
  }

  /**
   * Resolves when a request may go out: after any pause, at the pace. A retry goes before the
   * calls that wait for their first attempt. Rejects with an `AttemptFailure` of kind `queued`
   * when `signal` aborts or `deadline` (epoch ms) passes first.
   */
  turn(retry: boolean, signal: AbortSignal | undefined, deadline: number | undefined): Promise<Ticket> {
    return new Promise<Ticket>((resolve, reject) => {
      const refuse = () => reject(new this.#kit.AttemptFailure({ kind: 'queued' }));
      if (signal?.aborted) return refuse();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', leave);
      };
      const waiter: Waiter = {
        give: (ticket) => {
          settle();
          resolve(ticket);
        },
        leave: () => {
          settle();
          refuse();
        },
      };
      const leave = () => {
        this.#queue.splice(this.#queue.indexOf(waiter), 1);
        waiter.leave();
      };
      signal?.addEventListener('abort', leave, { once: true });
      if (deadline !== undefined) timer = setTimeout(leave, Math.max(0, deadline - Date.now()));
      if (retry) this.#queue.unshift(waiter);
      else this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** What the server made of a request sent at `ticket`: a refusal pauses every call and sets the pace. */
  learned(ticket: Ticket | undefined, status: number, headers: Headers, maxRetryAfter: number): void {
    if (!ticket || ticket.phase !== this.#phase) return;
    if (!(status === 429 || (status === 503 && headers.has('retry-after')))) {
      this.#accepted += 1;
      return;
    }
    // Only the first refusal of a phase says where its bucket ran dry; the others were already on their way.
    const now = performance.now();
    const wait = Math.min(this.#kit.retryAfterMsOf(headers) ?? DEFAULT_PAUSE_MS, maxRetryAfter);
    const dry = this.#times.indexOf(ticket.at);
    this.#barren = this.#accepted === 0 ? this.#barren + 1 : 0;
    // Dry at its first requests, the bucket was empty before the phase (another client of the key):
    // that tells nothing of its rate.
    if (dry >= 2) this.#rate = Math.max(1, rateOf(this.#times.slice(0, dry + 1)) * MARGIN);
    this.#pausedUntil = now + wait;
    this.#next = this.#pausedUntil;
    this.#phase += 1;
    this.#times = [];
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
    return this.#queue.length === 0 && performance.now() >= this.#pausedUntil;
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

  /** Gives the waiting calls their turns, as the pause and the pace allow; a timer for the rest. */
  #pump(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#queue.length > 0) {
      const now = performance.now();
      const at = Math.max(this.#next, this.#pausedUntil);
      if (at > now) {
        this.#timer = setTimeout(() => this.#pump(), Math.ceil(at - now));
        return;
      }
      if (this.#times.length < TIMES_KEPT) this.#times.push(now);
      if (this.#quietSince === 0) this.#quietSince = now;
      // Late by a little (a timer on a busy machine): caught up. Idle: nothing saved up to send at once.
      if (now - this.#next > CATCH_UP_MS) this.#next = now;
      this.#next += 1000 / this.#pace(now);
      (this.#queue.shift() as Waiter).give({ at: now, phase: this.#phase });
    }
  }
}

/**
 * The rate R of a bucket (burst BURST_SECONDS * R, full at the first request) that the requests
 * sent at `times` (ms) run dry at the last of them and not before: the bucket runs dry sooner the
 * lower R is, so the range of such rates is found by halving.
 */
function rateOf(times: readonly number[]): number {
  const dries = (rate: number) => {
    const burst = Math.max(1, rate * BURST_SECONDS);
    let tokens = burst;
    for (let i = 0; i < times.length; i++) {
      if (i > 0) tokens = Math.min(burst, tokens + (((times[i] as number) - (times[i - 1] as number)) / 1000) * rate);
      if (tokens < 1) return i;
      tokens -= 1;
    }
    return times.length;
  };
  const last = times.length - 1;
  // The rates at which it runs dry at the last request are a range: its top. The server sees the
  // first requests of a phase later than they were sent, and closer together, which makes a
  // bucket look drier than it was: the rates below come out lower than the server's.
  return boundary((rate) => dries(rate) > last);
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
  readonly #kit: Kit;
  readonly #byCredential = new Map<string, Pacer>();

  constructor(kit: Kit) {
    this.#kit = kit;
  }

  /** Gives `call` the pacer of its credential, and waits for its first turn. */
  async admit(call: PreparedCall): Promise<void> {
    const { headers } = call.init;
    const credential = headers['x-api-key'] ?? headers.authorization ?? '';
    let pacer = this.#byCredential.get(credential);
    if (!pacer) {
      if (this.#byCredential.size >= PACERS_KEPT) {
        for (const [key, each] of this.#byCredential) if (each.idle()) this.#byCredential.delete(key);
      }
      pacer = new Pacer(this.#kit);
      this.#byCredential.set(credential, pacer);
    }
    call.pacer = pacer;
    call.ticket = await pacer.turn(false, call.settings.signal, call.deadline);
  }
}
