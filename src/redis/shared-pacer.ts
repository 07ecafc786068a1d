import type { CrmLogger } from '../core/log';
import type { PaceLearned, PaceLease, PaceReservation, PaceStore } from '../core/pace-store';
import { retryAfterMsOf } from '../core/retry-after';
import { isRefusal } from '../internal/call/failure';
import {
  ACCEPTED,
  BARREN,
  BARREN_PAUSE_MAX,
  HOPELESS_MS,
  type KeyPacer,
  PROBE_MS,
  pauseAfter,
  REFUSED,
} from '../internal/waiting/pacer';
import { Queue } from '../internal/waiting/queue';
import type { Waiting, Waits } from '../internal/waiting/wait';
import { baseFingerprint } from './fingerprint';
import { type Learned, newerLearned, withBase } from './learned-pace';
import { CATCH_UP_MS, MemoryStore } from './memory-store';
import { type Ended, lateness, phaseRate } from './phase-rate';
import { dueAt, LEASE_MAX, LEASE_MS, LEASE_RAMP, phasePace } from './phase-schedule';
import { NOT_STANDING, type StandBy, standBy } from './stand-by';
import { checkedLease, checkedReservations, DELAY_MAX } from './store-answers';
import { StoreAsker } from './store-ask';

/**
 * The pacer of a key whose pace a store shares (`throttle: { mode: 'auto', store }`): the pacer
 * of src/internal/waiting/pacer.ts, with its schedule, its pause and what it learned kept in the
 * store, so that every process using the store paces the key as one.
 *
 * The turns come from the store a few at a time (a lease, about LEASE_MS of them), each lease one
 * atomic step of the store on its own clock. A refusal ends the store's phase: every process pauses
 * (this one at once, the others at their next lease), and the process whose refusal ended it finds
 * the rate from the phase's reservations (their times, which the store kept) and what became of its
 * own requests, the others' taken as accepted up to the refused one; it tells the store, and every
 * process paces by it. A store that fails or answers late leaves this process pacing the key alone,
 * in memory, for STORE_RETRY_MS, with one warning per outage; nothing fails because of it.
 *
 * This file holds the pacer's state and its wiring; the rules it follows are beside it: the
 * schedule of a phase's turns (phase-schedule.ts), the rate found from a phase (phase-rate.ts),
 * what is remembered between jobs (learned-pace.ts), when a process stands by while another
 * ramps (stand-by.ts), how the store is asked (store-ask.ts) and
 * how its answers are checked (store-answers.ts).
 */

/**
 * How long before the end of its pause the process whose refusal ended a phase finds its rate, at
 * the latest: sooner when all its requests of the phase have been answered (#learnWhenHeard).
 */
const LEARN_EARLY_MS = 150;
/** How many of its requests' lateness a process tells the store the middle of (#lateness). */
const LATE_KEPT = 16;

/** A turn given: of which store and phase, and its number there, so that its outcome is counted. */
export interface Ticket {
  readonly store: PaceStore;
  readonly phase: number;
  readonly turn: number;
  /** When its turn was (performance.now()): how late its request went is told to the store (#lateness). */
  readonly due: number;
}

/** A phase of a store. */
interface PhaseOf {
  readonly store: PaceStore;
  readonly phase: number;
}

/** Whether the phase of `ticket` is `last`, or came before it (in the same store). */
const isIn = (ticket: Ticket, last: PhaseOf | undefined): boolean =>
  last?.store === ticket.store && last.phase >= ticket.phase;

/** The pace of one credential's calls, shared through a store. */
export class SharedPacer implements KeyPacer {
  readonly #key: string;
  /** The fingerprint of the base URL: what was learned from another is left unused. */
  readonly #base: string | undefined;
  readonly #shared: PaceStore;
  /** The store of `'auto'`, and the one a shared store falls back on. */
  readonly #local = new MemoryStore();
  /** The shared store's asks: within a budget, left alone for a while after a failure. */
  readonly #asker: StoreAsker;
  /** The store of the lease, and its phase (-1 after a refusal, until the next lease says). */
  #store: PaceStore;
  #phase = -1;
  /** The lease: its next turn, how many are left, when the next goes (performance.now()), how far apart. */
  #turn = 0;
  #left = 0;
  #at = 0;
  #interval = 0;
  #reserving = false;
  /** The store's clock minus this process's (performance.now()), as of the last lease. */
  #offset = 0;
  /**
   * The number of the first turn this process was given in the phase, the phase's turns given as
   * of its last lease, and how many the others took between its last two leases.
   */
  #firstTurn = 0;
  #known = 0;
  #othersTook = 0;
  /** Whether the last lease showed a phase this process did not know of (another's refusal): its pace is stale. */
  #stale = false;
  /** Whether this process stands by while another ramps (stand-by.ts). */
  #standBy: StandBy = NOT_STANDING;
  #learned: Learned | undefined;
  #outcomes = new Map<number, number>();
  #sent = new Map<number, number>();
  /**
   * This process's turns of the phase not yet handed to `fetch` (a busy process's work between a
   * turn and its send): found at once after a refusal, the rate takes them as going then, after the
   * refused one. (Taken as gone at their turns, accepted before its refused request and so
   * counted, a process 40 ms late told 238/s of a 200/s bucket until the rest was heard, and one
   * 60 ms late 293/s.)
   */
  #unsent = new Set<number>();
  /** When the requests of the phase this process's last refusal ended went (the map its rate is found from). */
  #endedSent: (PhaseOf & { readonly sent: Map<number, number>; readonly unsent: Set<number> }) | undefined;
  /** How late this process's last LATE_KEPT requests went after their turns (ms), oldest first. */
  readonly #late: number[] = [];
  #ended: Ended | undefined;
  #pausedUntil = 0;
  /** Until when the first calls wait for the first request's answer (0: not waiting). */
  #probing = 0;
  #probe: Ticket | undefined;
  #probed = false;
  /**
   * Phases in a row in which this process was refused without having heard a request of the phase
   * accepted (its first turn refused, or its later ones before anything accepted), each counted at
   * the first refusal heard of it: the pause of a phase it ends grows with them (pauseAfter()), and
   * the key may be hopeless. (Counted only where the phase's first turn was refused, the processes
   * given a key's later turns never took a key refused whatever its pace for one, nor paused
   * longer: four workers' calls were each sent 23 times.)
   */
  #barren = 0;
  /** The last phase (and its store) in which a request of this process was accepted, and refused. */
  #acceptedIn: PhaseOf | undefined;
  #refusedIn: PhaseOf | undefined;
  /** When a request of the key was last accepted in this process (or the pacer made), and last refused. */
  #acceptedAt = performance.now();
  #refusedAt = Number.NEGATIVE_INFINITY;
  /** The longest pause this process waits out (its calls' maxRetryAfter): a store's longer one is a wrong answer. */
  #maxPause = DELAY_MAX;
  readonly #queue = new Queue<Waiting<Ticket>>();
  readonly #waits: Waits;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `waits`: the transport's waits for a turn at a pace, shared by its pacers; `shared`: the store
   * of `throttle: { mode: 'auto', store }`; `logger`: the client's; `outage`: the store's state of
   * failure, shared by its pacers; `base`: the transport's base URL.
   */
  constructor(
    waits: Waits,
    key: string,
    shared: PaceStore,
    logger: CrmLogger | undefined,
    outage: { down: boolean },
    base = '',
  ) {
    this.#waits = waits;
    this.#key = key;
    this.#base = baseFingerprint(base);
    this.#shared = shared;
    this.#asker = new StoreAsker(key, logger, outage);
    this.#store = this.#local;
  }

  /**
   * Resolves when a request may go out: after any pause, at the pace. A retry goes before the
   * calls that wait for their first attempt. Rejects with an `AttemptFailure` of kind `queued`
   * when `signal` aborts or `deadline` (epoch ms) passes first. `maxRetryAfter`: the longest
   * pause the caller waits out, another process's included.
   */
  turn(
    retry: boolean,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
    maxRetryAfter: number = DELAY_MAX,
  ): Promise<Ticket> {
    this.#maxPause = maxRetryAfter;
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

  /** Whether a turn given is still good: no refusal has ended its phase since, as far as this process knows. */
  holds(ticket: Ticket): boolean {
    return ticket.store === this.#store && ticket.phase === this.#phase && performance.now() >= this.#pausedUntil;
  }

  /** The request of `ticket` is handed to `fetch` now: the time the rate is found from. */
  sent(ticket: Ticket): void {
    const now = performance.now();
    if (this.#late.push(now - ticket.due) > LATE_KEPT) this.#late.shift();
    if (ticket.phase === this.#phase && ticket.store === this.#store) {
      this.#sent.set(ticket.turn, now + this.#offset);
      this.#unsent.delete(ticket.turn);
    }
    // Handed to fetch after this process's refusal ended its phase (it was on its way from its
    // turn): the rate of that phase is found from when it went, not from when its turn was.
    else if (ticket.store === this.#endedSent?.store && ticket.phase === this.#endedSent.phase) {
      this.#endedSent.sent.set(ticket.turn, now + this.#offset);
      this.#endedSent.unsent.delete(ticket.turn);
    }
  }

  /**
   * How late this process's requests have been going after their turns: the middle of the last
   * LATE_KEPT, told to the store with each lease, so that the process that finds a phase's rate
   * places this one's sends by it. (Placed by the finder's own lateness, one worker 40 ms late
   * among three 5 ms late found 208/s of a 200/s bucket, every time, and was refused again ten
   * seconds on.) Measured and bounded as the finder measures its own (phase-rate.ts).
   */
  #lateness(): number | undefined {
    // Standing by, a process sends a few requests only: it tells what they say.
    return this.#late.length < (this.#standBy.standing ? 1 : LATE_KEPT) ? undefined : lateness([...this.#late]);
  }

  /** What the server made of a request sent at `ticket`: a refusal pauses every call and sets the pace. */
  learned(ticket: Ticket, status: number, headers: Headers, maxRetryAfter: number): void {
    const refusal = isRefusal(status, headers.has('retry-after'));
    const outcome = refusal ? REFUSED : ACCEPTED;
    if (refusal) {
      this.#refusedAt = performance.now();
      if (!isIn(ticket, this.#refusedIn)) {
        this.#refusedIn = ticket;
        this.#barren = isIn(ticket, this.#acceptedIn) ? 0 : this.#barren + 1;
      }
    } else {
      this.#acceptedAt = performance.now();
      if (!isIn(ticket, this.#acceptedIn)) this.#acceptedIn = ticket;
    }
    // The first request's answer: the calls behind it may go, and the ramp starts.
    if (ticket === this.#probe) {
      this.#probe = undefined;
      this.#probing = 0;
      if (!refusal) this.#pump();
    }
    // A request of the phase a refusal ended, answered during the pause: it counts towards that phase's rate.
    const ended = this.#ended;
    if (ended && ticket.phase === ended.phase && ticket.store === ended.store) {
      ended.outcomes.set(ticket.turn, outcome);
      this.#learnWhenHeard(ended);
      return;
    }
    if (ticket.phase !== this.#phase || ticket.store !== this.#store) return;
    this.#outcomes.set(ticket.turn, outcome);
    if (!refusal) return;
    const wait = pauseAfter(retryAfterMsOf(headers), maxRetryAfter, this.#barren);
    // The phase is over for this process, whatever the store says: its calls pause, its lease is void.
    const { store, phase } = ticket;
    const outcomes = this.#outcomes;
    const sent = this.#sent;
    this.#endedSent = { store, phase, sent, unsent: this.#unsent };
    this.#unsent = new Set();
    this.#pausedUntil = performance.now() + wait;
    this.#phase = -1;
    this.#left = 0;
    this.#outcomes = new Map();
    this.#sent = new Map();
    // The store ends the phase, unless another process's refusal ended it first; the one that
    // ended it finds the rate when the pause is over.
    const lateMs = this.#lateness();
    const end = (reservations: readonly PaceReservation[] | undefined) => {
      if (!reservations) return;
      const ended: Ended = { store, phase, reservations, outcomes, sent, dry: ticket.turn, lateMs };
      this.#ended = ended;
      if (this.#learnWhenHeard(ended)) return;
      // Told at once from what has been heard, the others first taken as accepted (and told again
      // when this process's requests of the phase are all heard from): the other processes'
      // leases taken meanwhile carry it. (Told only once its requests on their way were answered,
      // tens of ms later, the leases the others took between went at the ramp's pace, 60/s: the
      // first turns of W6 at 20/s after its first pause went 17 ms apart, and the third found the
      // bucket of 2 dry, one more pause of a second.) This process's own pace waits for the rate
      // found then: its pause is on.
      this.#tell(ended, this.#found(ended));
      // Found a little before the pause is over (the phase's answers are in by then), so that the
      // other processes, whose pause ends with this one's, lease at the rate found, not the last.
      // (Not a reason for the process to stay up: unref.)
      setTimeout(() => this.#ended === ended && this.#learn(ended), Math.max(0, wait - LEARN_EARLY_MS)).unref();
    };
    if (store === this.#local) end(this.#local.refuse(this.#key, phase, ticket.turn, wait));
    else
      this.#asker.ask(() => store.refuse(this.#key, phase, ticket.turn, wait), checkedReservations).then(end, () => {});
    this.#pump();
  }

  /**
   * Whether the key is refused whatever its pace (BARREN phases in a row refused with nothing
   * accepted, as this process heard them, and nothing accepted for HOPELESS_MS: a quota used up,
   * a key blocked): its calls then fail as they would without a pacer, each after its retries (retry/decide.ts), rather than
   * waiting for ever, one at a time. It is so while the key is refused: unused for HOPELESS_MS
   * since its last refusal (a worker's next job, the quota renewed), the key is tried again at its
   * pace (see Pacer's).
   */
  get hopeless(): boolean {
    const now = performance.now();
    return this.#barren >= BARREN && now - this.#acceptedAt >= HOPELESS_MS && now - this.#refusedAt < HOPELESS_MS;
  }

  /**
   * See KeyPacer's. The probe is the phase's first turn in the store, whichever process has it: a
   * process's first turn of each phase, probing too, sent a request a phase for every process.
   */
  waitsOut(ticket: Ticket): boolean {
    return !this.hopeless && (ticket.turn === 0 || isIn(ticket, this.#acceptedIn));
  }

  /** Whether nothing waits and no pause is on: a pacer that may be dropped. */
  idle(): boolean {
    return this.#queue.size === 0 && !this.#reserving && performance.now() >= this.#pausedUntil;
  }

  /** The pace now, in requests a second, from what was learned. */
  #pace(): number {
    return phasePace(this.hopeless, this.#learned, this.#known, this.#firstTurn, this.#othersTook);
  }

  /**
   * Gives the waiting calls their turns, as the pause and the lease allow; a timer for the rest.
   * The wait for the first answer ends with that answer or with its timer (`timedOut`), never by
   * the clock alone: a process busy queuing its calls cannot have heard the answer yet.
   */
  #pump(timedOut = false): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (timedOut && performance.now() >= this.#probing) this.#probing = 0;
    while (this.#queue.size > 0) {
      const now = performance.now();
      const at = Math.max(
        this.#pausedUntil,
        this.#probing,
        this.#left > 0 ? this.#at : this.#standBy.standing ? this.#standBy.until : 0,
      );
      if (at > now || this.#probing !== 0) {
        this.#timer = setTimeout(() => this.#pump(true), Math.max(0, Math.ceil(at - now)));
        return;
      }
      // The pause is over: every request of the phase it ended has been heard from, or never will be.
      if (this.#ended) this.#learn(this.#ended);
      if (this.#left === 0) {
        // Asked of a shared store: the pump goes on when it answers.
        if (!this.#lease()) return;
        continue;
      }
      // Late by a little (a timer on a busy machine): caught up. Late by more (a stall), the turns
      // whose time passed are void: that time in the shared schedule is gone, and the others'
      // leases take what follows; sent now, they would add to those (a worker stalled past its
      // leases sent them on top of the others'). Once none is left, the store gives turns from now.
      if (now - this.#at > CATCH_UP_MS && !this.hopeless) {
        while (this.#left > 0 && now - this.#at > CATCH_UP_MS) {
          this.#turn += 1;
          this.#left -= 1;
          this.#at += this.#interval;
        }
        continue;
      }
      const ticket: Ticket = { store: this.#store, phase: this.#phase, turn: this.#turn, due: this.#at };
      this.#sent.set(this.#turn, now + this.#offset);
      this.#unsent.add(this.#turn);
      this.#turn += 1;
      this.#left -= 1;
      this.#at += this.#interval;
      if (!this.#probed) {
        // The first request goes alone, and the others wait for its answer (at most PROBE_MS).
        this.#probed = true;
        this.#probing = now + PROBE_MS;
        this.#probe = ticket;
      }
      this.#queue.shift()?.done(ticket);
    }
  }

  /** Takes a lease of turns: at once from the memory store (true), or asked of the shared one. */
  #lease(): boolean {
    if (this.#reserving) return false;
    const now = performance.now();
    const asking = this.#phase < 0 || this.#stale || this.#standBy.standing;
    const pace = this.#pace();
    const most = this.#learned?.rate === undefined ? LEASE_RAMP : LEASE_MAX;
    // Not in a phase (the first lease, or the first after this process's refusal), or told by its
    // last lease that another process's refusal ended the phase, its pace is stale: the store may
    // have learned a rate meanwhile. One turn asks. (Paced at the ramp's start, the first leases
    // of four workers after a pause left 90 to 120 ms of the shared schedule at a quarter of the
    // rate the store already knew.) One turn with no time after it asks; the turns of a phase
    // are then spread by their numbers (#take), whatever pace the leases were taken at.
    const interval = asking ? 0 : 1000 / pace;
    const count = asking ? 1 : Math.max(1, Math.min(this.#queue.size, most, Math.floor((pace * LEASE_MS) / 1000)));
    const shared = this.#shared;
    const late = this.#lateness();
    if (this.#asker.leftAlone(now)) {
      this.#take(this.#local, this.#local.reserve(this.#key, count, interval, late), interval, count, asking);
      return true;
    }
    this.#reserving = true;
    // A pause longer than this process waits out (its maxRetryAfter, or the longest after barren
    // phases: pauseAfter()), and than the turns a schedule may hold before it, is no server's
    // answer (a Redis clock stepped back, a foreign value, another worker's long maxRetryAfter):
    // refused, the key paced in this process.
    const longest = Math.max(this.#maxPause, BARREN_PAUSE_MAX) + Math.max(1000, (LEASE_MAX * 1000) / pace);
    this.#asker
      .ask(
        () => shared.reserve(this.#key, count, interval, late),
        (lease) => checkedLease(lease, longest),
      )
      .then(
        (lease) => this.#take(shared, lease, interval, count, asking),
        () => {},
      )
      .finally(() => {
        this.#reserving = false;
        this.#pump();
      });
    return false;
  }

  #take(store: PaceStore, lease: PaceLease, interval: number, count: number, asking: boolean): void {
    const now = performance.now();
    this.#offset = lease.now - now;
    // What this pacer learned itself may be newer than what the store answers (its learn() on the way).
    const known = store === this.#store ? this.#learned : undefined;
    this.#learned = newerLearned(known, lease.learned, this.#base);
    // The turns the others took between this process's last two leases: as many again since, likely.
    const same = store === this.#store && lease.phase === this.#phase;
    this.#othersTook = same ? Math.max(0, lease.turn - this.#known) : 0;
    if (!same) this.#firstTurn = lease.turn;
    this.#known = lease.turn + count;
    this.#stale = !same && !asking;
    this.#standBy = standBy(this.#standBy, {
      ramping: store !== this.#local && this.#learned?.rate === undefined && !this.hopeless,
      joined: !same,
      lease,
      othersTook: this.#othersTook,
      learned: this.#learned,
      now,
    });
    if (!same) {
      // Another phase (a refusal somewhere, or the other store): what was known of the last one goes.
      this.#store = store;
      this.#phase = lease.phase;
      this.#outcomes = new Map();
      this.#sent = new Map();
      this.#unsent = new Set();
    }
    this.#turn = lease.turn;
    this.#left = count;
    // Turn n of a phase goes no sooner than n turns at the pace after the phase's start: leases
    // taken at another pace than the one now known (the asks of a phase's start, with no time
    // after them; leases taken during another's pause at the pace that ran the bucket dry) are
    // spread by it, every worker alike, since each reads the same start and its own turn's
    // number. (At each pause's end, four workers' turns went to a bucket of 2 within 10 ms, and
    // two were refused: a 20/s job took 5.7x its ideal.) By at most LEASE_MAX turns: a store's
    // turn numbers are not a reason to wait for long.
    const pace = this.#pace();
    this.#at = this.#due(now + lease.delayMs, lease.startedAt - this.#offset, lease.turn, pace);
    this.#interval = Math.max(interval, 1000 / pace);
  }

  /** When turn `turn` of a phase started at `start` goes, reserved for `scheduled`, at `pace` (see #take). */
  #due(scheduled: number, start: number, turn: number, pace: number): number {
    return dueAt(scheduled, start, turn, pace, this.hopeless, this.#learned);
  }

  /**
   * Finds the phase's rate at once when every request this process sent in it has been heard
   * from: the other workers' leases taken during the pause then carry it, and spread their turns
   * by it (#take). (Found only near the pause's end, a 20/s bucket's rate reached them after their
   * leases, which went at the ramp's pace: a refusal at every pause's end.)
   */
  #learnWhenHeard(ended: Ended): boolean {
    if (this.#ended !== ended) return false;
    for (const turn of ended.sent.keys()) if (!ended.outcomes.has(turn)) return false;
    this.#learn(ended);
    return true;
  }

  /** The rate of the phase this pacer's refusal ended, told to the store it came from. */
  #learn(ended: Ended): void {
    this.#ended = undefined;
    const learned = this.#found(ended);
    this.#learned = { ...learned, at: performance.now() + this.#offset };
    this.#tell(ended, learned);
  }

  /** What was learned of a phase that ended, told to its store (where it replaces what it knew). */
  #tell({ store, phase }: Ended, found: PaceLearned): void {
    const learned = withBase(found, this.#base);
    if (store === this.#local) this.#local.learn(this.#key, phase + 1, learned);
    else
      this.#asker
        .ask(
          () => store.learn(this.#key, phase + 1, learned),
          (answer) => answer,
        )
        .catch(() => {});
  }

  /** The rate of a phase this pacer's refusal ended, from what it has heard of the phase's requests so far. */
  #found(ended: Ended): PaceLearned {
    // Its turns not yet handed to fetch go now at the soonest (#unsent).
    const of = this.#endedSent;
    const unsent = of?.store === ended.store && of.phase === ended.phase ? of.unsent : undefined;
    let going = ended;
    if (unsent !== undefined && unsent.size > 0) {
      const now = performance.now() + this.#offset;
      const sent = new Map(ended.sent);
      for (const turn of unsent) sent.set(turn, Math.max(now, sent.get(turn) ?? now));
      going = { ...ended, sent };
    }
    // The others' turns went when their workers' #take let them, as this one's would have.
    return phaseRate(going, this.#pace(), this.#learned, (scheduled, start, turn, pace) =>
      this.#due(scheduled, start, turn, pace),
    );
  }
}
