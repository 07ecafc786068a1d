import type { Kit } from './kit';
import type { PreparedCall } from './prepared-call';

/**
 * `throttle: 'auto'`: the calls of one credential (one tenant's key) paced to the rate its server
 * accepts, learned from its refusals (README.md, "Bulk work and rate limits").
 *
 * A server that limits a rate usually keeps a token bucket: a burst of B requests, refilled at R
 * a second. Until it first refuses, the pace starts low and doubles every RAMP_MS, so the burst
 * covers the ramp. Each refusal (a 429, or a 503 with `Retry-After`) is one equation: since the
 * start of the phase it ended (the bucket full then), A requests were accepted in t seconds, so
 * A = B + R t. One refusal gives R with B taken as BURST_SECONDS of R; a second, in a phase of
 * another length, gives both. Every call of the credential then waits for `Retry-After`, and
 * the phase that follows is paced just below R. After QUIET_MS without a refusal, the pace is
 * raised, by more each time, so that a raised limit is found.
 */

/** Requests a second before anything is known, doubled every RAMP_MS. */
const RAMP_START = 20;
const RAMP_MS = 100;
/** The burst taken for granted after one refusal, in seconds of the rate. */
const BURST_SECONDS = 0.1;
/** The pace, as a share of the rate learned: a little below it. */
const MARGIN = 0.99;
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

interface Refusal {
  readonly accepted: number;
  readonly seconds: number;
}

/** The pace of one credential's calls. */
export class Pacer {
  readonly #kit: Kit;
  /** Requests a second, once learned. */
  #rate: number | undefined;
  #burst: number | undefined;
  #phase = 0;
  #phaseStart: number | undefined;
  #accepted = 0;
  #refused: Refusal | undefined;
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
    if (!ticket) return;
    const refused = status === 429 || (status === 503 && headers.has('retry-after'));
    if (!refused) {
      if (ticket.phase === this.#phase) this.#accepted += 1;
      return;
    }
    // Only the first refusal of a phase says where its bucket ran dry; the others were already on their way.
    if (ticket.phase !== this.#phase || this.#phaseStart === undefined) return;
    const now = performance.now();
    const wait = Math.min(this.#kit.retryAfterMsOf(headers) ?? DEFAULT_PAUSE_MS, maxRetryAfter);
    this.#setRate({ accepted: this.#accepted, seconds: Math.max(0.001, (ticket.at - this.#phaseStart) / 1000) });
    this.#pausedUntil = now + wait;
    this.#next = this.#pausedUntil;
    this.#phase += 1;
    this.#phaseStart = undefined;
    this.#accepted = 0;
    this.#quietSince = this.#pausedUntil;
    this.#raise = 0.1;
    this.#pump();
  }

  /** The rate and burst that one refusal, with the one before it, tells. */
  #setRate(refusal: Refusal): void {
    const before = this.#refused;
    this.#refused = refusal;
    let rate: number | undefined;
    let burst = this.#burst;
    // Two phases of different lengths: A = B + R t twice, solved for R and B.
    if (before && Math.abs(refusal.seconds - before.seconds) > 0.2) {
      rate = (refusal.accepted - before.accepted) / (refusal.seconds - before.seconds);
      burst = refusal.accepted - rate * refusal.seconds;
      if (!(rate > 0) || burst < 0) rate = undefined;
    }
    rate ??=
      burst === undefined || refusal.accepted <= burst
        ? refusal.accepted / (refusal.seconds + BURST_SECONDS)
        : (refusal.accepted - burst) / refusal.seconds;
    this.#burst = burst ?? rate * BURST_SECONDS;
    // At least one request a second, whatever a phase of nothing accepted suggests.
    this.#rate = Math.max(1, rate * MARGIN);
  }

  /** The pace now, in requests a second. */
  #pace(now: number): number {
    const rate = this.#rate;
    if (rate === undefined) return RAMP_START * 2 ** ((now - (this.#phaseStart ?? now)) / RAMP_MS);
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
      this.#phaseStart ??= now;
      if (this.#quietSince === 0) this.#quietSince = now;
      this.#next = Math.max(this.#next, now - CATCH_UP_MS) + 1000 / this.#pace(now);
      (this.#queue.shift() as Waiter).give({ at: now, phase: this.#phase });
    }
  }
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
      pacer = new Pacer(this.#kit);
      this.#byCredential.set(credential, pacer);
    }
    call.pacer = pacer;
    call.ticket = await pacer.turn(false, call.settings.signal, call.deadline);
  }
}
