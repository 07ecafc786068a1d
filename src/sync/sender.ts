import type { SyncJournal, SyncJournalEntry, SyncJournalKey } from './journal';

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

  constructor(journal: SyncJournal, tenant: string) {
    this.#journal = journal;
    this.#tenant = tenant;
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
    return this.#chain;
  }
}

/** One request of a run: a create carries the intent to write before it goes. */
export interface Job {
  readonly intent: SyncJournalEntry | undefined;
  /** Sends and records the outcome; never rejects (a failure is an outcome). */
  run(): Promise<void>;
}

/**
 * Sends a run's jobs, `concurrency` at a time. Intents go to the journal in groups: when fewer
 * than half a group is ready, the next `concurrency` jobs' intents are written in one change
 * (one fsync for up to `concurrency` creates), and only then do those jobs go. So at most
 * 2 x `concurrency` creates are ever *sending* without having been answered.
 */
export class Sender {
  readonly #concurrency: number;
  readonly #committer: Committer;
  #queue: Job[] = [];
  #head = 0;
  readonly #ready: Job[] = [];
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
    for (const job of this.#ready.splice(0)) {
      if (job.intent) this.#committer.remove(job.intent);
    }
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
        const job = this.#ready.shift();
        if (!job) {
          if (!this.#refill) break;
          await this.#refill;
          continue;
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
    const intents = jobs.flatMap((job) => (job.intent ? [job.intent] : []));
    try {
      if (intents.length > 0) await this.#committer.flush(intents);
      if (this.#stopped) {
        for (const intent of intents) this.#committer.remove(intent);
      } else {
        this.#ready.push(...jobs);
      }
    } catch (error) {
      this.#failure ??= { error };
      this.stop();
    }
  }
}
