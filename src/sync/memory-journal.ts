import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalEntry,
  SyncJournalLock,
  SyncJournalLockHolder,
  SyncJournalLockOptions,
  SyncJournalPace,
  SyncJournalRun,
  SyncType,
} from './journal';
import { SYNC_HISTORY_KEPT } from './journal';
import { SyncJournalError } from './journal-error';
import { type LeaseRow, type LeaseStore, leaseOption, RunLocks } from './lease';

/** Options of {@link memoryJournal}. */
export interface MemoryJournalOptions {
  /**
   * How long a run lock holds without renewal, in milliseconds (default 30,000; from 100 to
   * 3,600,000). Its holder renews it every third of that; one not renewed that long is taken over
   * (see `SyncJournal.lock`). Short leases are for tests.
   */
  readonly leaseMs?: number | undefined;
}

/** The reference engine: each method is the step every journal takes, on a sorted map per tenant and type. */
class MemoryJournal implements SyncJournal {
  readonly #entries = new Map<string, Map<string, SyncJournalEntry>>();
  /** Each tenant's lock, as a shared store holds it: its holder renews it by moving its version. */
  readonly #locks = new Map<string, LeaseRow & { renewedAt: number }>();
  readonly #held: RunLocks;
  readonly #runs = new Map<string, Map<string, SyncJournalRun>>();
  /** Each tenant's paces remembered, by key fingerprint and base URL. */
  readonly #paces = new Map<string, Map<string, SyncJournalPace>>();

  constructor(leaseMs: number) {
    this.#held = new RunLocks(leaseMs);
  }

  open(): void {}

  lock(tenant: string, runId: string, options?: SyncJournalLockOptions): Promise<SyncJournalLock> {
    const locks = this.#locks;
    const store: LeaseStore = {
      read: () => locks.get(tenant),
      take: (seen, row) => {
        const now = locks.get(tenant);
        if (now?.token !== seen?.token || now?.version !== seen?.version) return false;
        locks.set(tenant, { ...row, renewedAt: Date.now() });
        return true;
      },
      renew: (token) => this.#renew(tenant, token),
      release: (token) => {
        if (locks.get(tenant)?.token === token) locks.delete(tenant);
      },
    };
    return this.#held.take(
      tenant,
      runId,
      store,
      options,
      (holder) =>
        new SyncJournalError('locked', `Another sync run (${holder.runId}) holds the journal for tenant ${tenant}.`),
    );
  }

  /** Moves the version of `tenant`'s lock of `token`; false when it is no longer that token's. */
  #renew(tenant: string, token: string): boolean {
    const now = this.#locks.get(tenant);
    if (now?.token !== token) return false;
    this.#locks.set(tenant, { ...now, version: now.version + 1, renewedAt: Date.now() });
    return true;
  }

  lockHolder(tenant: string): SyncJournalLockHolder | undefined {
    const lock = this.#locks.get(tenant);
    return lock && { runId: lock.runId, takenAt: lock.takenAt, renewedAt: lock.renewedAt, leaseMs: lock.leaseMs };
  }

  get(tenant: string, type: SyncType, keys: readonly string[]): ReadonlyMap<string, SyncJournalEntry> {
    const table = this.#table(tenant, type);
    const found = new Map<string, SyncJournalEntry>();
    for (const key of keys) {
      const entry = table?.get(key);
      if (entry) found.set(key, entry);
    }
    return found;
  }

  list(tenant: string, type: SyncType, after: string | undefined, limit: number): readonly SyncJournalEntry[] {
    const table = this.#table(tenant, type);
    if (!table) return [];
    // Sorting on each page is O(n log n) per page: fine for tests and small jobs, which is what this engine is for.
    const keys = [...table.keys()].filter((key) => after === undefined || key > after).sort(compareKeys);
    return keys.slice(0, limit).map((key) => table.get(key) as SyncJournalEntry);
  }

  pending(tenant: string): readonly SyncJournalEntry[] {
    const pending: SyncJournalEntry[] = [];
    for (const [id, table] of this.#entries) {
      if (!id.startsWith(`${tenant}\u0000`)) continue;
      for (const entry of table.values()) {
        if (entry.state === 'sending' || entry.state === 'inDoubt') pending.push(entry);
      }
    }
    return pending;
  }

  write(tenant: string, change: SyncJournalChange): void {
    this.#held.fence(
      tenant,
      () => this.#locks.get(tenant)?.token,
      (token) => this.#renew(tenant, token),
    );
    for (const entry of change.put ?? []) {
      const id = `${tenant}\u0000${entry.type}`;
      let table = this.#entries.get(id);
      if (!table) {
        table = new Map();
        this.#entries.set(id, table);
      }
      table.set(entry.key, { ...entry });
    }
    for (const { type, key } of change.remove ?? []) this.#table(tenant, type)?.delete(key);
  }

  /** Stops renewing the locks its runs hold, leaving them to be taken over, as a process that dies does. */
  close(): void {
    this.#held.abandon();
  }

  tenants(): readonly string[] {
    const tenants = new Set([...this.#runs.keys(), ...this.#locks.keys()]);
    for (const [id, table] of this.#entries) if (table.size > 0) tenants.add(id.slice(0, id.indexOf('\u0000')));
    return [...tenants].sort(compareKeys);
  }

  paces(tenant: string): readonly SyncJournalPace[] {
    return [...(this.#paces.get(tenant)?.values() ?? [])];
  }

  keepPace(tenant: string, pace: SyncJournalPace): void {
    const paces = this.#paces.get(tenant) ?? new Map<string, SyncJournalPace>();
    this.#paces.set(tenant, paces);
    paces.set(`${pace.key} ${pace.baseUrl}`, { ...pace });
  }

  addRun(tenant: string, run: SyncJournalRun): void {
    let runs = this.#runs.get(tenant);
    if (!runs) {
      runs = new Map();
      this.#runs.set(tenant, runs);
    }
    runs.set(run.runId, { ...run });
    if (run.finishedAt !== undefined && runs.size > SYNC_HISTORY_KEPT) {
      const oldest = [...runs.values()].sort((a, b) => b.startedAt - a.startedAt).slice(SYNC_HISTORY_KEPT);
      for (const old of oldest) runs.delete(old.runId);
    }
  }

  runs(tenant: string, limit: number): readonly SyncJournalRun[] {
    const runs = [...(this.#runs.get(tenant)?.values() ?? [])];
    return runs.sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
  }

  #table(tenant: string, type: SyncType): Map<string, SyncJournalEntry> | undefined {
    return this.#entries.get(`${tenant}\u0000${type}`);
  }
}

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A {@link SyncJournal} in this process's memory: for tests, and the reference for an engine of
 * your own. It forgets everything when the process ends, so it protects a run from duplicates
 * only within the process; use `sqliteJournal()` for a job. Its run locks keep the lease contract
 * of `SyncJournal.lock` as a shared store would; `close()` stops renewing them, as a process that
 * dies would, and the journal may be opened again.
 *
 * @param options - The locks' lease (`leaseMs`), for tests.
 * @example
 * ```ts
 * const sync = new CrmSync(crm, { journal: memoryJournal() });
 * ```
 */
export const memoryJournal = (options: MemoryJournalOptions = {}): SyncJournal =>
  new MemoryJournal(leaseOption(options?.leaseMs, 'memoryJournal()'));
