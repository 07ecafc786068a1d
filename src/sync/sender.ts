import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalClaim,
  SyncJournalClaims,
  SyncJournalEntry,
  SyncJournalKey,
} from './journal';

/**
 * How long the outcome of a create waits for a group of intents to be written with: at the pace
 * of a busy run, a group comes sooner (one fsync for both); at a pause, the outcome goes alone.
 */
const OUTCOME_MS = 10;

/** An intent waiting at its request's send gate for the group commit that writes it (or a claim that reserves its key). */
interface Gated {
  readonly intent: SyncJournalEntry;
  readonly resend: boolean;
  /** A claim that reserves the key only (SyncJournalClaims.intend writes the intent at the gate). */
  readonly reserve: boolean;
  readonly resolve: (claim: SyncJournalClaim | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/** A reserved key's intent at its send gate, written under its claim's fence (or withdrawn). */
interface Fenced {
  readonly intent: SyncJournalEntry;
  readonly fence: number;
  readonly withdrawn: boolean;
  readonly resolve: (held: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/** The next turn of the event loop: gates passed in this one are written together. */
const nextTurn = (): Promise<void> =>
  new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

/**
 * The journal's writes of one run, in order: outcomes are buffered and written with the next
 * intents (or every 256), since losing one to a crash costs a re-send of a PUT or, for a create,
 * a look-up of a record in doubt, never a duplicate. Intents are never buffered: each is written
 * when its request is at its send gate (call/unsent.ts), about to leave, and the request waits
 * for it; the intents of requests that reach their gates together (in one turn of the event loop,
 * or while the previous group is being written) go in one change, one fsync (group commit).
 */
export class Committer {
  readonly #journal: SyncJournal;
  readonly #tenant: string;
  readonly #puts = new Map<string, SyncJournalEntry>();
  readonly #removes = new Map<string, SyncJournalKey>();
  #chain: Promise<void> = Promise.resolve();
  /** A shared journal's claims (SyncJournal.claims): intents are claimed, outcomes of creates fenced. */
  readonly claims: SyncJournalClaims | undefined;
  readonly #runId: string;
  /**
   * This run's claims not yet committed or released. The journal renews a process's claims while
   * it holds them, and a run stopped by its journal (Postgres lost for less than a lease) left
   * some uncommitted: renewed for as long as the process lived, their keys were never free again,
   * and the worker's next run waited on them for good. end() gives them up.
   */
  readonly #fences = new Set<number>();
  /** Intents at their gates, not yet in a group being written. */
  #gated: Gated[] = [];
  /** Reserved keys' intents at their gates (or withdrawn), not yet in a group being written. */
  #fenced: Fenced[] = [];
  /** Whether a group of intents is being gathered or written. */
  #grouping = false;
  /** The timer that writes the outcomes of creates no group of intents took (put, `soon`). */
  #soon: ReturnType<typeof setTimeout> | undefined;

  constructor(journal: SyncJournal, tenant: string, runId: string) {
    this.#journal = journal;
    this.#tenant = tenant;
    this.#runId = runId;
    this.claims = journal.claims;
  }

  /**
   * Writes `intent` before its request leaves, with the other intents at their gates: resolves
   * once it is durable. With claims, it is claimed (after what is buffered is written), and the
   * answer says whether the request is this run's to send; a `resend` is a create of a record in
   * doubt that was looked for and not found (claims may take its entry).
   */
  intend(intent: SyncJournalEntry, resend = false): Promise<SyncJournalClaim | undefined> {
    return new Promise((resolve, reject) => {
      this.#gated.push({ intent, resend, reserve: false, resolve, reject });
      this.#group();
    });
  }

  /**
   * Whether the shared journal reserves keys ahead and writes their intents at the gate
   * (SyncJournalClaims.intend): then a create waiting for its turn has written no intent, and a
   * worker killed meanwhile leaves its key free once its lease lapses, not in doubt.
   */
  get reserves(): boolean {
    return this.claims?.intend !== undefined && this.claims.release !== undefined;
  }

  /**
   * Claims `intent`'s key without writing the intent (see {@link Committer.reserves}), with the
   * other claims of this turn: taken before the request waits for its turn, so that a key another
   * worker holds never costs a turn of the fleet's pace.
   */
  reserve(intent: SyncJournalEntry, resend = false): Promise<SyncJournalClaim> {
    return new Promise((resolve, reject) => {
      this.#gated.push({
        intent,
        resend,
        reserve: true,
        resolve: (claim) => resolve(claim as SyncJournalClaim),
        reject,
      });
      this.#group();
    });
  }

  /**
   * Writes a reserved key's intent at its send gate, with the other intents at their gates, under
   * its claim's `fence`: resolves to whether the claim still held (false: nothing written, and the
   * request must not leave).
   */
  intendFenced(intent: SyncJournalEntry, fence: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#fenced.push({ intent, fence, withdrawn: false, resolve, reject });
      this.#group();
    });
  }

  /** {@link Committer.withdraw} of a reserved key's intent: its entry removed under its fence, its claim kept. */
  withdrawFenced(intent: SyncJournalEntry, fence: number): void {
    this.#fenced.push({ intent, fence, withdrawn: true, resolve: () => {}, reject: () => {} });
    this.#group();
  }

  /** Gives up a reserved key whose request never left: free at once rather than after its lease. */
  release(fence: number): void {
    this.#fences.delete(fence);
    // A release that fails leaves the claim to lapse with its lease: the key is then free all the same.
    void this.claims?.release?.(this.#tenant, [fence]).catch(() => {});
  }

  /**
   * Removes the intent of a create whose request was answered with nothing done and waits to be
   * sent again (SendGate.withdraw): written with the next group, or on the next turn, so that a
   * kill during the wait does not leave it in doubt. Its next `intend()` writes it again.
   */
  withdraw(intent: SyncJournalEntry): void {
    this.remove(intent);
    this.#group();
  }

  #group(): void {
    if (this.#grouping) return;
    this.#grouping = true;
    void this.#groups();
  }

  /** Writes the intents gated (and what is buffered), a group at a time, until none waits. */
  async #groups(): Promise<void> {
    try {
      await nextTurn();
      do {
        const group = this.#gated;
        const fenced = this.#fenced;
        this.#gated = [];
        this.#fenced = [];
        // The intents at their gates first: their requests wait to leave, claims only to wait their turn.
        if (fenced.length > 0) {
          try {
            const held = await this.#writeFenced(fenced);
            for (const [i, f] of fenced.entries()) {
              if (held[i] !== true) this.#fences.delete(f.fence);
              f.resolve(held[i] === true);
            }
          } catch (error) {
            for (const f of fenced) f.reject(error);
          }
        }
        try {
          const claims = await this.#write(group);
          for (const claim of claims) if (claim?.outcome === 'claimed') this.#fences.add(claim.fence);
          for (const [i, gated] of group.entries()) gated.resolve(claims[i]);
        } catch (error) {
          // A group of none (withdrawals alone): its failure fails the next write, which the run meets.
          for (const gated of group) gated.reject(error);
        }
      } while (this.#gated.length > 0 || this.#fenced.length > 0);
    } finally {
      this.#grouping = false;
    }
  }

  async #write(group: readonly Gated[]): Promise<readonly (SyncJournalClaim | undefined)[]> {
    const claims = this.claims;
    if (!claims) {
      await this.flush(group.map((gated) => gated.intent));
      return [];
    }
    await this.flush();
    if (group.length === 0) return [];
    return await claims.claim(
      this.#tenant,
      this.#runId,
      group.map(({ intent, resend, reserve }) => (reserve ? { intent, resend, reserve } : { intent, resend })),
    );
  }

  async #writeFenced(fenced: readonly Fenced[]): Promise<readonly boolean[]> {
    await this.flush();
    const claims = this.claims as SyncJournalClaims & Required<Pick<SyncJournalClaims, 'intend'>>;
    return await claims.intend(
      this.#tenant,
      fenced.map(({ intent, fence, withdrawn }) => (withdrawn ? { intent, fence, withdrawn } : { intent, fence })),
    );
  }

  /** The outcome of a claimed create, written only while its claim holds `fence` (false: another run took it over). */
  commit(change: SyncJournalChange, fence: number): Promise<boolean> {
    // Committed or not, the journal has released it (a commit that failed leaves it to lapse).
    this.#fences.delete(fence);
    return (this.claims as SyncJournalClaims).commit(this.#tenant, change, fence);
  }

  /**
   * The run is over, nothing of it in flight: gives up the claims it holds still (creates a
   * stopped run never sent, or never committed). Their keys are free at once, an entry of one
   * left `'sending'` taken over in doubt as when a lease lapses; where the journal cannot release
   * them (Postgres away), they are no longer renewed and lapse with their lease.
   */
  end(): void {
    const fences = [...this.#fences];
    this.#fences.clear();
    if (fences.length > 0) void this.claims?.release?.(this.#tenant, fences).catch(() => {});
  }

  /**
   * Buffers `entry`. `soon`: the outcome of a create, whose answer was read: written with the
   * next group of intents, or within {@link OUTCOME_MS} when none comes (a pause at the rate
   * limit), so that a kill does not leave in doubt a create whose answer came.
   */
  put(entry: SyncJournalEntry, soon = false): void {
    const id = `${entry.type}\u0000${entry.key}`;
    this.#removes.delete(id);
    this.#puts.set(id, entry);
    if (this.#puts.size + this.#removes.size >= 256) void this.flush().catch(() => {});
    else if (soon && this.#soon === undefined) {
      this.#soon = setTimeout(() => {
        this.#soon = undefined;
        void this.flush().catch(() => {});
      }, OUTCOME_MS);
    }
  }

  remove(key: SyncJournalKey): void {
    const id = `${key.type}\u0000${key.key}`;
    this.#puts.delete(id);
    this.#removes.set(id, { type: key.type, key: key.key });
    if (this.#puts.size + this.#removes.size >= 256) void this.flush().catch(() => {});
  }

  /** Writes what is buffered and `intents` in one change; resolves when it is durable, after every earlier write. */
  flush(intents: readonly SyncJournalEntry[] = []): Promise<void> {
    clearTimeout(this.#soon);
    this.#soon = undefined;
    for (const entry of intents) {
      const id = `${entry.type}\u0000${entry.key}`;
      this.#removes.delete(id);
      this.#puts.set(id, entry);
    }
    if (this.#puts.size === 0 && this.#removes.size === 0) return this.#chain;
    const change = { put: [...this.#puts.values()], remove: [...this.#removes.values()] };
    this.#puts.clear();
    this.#removes.clear();
    // A write that failed fails every later one: the run stops on the first.
    this.#chain = this.#chain.then(() => this.#journal.write(this.#tenant, change));
    this.#chain.catch(() => {});
    return this.#chain;
  }
}

/** One request of a run. */
export interface Job {
  /** Sends and records the outcome; never rejects (a failure is an outcome). */
  run(): Promise<void>;
}

/**
 * Sends a run's jobs, `concurrency` at a time. A create writes its intent at its send gate, once
 * its request has its turn (call/unsent.ts): a job waiting here, or for its turn, has written
 * nothing, and a run stopped or killed leaves none of them in doubt.
 */
export class Sender {
  readonly #concurrency: number;
  #queue: Job[] = [];
  #head = 0;
  #workers = 0;
  #spawning = false;
  #stopped = false;
  #idle: (() => void)[] = [];
  #space: { limit: number; resolve: () => void }[] = [];

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Jobs waiting, not yet started. */
  get backlog(): number {
    return this.#queue.length - this.#head;
  }

  push(job: Job): void {
    if (this.#stopped) return;
    this.#queue.push(job);
    // Workers start after the jobs pushed in this turn are all queued.
    if (!this.#spawning) {
      this.#spawning = true;
      queueMicrotask(() => {
        this.#spawning = false;
        while (!this.#stopped && this.#workers < this.#concurrency && this.#workers < this.backlog) {
          this.#workers++;
          void this.#work();
        }
      });
    }
  }

  /** Resolves when the backlog is under `limit` (the reader of a list waits on it, so that it never holds much data). */
  room(limit: number): Promise<void> {
    if (this.backlog < limit || (this.#workers === 0 && !this.#spawning)) return Promise.resolve();
    return new Promise((resolve) => this.#space.push({ limit, resolve }));
  }

  /** Resolves when every job pushed has been answered (or dropped, after stop()). */
  idle(): Promise<void> {
    if (this.#workers === 0 && !this.#spawning) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Starts no more jobs: those not started are dropped (they wrote nothing). */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#queue = [];
    this.#head = 0;
    for (const { resolve } of this.#space.splice(0)) resolve();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  async #work(): Promise<void> {
    try {
      while (!this.#stopped && this.#head < this.#queue.length) {
        const job = this.#queue[this.#head++] as Job;
        if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
          this.#queue = this.#queue.slice(this.#head);
          this.#head = 0;
        }
        this.#wake();
        await job.run();
      }
    } finally {
      this.#workers--;
      if (this.#workers === 0) {
        for (const { resolve } of this.#space.splice(0)) resolve();
        for (const resolve of this.#idle.splice(0)) resolve();
      }
    }
  }

  #wake(): void {
    if (this.#space.length === 0) return;
    const backlog = this.backlog;
    this.#space = this.#space.filter(({ limit, resolve }) => {
      if (backlog >= limit) return true;
      resolve();
      return false;
    });
  }
}
