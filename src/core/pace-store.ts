/**
 * Where `throttle: { mode: 'auto', store }` keeps what the pacer knows of each key, so that every
 * process using the same store paces that key as one (README.md, "Bulk work and rate limits").
 * `crm-integration-sdk/redis` has one over Redis or Valkey; `throttle: 'auto'` uses one in memory.
 *
 * Per key, a store keeps a schedule of turns (the time the next turn may go, a pause), the turns
 * given in the current phase, and what was learned of the key's rate. A phase ends with a refusal.
 * Each method is one atomic step on that state, on the store's own clock (milliseconds): a caller's
 * clock is never compared with it. The pace itself is worked out by the caller and passed in.
 *
 * A method may throw, reject or answer late: the SDK then paces the key in its process alone for
 * a while, warns once, and tries the store again later. The schedule may not outlive a few minutes
 * of disuse (no lock, no slot: a process that dies holds nothing); what was learned of a rate (one
 * that has a `rate`) is worth keeping longer, so that a tenant's next job, a night later, starts
 * at it (the SDK's stores keep it 7 days after the key's last use: `rememberMs`). `key` is the
 * tenant's API key, or the admin token: a store that keeps it outside the process must keep a
 * keyed hash of it, never the key itself, so that a rotated key starts cold.
 */
export interface PaceStore {
  /**
   * Reserves `count` turns (1 or more), `intervalMs` apart, in the key's current phase: the first
   * at the time the next turn may go (not before the pause, not before now; a little before now
   * when it is less than 50 ms late), the next turn then goes after the last of these. The first
   * reservation of a phase sets its start. `intervalMs` is 0 or more: 0 with one turn is how a
   * process whose pace is stale (its first lease, or its first after a refusal) asks for the rate
   * learned, leaving no time after its turn.
   *
   * `lateMs`, when given: how late this process's requests have been going after their turns
   * lately (its work between a turn and its send). The store keeps it with the reservation, as it
   * is, for whoever finds the phase's rate: the others' sends it never saw are placed by it. A
   * store of its own may leave it out; the rate is then found as if every process were as late as
   * the one finding it.
   */
  reserve(key: string, count: number, intervalMs: number, lateMs?: number): PaceLease | Promise<PaceLease>;
  /**
   * A refusal of turn `turn` of phase `phase`. When `phase` is still the current one, it ends:
   * the key is paused for `pauseMs`, a new phase starts with its turns numbered from 0, and the
   * answer is the ended phase's reservations, its first 500 at most (so that its caller finds the
   * rate); what was learned stays until `learn()` replaces it. Otherwise
   * (another process's refusal ended it first) nothing changes, and the answer is undefined.
   */
  refuse(
    key: string,
    phase: number,
    turn: number,
    pauseMs: number,
  ): readonly PaceReservation[] | undefined | Promise<readonly PaceReservation[] | undefined>;
  /**
   * What was learned from a phase that ended: it replaces what was learned before, stamped with
   * the store's time, unless `phase` (the one after it) is no longer current.
   */
  learn(key: string, phase: number, learned: PaceLearned): void | Promise<void>;
}

/** Turns a store gave: when the first may go, and what the store knows of the key. */
export interface PaceLease {
  /** The key's current phase. */
  readonly phase: number;
  /** The number of the first turn given, within the phase: turns are numbered 0, 1, 2… */
  readonly turn: number;
  /** Milliseconds from now (the store's now) until the first turn; 0 or more. */
  readonly delayMs: number;
  /** The store's clock (epoch milliseconds), when it answered. */
  readonly now: number;
  /** When the phase's first turn went, on the store's clock. */
  readonly startedAt: number;
  /**
   * What was last learned, when (the store's clock), and, where the store counts them, how many
   * refusals it took (every phase the key's knowledge rests on, from the first job that learned
   * it); undefined until something is.
   */
  readonly learned: (PaceLearned & { readonly at: number; readonly refusals?: number | undefined }) | undefined;
}

/** One reservation of a phase: turns `turn` to `turn + count - 1`, from `at` (the store's clock), `intervalMs` apart. */
export interface PaceReservation {
  /** The number of its first turn. */
  readonly turn: number;
  /** How many turns it held. */
  readonly count: number;
  /** When its first turn was to go, on the store's clock. */
  readonly at: number;
  /** The time between its turns. */
  readonly intervalMs: number;
  /** How late its process's requests were going after their turns (`reserve()`'s `lateMs`), if it said. */
  readonly lateMs?: number | undefined;
}

/** What a phase taught of a key's rate, in requests a second. */
export interface PaceLearned {
  /** The rate found, if one was. */
  readonly rate?: number | undefined;
  /** The highest rate the pace may climb to without a refusal, before the slower search for a raised limit. */
  readonly ceiling?: number | undefined;
  /** Where the pace starts when no rate is known yet. */
  readonly ramp?: number | undefined;
  /**
   * How long (ms) the pace keeps to its ceiling without a refusal before it searches past it: a few
   * seconds where the ceiling is a guess (times that disagree with the outcomes, or a refusal a few
   * requests into a phase paced at a known rate), 30 s otherwise.
   */
  readonly quietMs?: number | undefined;
  /**
   * A fingerprint of the base URL the rate was learned from (set by the SDK): a pacer of another
   * base URL leaves it unused, since another server limits the key otherwise. A store keeps it as
   * it is given.
   */
  readonly base?: string | undefined;
}
