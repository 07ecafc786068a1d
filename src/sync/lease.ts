import type { SyncJournalLock, SyncJournalLockOptions, SyncJournalTakeover } from './journal';
import { SyncJournalError } from './journal-error';

/** A run lock's lease by default: a dead holder blocks a new run for this long, at most. */
const DEFAULT_LEASE_MS = 30_000;

/** Checks a journal's `leaseMs` option: from 100 ms (tests) to an hour. */
export function leaseOption(leaseMs: unknown, factory: string): number {
  if (leaseMs === undefined) return DEFAULT_LEASE_MS;
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 100 || leaseMs > 3_600_000) {
    throw new TypeError(`${factory}: leaseMs must be an integer from 100 to 3,600,000, got ${String(leaseMs)}.`);
  }
  return leaseMs;
}

/** A tenant's lock as its journal stores it. */
export interface LeaseRow {
  readonly runId: string;
  /** Its holder: a random UUID of the lock, never a pid or a host name. */
  readonly token: string;
  /** Moved by every renewal: a contender watches it. */
  readonly version: number;
  /** The holder's lease: a contender waits this long, not its own. */
  readonly leaseMs: number;
  /** When it was taken, by the holder's wall clock: shown, never compared. */
  readonly takenAt: number;
}

/** One tenant's lock in a journal's storage; each step atomic. */
export interface LeaseStore {
  read(): LeaseRow | undefined | Promise<LeaseRow | undefined>;
  /** Writes `row` only while the stored lock is still `seen` (same token and version; undefined: none). */
  take(seen: LeaseRow | undefined, row: LeaseRow): boolean | Promise<boolean>;
  /** Moves the version of the lock of `token`; false when it is no longer that token's. */
  renew(token: string): boolean | Promise<boolean>;
  /** Deletes the lock of `token`, when it is still that token's. */
  release(token: string): void | Promise<void>;
}

/** What a contender of this process knows of a lock this process holds. */
interface HeldHere {
  /** Its last renewal's start, on this process's monotonic clock. */
  readonly renewedAt: number;
  lose(why: string): void;
}

/**
 * The locks this process holds, by token: a contender in this process judges them at once by
 * their last renewal, with no watch, and tells the holder at once when it takes one over (one map
 * per thread, even were this module loaded twice).
 */
const HERE = heldHere();

function heldHere(): Map<string, HeldHere> {
  const global = globalThis as Record<symbol, Map<string, HeldHere> | undefined>;
  const name = Symbol.for('crm-integration-sdk.sync.leases');
  const held = global[name] ?? new Map<string, HeldHere>();
  global[name] = held;
  return held;
}

const TAKEN_OVER = 'it was taken over by another run, after it went unrenewed for its lease (this process stalled)';

const now = (): number => performance.now();

/** How often a contender looks at a lock's version: a tenth of the lease, at most a second. */
const lookMs = (leaseMs: number): number => Math.min(1000, leaseMs / 10);

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

const moved = (a: LeaseRow, b: LeaseRow): boolean => a.token !== b.token || a.version !== b.version;

/**
 * Takes a tenant's lock (see SyncJournal.lock for the contract): at once when it is free; else
 * watches the holder's version, rejecting with `refuse(holder)` once it moves (or at once when its
 * holder is a lock of this process renewed within its lease), and taking it over by a
 * compare-and-swap once it has stood still for the holder's whole lease.
 */
async function takeLease(
  store: LeaseStore,
  runId: string,
  leaseMs: number,
  options: SyncJournalLockOptions | undefined,
  refuse: (holder: LeaseRow) => SyncJournalError,
  onRelease: () => void,
): Promise<Held> {
  const signal = options?.signal;
  const token = globalThis.crypto.randomUUID();
  let seen = await store.read();
  let since = now();
  for (;;) {
    signal?.throwIfAborted();
    if (seen === undefined) {
      const row = { runId, token, version: 0, leaseMs, takenAt: Date.now() };
      if (await store.take(undefined, row)) return new Held(store, row, undefined, onRelease);
      // Another run took it between the look and the write.
      seen = await store.read();
      since = now();
      continue;
    }
    const here = HERE.get(seen.token);
    if (here !== undefined) {
      // A lock of this process: its last renewal is on this clock.
      if (now() - here.renewedAt < seen.leaseMs) throw refuse(seen);
    } else if (now() - since < seen.leaseMs) {
      await pause(lookMs(seen.leaseMs), signal);
      const again = await store.read();
      if (again !== undefined && moved(seen, again)) throw refuse(again);
      if (again === undefined) seen = undefined;
      continue;
    }
    // A whole lease without a renewal: taken over, if it is still as seen.
    const row = { runId, token, version: seen.version + 1, leaseMs, takenAt: Date.now() };
    if (await store.take(seen, row)) {
      here?.lose(TAKEN_OVER);
      return new Held(store, row, { runId: seen.runId, takenAt: seen.takenAt }, onRelease);
    }
    // Another contender took it first, or its holder renewed it at the last moment: it is live.
    const after = await store.read();
    if (after !== undefined) throw refuse(after);
    seen = undefined;
  }
}

/** A lock held: renewed every third of its lease until released, lost, or stopped. */
class Held implements SyncJournalLock {
  readonly #store: LeaseStore;
  /** The lock's token: a journal refuses this run's writes once the stored lock is not this one's. */
  readonly token: string;
  readonly #controller = new AbortController();
  #renewedAt: number;
  readonly #leaseMs: number;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #onRelease: () => void;
  readonly takenOver: SyncJournalTakeover | undefined;
  #renewing = false;
  #done = false;

  constructor(store: LeaseStore, row: LeaseRow, takenOver: SyncJournalTakeover | undefined, onRelease: () => void) {
    this.#store = store;
    this.token = row.token;
    this.takenOver = takenOver;
    this.#onRelease = onRelease;
    this.#renewedAt = now();
    this.#leaseMs = row.leaseMs;
    HERE.set(row.token, this);
    this.#timer = setInterval(() => void this.#renew(row.leaseMs), row.leaseMs / 3);
    // A run keeps its process alive by its own work; its lock alone does not.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  get renewedAt(): number {
    return this.#renewedAt;
  }

  /** Whether a whole lease went by since its last renewal (this process stalled): another run may have taken it over. */
  get late(): boolean {
    return now() - this.#renewedAt >= this.#leaseMs;
  }

  /** Renews it by `renew` (a compare-and-swap in the caller's transaction); false when it is no longer this lock's. */
  renewedBy(renew: (token: string) => boolean): boolean {
    const started = now();
    if (!renew(this.token)) return false;
    this.#renewedAt = started;
    return true;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the lock is lost (taken over, or not renewed within its lease). */
  get lost(): boolean {
    return this.#controller.signal.aborted;
  }

  async #renew(leaseMs: number): Promise<void> {
    if (this.#renewing || this.#done) return;
    this.#renewing = true;
    // The lease runs from the renewal's start: a contender's watch began after it.
    const started = now();
    try {
      if (await this.#store.renew(this.token)) {
        this.#renewedAt = started;
      } else {
        this.lose(TAKEN_OVER);
      }
    } catch {
      // Tried again at the next third of the lease; past the lease, another run may have taken it.
      if (now() - this.#renewedAt >= leaseMs) this.lose('it could not be renewed within its lease');
    } finally {
      this.#renewing = false;
    }
  }

  /** Stops renewing and aborts the signal: another run may hold the lock now. */
  lose(why: string): void {
    this.#stop();
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(
      new SyncJournalError('locked', `This run lost the tenant's lock: ${why}. It stops, and writes nothing more.`),
    );
  }

  /** Stops renewing, leaving the lock as it is (its journal closes: as if its process died). */
  abandon(): void {
    this.lose('its journal was closed while the run held it');
  }

  #stop(): void {
    this.#done = true;
    clearInterval(this.#timer);
    HERE.delete(this.token);
  }

  async release(): Promise<void> {
    const lost = this.lost;
    this.#stop();
    this.#onRelease();
    // A lock lost is another run's now: its row is left alone.
    if (!lost) await this.#store.release(this.token);
  }
}

/**
 * The locks one journal's runs hold, by tenant: a run's writes are refused (fence()) once it lost
 * its lock, and close() leaves them to be taken over (abandon()).
 */
export class RunLocks {
  readonly #held = new Map<string, Held>();
  readonly #leaseMs: number;

  constructor(leaseMs: number) {
    this.#leaseMs = leaseMs;
  }

  async take(
    tenant: string,
    runId: string,
    store: LeaseStore,
    options: SyncJournalLockOptions | undefined,
    refuse: (holder: LeaseRow) => SyncJournalError,
  ): Promise<SyncJournalLock> {
    const held = await takeLease(store, runId, this.#leaseMs, options, refuse, () => {
      if (this.#held.get(tenant) === held) this.#held.delete(tenant);
    });
    this.#held.set(tenant, held);
    return held;
  }

  /**
   * Throws when a run of this journal held `tenant`'s lock and lost it, called in the write's
   * transaction: `stored()` is the token the storage holds now. After a stall past the lease (no
   * renewal could run), whether another run took it over is not known from the token alone, as a
   * contender may be about to: the lock is renewed by `renew` (a compare-and-swap on its token) in
   * that same transaction, so that the write goes only while the lock is still this run's.
   */
  fence(tenant: string, stored: () => string | undefined, renew: (token: string) => boolean): void {
    const held = this.#held.get(tenant);
    if (held === undefined) return;
    if (!held.lost && (held.late ? held.renewedBy(renew) : stored() === held.token)) return;
    held.lose('another run took it over');
    throw held.signal.reason;
  }

  /** Stops renewing every lock held, leaving it to be taken over, as a process that dies does. */
  abandon(): void {
    for (const held of this.#held.values()) held.abandon();
    this.#held.clear();
  }
}
