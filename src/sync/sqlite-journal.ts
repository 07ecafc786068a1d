import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalEntry,
  SyncJournalLock,
  SyncJournalLockHolder,
  SyncJournalLockOptions,
  SyncJournalPace,
  SyncJournalRun,
  SyncJournalState,
  SyncType,
} from './journal';
import { SYNC_HISTORY_KEPT } from './journal';
import { SyncJournalError } from './journal-error';
import { type LeaseRow, type LeaseStore, leaseOption, RunLocks } from './lease';
import {
  createPrivate,
  FORMAT,
  FORMAT_1_LOCKS_READ,
  FORMAT_2_RUNS_READ,
  hasTable,
  kindOf,
  openReadOnly,
  readOnlyReady,
  SCHEMA,
  SQLITE_JOURNAL_APPLICATION_ID,
  upgrade,
  walMode,
} from './sqlite-file';
import { readPaces, writePace } from './sqlite-paces';

export { SQLITE_JOURNAL_APPLICATION_ID } from './sqlite-file';

const COLUMNS = 'type, key, state, crm_id, hash, data, attempted_at, request_id, run_id';

interface Row {
  type: string;
  key: string;
  state: string;
  crm_id: string | null;
  hash: string;
  data: string;
  attempted_at: number | null;
  request_id: string | null;
  run_id: string;
}

interface LockRow {
  run_id: string;
  token: string;
  version: number;
  lease_ms: number;
  taken_at: number;
  renewed_at: number;
}

const leaseOf = (row: LockRow): LeaseRow => ({
  runId: row.run_id,
  token: row.token,
  version: row.version,
  leaseMs: row.lease_ms,
  takenAt: row.taken_at,
});

const STATES: ReadonlySet<string> = new Set<SyncJournalState>(['sending', 'inDoubt', 'synced', 'deactivated']);
const TYPES: ReadonlySet<string> = new Set<SyncType>(['accounts', 'contacts', 'opportunities', 'activities']);

/** The opened file and its prepared statements, prepared once (PERFORMANCE.md, "The sync's journal in batches"). */
interface Opened {
  readonly db: DatabaseSync;
  readonly get: StatementSync;
  readonly list: StatementSync;
  readonly listFirst: StatementSync;
  readonly pending: StatementSync;
  readonly put: StatementSync;
  readonly remove: StatementSync;
  readonly lockRow: StatementSync;
  readonly lockPut: StatementSync;
  readonly lockRenew: StatementSync;
  readonly lockDelete: StatementSync;
}

function entryOf(row: Row, path: string): SyncJournalEntry {
  if (!STATES.has(row.state) || !TYPES.has(row.type)) {
    throw new SyncJournalError(
      'corrupt',
      `The sync journal ${path} holds an entry it cannot read (state ${row.state}).`,
    );
  }
  return {
    type: row.type as SyncType,
    key: row.key,
    state: row.state as SyncJournalState,
    crmId: row.crm_id ?? undefined,
    hash: row.hash,
    data: row.data,
    attemptedAt: row.attempted_at ?? undefined,
    requestId: row.request_id ?? undefined,
    runId: row.run_id,
  };
}

/** SQLite's own errors, as the journal's: SQLITE_CORRUPT (11) and SQLITE_NOTADB (26) mean a damaged file. */
function journalError(error: unknown, path: string, doing: string): SyncJournalError {
  if (error instanceof SyncJournalError) return error;
  const code = (error as { errcode?: unknown }).errcode;
  const corrupt = code === 11 || code === 26;
  const why = error instanceof Error ? error.message : String(error);
  return new SyncJournalError(
    corrupt ? 'corrupt' : 'unavailable',
    corrupt
      ? `The sync journal ${path} is corrupt (${why}): restore it from a backup; nothing was sent.`
      : `The sync journal ${path} could not be ${doing} (${why}).`,
    { cause: error },
  );
}

/** Options of {@link sqliteJournal}. */
export interface SqliteJournalOptions {
  /**
   * Opens the file for reading only, as `crm sync status` does: nothing is written to it nor made
   * beside it (no `-wal` or `-shm` file, no mark), so a user who may read the journal but not write
   * it (nor its directory) reads it, and a reader never leaves files a writer cannot use. A
   * journal no process has open is read as it is on disk; one a run has open is read through its
   * `-wal`. `lock()`, `write()` and `addRun()` are refused. Default: `false`.
   */
  readonly readOnly?: boolean | undefined;
  /**
   * How long a run lock holds without renewal, in milliseconds (default 30,000; from 100 to
   * 3,600,000). Its holder renews it every third of that; a lock not renewed that long (its
   * process died or stalled) is taken over by the next run, which watches it for the lease its
   * holder wrote (see `SyncJournal.lock`). Short leases are for tests.
   */
  readonly leaseMs?: number | undefined;
}

class SqliteJournal implements SyncJournal {
  readonly #path: string;
  readonly #readOnly: boolean;
  #opened: Opened | undefined;
  readonly #held: RunLocks;

  constructor(path: string, options: SqliteJournalOptions) {
    this.#path = path;
    this.#readOnly = options.readOnly === true;
    this.#held = new RunLocks(leaseOption(options.leaseMs, 'sqliteJournal()'));
  }

  /** The open() under way: runs starting at once on one journal share it. */
  #opening: Promise<void> | undefined;

  open(): Promise<void> {
    if (this.#opened) return Promise.resolve();
    // Each call opened a connection of its own and kept the last: a worker whose jobs started at
    // once left the others open for good, which close() never reached.
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  async #open(): Promise<void> {
    const sqlite = await import('node:sqlite').catch((error: unknown) => {
      throw new SyncJournalError(
        'unavailable',
        'sqliteJournal() needs node:sqlite (Node 22.13 or later, Deno 2, Bun 1.4), which this runtime does not have: use memoryJournal() or a journal of your own (README.md, "Loading and syncing data"). Nothing was sent.',
        { cause: error },
      );
    });
    let db: DatabaseSync | undefined;
    try {
      if (this.#readOnly) {
        db = await openReadOnly(sqlite.DatabaseSync, this.#path);
      } else {
        await createPrivate(this.#path);
        db = new sqlite.DatabaseSync(this.#path);
      }
      db.exec('PRAGMA busy_timeout = 10000;');
      const kind = kindOf(db, this.#path);
      if (this.#readOnly) readOnlyReady(db, kind, this.#path);
      else {
        await walMode(db);
        // The intent of a create must be on disk before its request goes: every commit is fsync'd.
        db.exec('PRAGMA synchronous = FULL;');
      }
      const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
      if (version > FORMAT) {
        throw new SyncJournalError(
          'newer-version',
          `The sync journal ${this.#path} was written by a newer version of crm-integration-sdk (format ${version}, this one reads ${FORMAT}): upgrade to use it; nothing was sent.`,
        );
      }
      if (!this.#readOnly) {
        if (version === 0)
          db.exec(`BEGIN IMMEDIATE; ${SCHEMA} PRAGMA application_id = ${SQLITE_JOURNAL_APPLICATION_ID}; COMMIT;`);
        else if (kind === 'unmarked') db.exec(`PRAGMA application_id = ${SQLITE_JOURNAL_APPLICATION_ID};`);
        if (version === 1 || version === 2) upgrade(db);
      } else {
        // Read as format 3, in the connection's memory: the file is not brought to format 3 by a reader.
        if (version === 1) db.exec(FORMAT_1_LOCKS_READ);
        if (version < FORMAT && hasTable(db, 'runs')) db.exec(FORMAT_2_RUNS_READ);
      }
      const check = db.prepare('PRAGMA quick_check(1)').get() as { quick_check: string } | undefined;
      if (check?.quick_check !== 'ok') {
        throw new SyncJournalError(
          'corrupt',
          `The sync journal ${this.#path} is corrupt (${check?.quick_check}): restore it from a backup; nothing was sent.`,
        );
      }
      this.#opened = {
        db,
        get: db.prepare(
          `SELECT ${COLUMNS} FROM entries WHERE tenant = ? AND type = ? AND key IN (SELECT value FROM json_each(?))`,
        ),
        list: db.prepare(
          `SELECT ${COLUMNS} FROM entries WHERE tenant = ? AND type = ? AND key > ? ORDER BY key LIMIT ?`,
        ),
        listFirst: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE tenant = ? AND type = ? ORDER BY key LIMIT ?`),
        pending: db.prepare(`SELECT ${COLUMNS} FROM entries WHERE tenant = ? AND state IN ('sending', 'inDoubt')`),
        put: db.prepare(`INSERT OR REPLACE INTO entries (tenant, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
        remove: db.prepare('DELETE FROM entries WHERE tenant = ? AND type = ? AND key = ?'),
        lockRow: db.prepare(
          'SELECT run_id, token, version, lease_ms, taken_at, renewed_at FROM locks WHERE tenant = ?',
        ),
        lockPut: db.prepare(
          'INSERT OR REPLACE INTO locks (tenant, run_id, token, version, lease_ms, taken_at, renewed_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        ),
        lockRenew: db.prepare('UPDATE locks SET version = version + 1, renewed_at = ? WHERE tenant = ? AND token = ?'),
        lockDelete: db.prepare('DELETE FROM locks WHERE tenant = ? AND token = ?'),
      };
    } catch (error) {
      try {
        db?.close();
      } catch {
        // Closing a file that failed to open has nothing left to report.
      }
      throw journalError(error, this.#path, 'opened');
    }
  }

  lock(tenant: string, runId: string, options?: SyncJournalLockOptions): Promise<SyncJournalLock> {
    this.#use();
    // Each step on the journal open now: a lock renewed after close() is not (close() stops it).
    const row = () => this.#use().lockRow.get(tenant) as LockRow | undefined;
    const store: LeaseStore = {
      read: () => {
        const found = this.#read(row);
        return found && leaseOf(found);
      },
      take: (seen, mine) => {
        let taken = false;
        this.#transaction('locked', () => {
          const now = row();
          if (now?.token !== seen?.token || now?.version !== seen?.version) return;
          const { runId: id, token, version, leaseMs, takenAt } = mine;
          this.#use().lockPut.run(tenant, id, token, version, leaseMs, takenAt, takenAt);
          taken = true;
        });
        return taken;
      },
      renew: (token) => {
        let renewed = false;
        this.#transaction('locked', () => {
          renewed = this.#use().lockRenew.run(Date.now(), tenant, token).changes > 0;
        });
        return renewed;
      },
      release: (token) => this.#transaction('unlocked', () => this.#use().lockDelete.run(tenant, token)),
    };
    return this.#held.take(tenant, runId, store, options, (holder) => {
      return new SyncJournalError(
        'locked',
        `Another sync run (${holder.runId}, renewing its lock) holds the journal ${this.#path} for tenant ${tenant}.`,
      );
    });
  }

  lockHolder(tenant: string): SyncJournalLockHolder | undefined {
    const row = this.#read(() => this.#use().lockRow.get(tenant) as LockRow | undefined);
    return row && { runId: row.run_id, takenAt: row.taken_at, renewedAt: row.renewed_at, leaseMs: row.lease_ms };
  }

  get(tenant: string, type: SyncType, keys: readonly string[]): ReadonlyMap<string, SyncJournalEntry> {
    const rows = this.#read(() => this.#use().get.all(tenant, type, JSON.stringify(keys)) as unknown as Row[]);
    const found = new Map<string, SyncJournalEntry>();
    for (const row of rows) found.set(row.key, entryOf(row, this.#path));
    return found;
  }

  list(tenant: string, type: SyncType, after: string | undefined, limit: number): readonly SyncJournalEntry[] {
    const opened = this.#use();
    const rows = this.#read(
      () =>
        (after === undefined
          ? opened.listFirst.all(tenant, type, limit)
          : opened.list.all(tenant, type, after, limit)) as unknown as Row[],
    );
    return rows.map((row) => entryOf(row, this.#path));
  }

  pending(tenant: string): readonly SyncJournalEntry[] {
    const rows = this.#read(() => this.#use().pending.all(tenant) as unknown as Row[]);
    return rows.map((row) => entryOf(row, this.#path));
  }

  write(tenant: string, change: SyncJournalChange): void {
    const opened = this.#use();
    this.#transaction('written', () => {
      // A run that lost its lock (it stalled past its lease) writes nothing over the new holder's.
      this.#held.fence(
        tenant,
        () => (opened.lockRow.get(tenant) as LockRow | undefined)?.token,
        (token) => opened.lockRenew.run(Date.now(), tenant, token).changes > 0,
      );
      for (const e of change.put ?? []) {
        opened.put.run(
          tenant,
          e.type,
          e.key,
          e.state,
          e.crmId ?? null,
          e.hash,
          e.data,
          e.attemptedAt ?? null,
          e.requestId ?? null,
          e.runId,
        );
      }
      for (const { type, key } of change.remove ?? []) opened.remove.run(tenant, type, key);
    });
  }

  tenants(): readonly string[] {
    const rows = this.#read(
      () =>
        this.#use()
          .db.prepare(
            'SELECT tenant FROM entries UNION SELECT tenant FROM runs UNION SELECT tenant FROM locks ORDER BY tenant',
          )
          .all() as unknown as { tenant: string }[],
    );
    return rows.map((row) => row.tenant);
  }

  paces(tenant: string): readonly SyncJournalPace[] {
    return this.#read(() => readPaces(this.#use().db, tenant));
  }

  keepPace(tenant: string, pace: SyncJournalPace): void {
    const { db } = this.#use();
    this.#transaction('written', () => writePace(db, tenant, pace));
  }

  addRun(tenant: string, run: SyncJournalRun): void {
    const opened = this.#use();
    this.#transaction('written', () => {
      opened.db
        .prepare(
          'INSERT OR REPLACE INTO runs (tenant, run_id, started_at, finished_at, recorded_at, summary) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(tenant, run.runId, run.startedAt, run.finishedAt ?? null, run.recordedAt, run.summary);
      // A run's end forgets the tenant's runs past the last SYNC_HISTORY_KEPT: the history stays bounded.
      if (run.finishedAt !== undefined) {
        opened.db
          .prepare(
            'DELETE FROM runs WHERE tenant = ? AND run_id NOT IN (SELECT run_id FROM runs WHERE tenant = ? ORDER BY started_at DESC, run_id LIMIT ?)',
          )
          .run(tenant, tenant, SYNC_HISTORY_KEPT);
      }
    });
  }

  runs(tenant: string, limit: number): readonly SyncJournalRun[] {
    const rows = this.#read(
      () =>
        this.#use()
          .db.prepare(
            'SELECT run_id, started_at, finished_at, recorded_at, summary FROM runs WHERE tenant = ? ORDER BY started_at DESC, run_id LIMIT ?',
          )
          .all(tenant, limit) as unknown as {
          run_id: string;
          started_at: number;
          finished_at: number | null;
          recorded_at: number;
          summary: string;
        }[],
    );
    return rows.map((row) => ({
      runId: row.run_id,
      startedAt: row.started_at,
      finishedAt: row.finished_at ?? undefined,
      recordedAt: row.recorded_at,
      summary: row.summary,
    }));
  }

  /** Closes the file. A lock a run still holds is no longer renewed: taken over after its lease, as a dead process's. */
  close(): void {
    this.#held.abandon();
    const opened = this.#opened;
    this.#opened = undefined;
    opened?.db.close();
  }

  #use(): Opened {
    if (!this.#opened) throw new SyncJournalError('unavailable', `The sync journal ${this.#path} is not open.`);
    return this.#opened;
  }

  #read<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw journalError(error, this.#path, 'read');
    }
  }

  /** One IMMEDIATE transaction: a second writer waits on busy_timeout rather than failing mid-way. */
  #transaction(doing: string, body: () => void): void {
    const { db } = this.#use();
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw journalError(error, this.#path, doing);
    }
    try {
      body();
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw journalError(error, this.#path, doing);
    }
  }
}

/**
 * A {@link SyncJournal} in a SQLite file at `path` (created when missing), through `node:sqlite`:
 * Node 22.13 or later, Deno 2 and Bun 1.4 (earlier Bun has only `bun:sqlite`: use
 * `memoryJournal()` or an engine of your own there). Nothing is loaded until the first run opens
 * it, and a runtime without `node:sqlite` gets a {@link SyncJournalError} then.
 *
 * Every commit is fsync'd (WAL, `synchronous = FULL`), so a create's intent is on disk before its
 * request goes. One file may serve many tenants; it holds no credential. Copy it only while no
 * run is on (or with SQLite's backup), with its `-wal` file. A long-lived process keeps the file
 * open between its runs, until `close()`: delete, move or restore the file only once every such
 * process has closed it or stopped (SQLite would apply its `-wal` to the file put in its place).
 *
 * A run's lock names its run by a random token and is renewed every third of its lease (default
 * 30 s), so that processes of one pid and host name (containers) are told apart, and a lock whose
 * process died, on any host, blocks the next run for one lease at most (`SyncJournal.lock`). A
 * file written by an earlier version (format 1 or 2) is brought to format 3 when opened, its run
 * log kept as the runs' history; a version that reads an earlier format only refuses it then.
 *
 * A file it makes is its owner's only (0600, and so its `-wal` and `-shm`), and marked as a
 * journal ({@link SQLITE_JOURNAL_APPLICATION_ID}); a file that holds anything and is not one is
 * refused as `'corrupt'` before anything is written to it. `{ readOnly: true }` reads a journal
 * without writing to it or beside it ({@link SqliteJournalOptions.readOnly}).
 *
 * @param path - The file.
 * @param options - The locks' lease (`leaseMs`), and `readOnly`.
 * @example
 * ```ts
 * import { CrmSync, sqliteJournal } from 'crm-integration-sdk/sync';
 *
 * const sync = new CrmSync(crm, { journal: sqliteJournal('./acme.sync.db') });
 * ```
 */
export const sqliteJournal = (path: string, options: SqliteJournalOptions = {}): SyncJournal =>
  new SqliteJournal(path, options);
