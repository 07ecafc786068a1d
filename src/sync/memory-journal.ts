import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalEntry,
  SyncJournalLock,
  SyncJournalRun,
  SyncType,
} from './journal';
import { SyncJournalError } from './journal-error';

/** The reference engine: each method is the step every journal takes, on a sorted map per tenant and type. */
class MemoryJournal implements SyncJournal {
  readonly #entries = new Map<string, Map<string, SyncJournalEntry>>();
  readonly #locks = new Map<string, string>();
  readonly #runs = new Map<string, Map<string, SyncJournalRun>>();

  open(): void {}

  lock(tenant: string, runId: string): SyncJournalLock {
    const holder = this.#locks.get(tenant);
    if (holder !== undefined) {
      throw new SyncJournalError('locked', `Another sync run (${holder}) holds the journal for tenant ${tenant}.`);
    }
    this.#locks.set(tenant, runId);
    return {
      release: () => {
        if (this.#locks.get(tenant) === runId) this.#locks.delete(tenant);
      },
    };
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

  close(): void {}

  tenants(): readonly string[] {
    const tenants = new Set(this.#runs.keys());
    for (const [id, table] of this.#entries) if (table.size > 0) tenants.add(id.slice(0, id.indexOf('\u0000')));
    return [...tenants].sort(compareKeys);
  }

  addRun(tenant: string, run: SyncJournalRun): void {
    let runs = this.#runs.get(tenant);
    if (!runs) {
      runs = new Map();
      this.#runs.set(tenant, runs);
    }
    runs.set(run.runId, { ...run });
  }

  runs(tenant: string, limit: number): readonly SyncJournalRun[] {
    const runs = [...(this.#runs.get(tenant)?.values() ?? [])];
    return runs.sort((a, b) => b.finishedAt - a.finishedAt).slice(0, limit);
  }

  #table(tenant: string, type: SyncType): Map<string, SyncJournalEntry> | undefined {
    return this.#entries.get(`${tenant}\u0000${type}`);
  }
}

const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A {@link SyncJournal} in this process's memory: for tests, and the reference for an engine of
 * your own. It forgets everything when the process ends, so it protects a run from duplicates
 * only within the process; use `sqliteJournal()` for a job.
 *
 * @example
 * ```ts
 * const sync = new CrmSync(crm, { journal: memoryJournal() });
 * ```
 */
export const memoryJournal = (): SyncJournal => new MemoryJournal();
