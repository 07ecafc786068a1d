import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalClaim,
  SyncJournalClaims,
  SyncJournalEntry,
  SyncJournalKey,
} from './journal';

/**
 * The journal's writes of one run, in order: outcomes are buffered and written with the next
 * intents (or every 256), since losing one to a crash costs a re-send of a PUT or, for a create,
 * a look-up of a record in doubt, never a duplicate. Intents are never buffered.
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

  constructor(journal: SyncJournal, tenant: string, runId: string) {
    this.#journal = journal;
    this.#tenant = tenant;
    this.#runId = runId;
    this.claims = journal.claims;
  }

  /**
   * Writes the intents of `jobs` before they go: with claims, each is claimed (after what is
   * buffered is written) and the answer says whether the job is this run's to send; without,
   * they are written with what is buffered.
   */
  async intend(jobs: readonly Job[]): Promise<(SyncJournalClaim | undefined)[]> {
    const claims = this.claims;
    const asked = jobs.filter((job) => job.intent !== undefined);
    if (asked.length === 0) return jobs.map(() => undefined);
    if (!claims) {
      await this.flush(asked.map((job) => job.intent as SyncJournalEntry));
      return jobs.map(() => undefined);
    }
    await this.flush();
    const answers = await claims.claim(
      this.#tenant,
      this.#runId,
      asked.map((job) => ({ intent: job.intent as SyncJournalEntry, resend: job.resend === true })),
    );
    const byJob = new Map(asked.map((job, i) => [job, answers[i]]));
    return jobs.map((job) => byJob.get(job));
  }

  /** The outcome of a claimed create, written only while its claim holds `fence` (false: another run took it over). */
  commit(change: SyncJournalChange, fence: number): Promise<boolean> {
    return (this.claims as SyncJournalClaims).commit(this.#tenant, change, fence);
  }

  /** Removes the intent of a claimed create that was not sent, and its claim, while the claim is this run's. */
  release(intent: SyncJournalEntry, fence: number): void {
    // At once, even after a failed write: a claim never released is renewed by this process until it ends.
    const released = this.commit({ remove: [intent] }, fence);
    this.#chain = Promise.all([this.#chain, released]).then(() => {});
    // Its failure reaches the run through the next flush(); a run that ends first (on another
    // error) must not leave it an unhandled rejection, which ends a Node process.
    this.#chain.catch(() => {});
  }

  put(entry: SyncJournalEntry): void {
    const id = `${entry.type}\u0000${entry.key}`;
    this.#removes.delete(id);
    this.#puts.set(id, entry);
    if (this.#puts.size + this.#removes.size >= 256) void this.flush().catch(() => {});
  }

  remove(key: SyncJournalKey): void {
    const id = `${key.type}\u0000${key.key}`;
    this.#puts.delete(id);
    this.#removes.set(id, { type: key.type, key: key.key });
    if (this.#puts.size + this.#removes.size >= 256) void this.flush().catch(() => {});
  }

  /** Writes what is buffered and `intents` in one change; resolves when it is durable, after every earlier write. */
  flush(intents: readonly SyncJournalEntry[] = []): Promise<void> {
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

/** One request of a run: a create carries the intent to write before it goes. */
export interface Job {
  readonly intent: SyncJournalEntry | undefined;
  /** A create of a record in doubt that was looked for and not found (claims may take its entry). */
  readonly resend?: boolean;
  /**
   * Sends and records the outcome; never rejects (a failure is an outcome). `claim` is the
   * shared journal's answer to the intent: a job whose key another run holds sends nothing.
   */
  run(claim?: SyncJournalClaim): Promise<void>;
}

interface Ready {
  readonly job: Job;
  readonly claim: SyncJournalClaim | undefined;
}

/**
 * Sends a run's jobs, `concurrency` at a time (PERFORMANCE.md, "Intents written in groups"). Intents go to the journal in groups: when fewer
 * than half a group is ready, the next `concurrency` jobs' intents are written in one change
 * (one fsync for up to `concurrency` creates), and only then do those jobs go. So at most
 * 2 x `concurrency` creates are ever *sending* without having been answered.
 */
export class Sender {
  readonly #concurrency: number;
  readonly #committer: Committer;
  #queue: Job[] = [];
  #head = 0;
  readonly #ready: Ready[] = [];
  #workers = 0;
  #spawning = false;
  #refill: Promise<void> | undefined;
  #stopped = false;
  #failure: { error: unknown } | undefined;
  #idle: (() => void)[] = [];
  #space: { limit: number; resolve: () => void }[] = [];

  constructor(concurrency: number, committer: Committer) {
    this.#concurrency = concurrency;
    this.#committer = committer;
  }

  /** Jobs waiting, not yet sent. */
  get backlog(): number {
    return this.#queue.length - this.#head + this.#ready.length;
  }

  /** A journal write that failed: the run must reject with it. */
  get failure(): { error: unknown } | undefined {
    return this.#failure;
  }

  push(job: Job): void {
    if (this.#stopped) return;
    this.#queue.push(job);
    // Workers start after the jobs pushed in this turn are all queued, so that the first refill
    // writes the intents of a whole group rather than the first job's alone.
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

  /**
   * Starts no more jobs. Jobs whose intent was written but which were not sent have their
   * intent removed, so that nothing unsent is ever taken for in doubt.
   */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#queue = [];
    this.#head = 0;
    for (const ready of this.#ready.splice(0)) this.#unsent(ready);
    for (const { resolve } of this.#space.splice(0)) resolve();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  async #work(): Promise<void> {
    try {
      for (;;) {
        if (this.#stopped) break;
        if (!this.#refill && this.#ready.length < Math.ceil(this.#concurrency / 2) && this.#head < this.#queue.length) {
          void this.#startRefill();
        }
        const ready = this.#ready.shift();
        if (!ready) {
          if (!this.#refill) break;
          await this.#refill;
          continue;
        }
        this.#wake();
        await ready.job.run(ready.claim);
      }
    } finally {
      this.#workers--;
      if (this.#workers === 0) {
        for (const { resolve } of this.#space.splice(0)) resolve();
        for (const resolve of this.#idle.splice(0)) resolve();
      }
    }
  }

  /** An intent written for a job that will not go: removed (with its claim, while it is this run's). */
  #unsent({ job, claim }: Ready): void {
    if (!job.intent) return;
    if (claim === undefined) this.#committer.remove(job.intent);
    else if (claim.outcome === 'claimed') this.#committer.release(job.intent, claim.fence);
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

  /** One refill at a time: the next `concurrency` jobs, their intents written in one change. */
  #startRefill(): void {
    const refill: Promise<void> = this.#fill().finally(() => {
      if (this.#refill === refill) this.#refill = undefined;
    });
    this.#refill = refill;
  }

  async #fill(): Promise<void> {
    const jobs = this.#queue.slice(this.#head, this.#head + this.#concurrency);
    this.#head += jobs.length;
    if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    try {
      const claims = await this.#committer.intend(jobs);
      const ready = jobs.map((job, i) => ({ job, claim: claims[i] }));
      if (this.#stopped) {
        for (const item of ready) this.#unsent(item);
      } else {
        this.#ready.push(...ready);
      }
    } catch (error) {
      this.#failure ??= { error };
      this.stop();
    }
  }
}
