import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalEntry,
  SyncJournalLock,
  SyncJournalLockHolder,
  SyncJournalLockOptions,
  SyncJournalRun,
  SyncJournalState,
  SyncType,
} from './journal';
import { SyncJournalError } from './journal-error';
import { type LeaseRow, type LeaseStore, leaseOption, RunLocks } from './lease';

/**
 * The format this version writes (PRAGMA user_version); a file with a higher one is refused.
 * Format 2 locks by a token and a lease (format 1 by a pid and a host): a version that reads
 * format 1 only would not see a format-2 lock renewed, so it refuses the file.
 */
const FORMAT = 2;

const LOCKS = `CREATE TABLE IF NOT EXISTS locks (
  tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, token TEXT NOT NULL, version INTEGER NOT NULL,
  lease_ms INTEGER NOT NULL, taken_at INTEGER NOT NULL, renewed_at INTEGER NOT NULL
);`;

/**
 * What marks a file as a journal of this SDK: its `PRAGMA application_id` (a 32-bit number in the
 * database header, which SQLite keeps for this use), `0x43524D4A`, "CRMJ" in ASCII. A file that
 * holds anything and is not so marked is another application's, and is refused before anything
 * is written to it.
 */
export const SQLITE_JOURNAL_APPLICATION_ID = 0x43524d4a;

/**
 * The columns of format 1's `entries`, which journals made before they were marked have: with
 * `user_version` 1 and no tables but `entries`, `locks` and `runs`, such a file is one of ours.
 */
const FORMAT_1_ENTRIES = 'attempted_at,crm_id,data,hash,key,request_id,run_id,state,tenant,type';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL,
  state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL,
  attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL,
  PRIMARY KEY (tenant, type, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_pending ON entries (tenant, state) WHERE state IN ('sending', 'inDoubt');
${LOCKS}
PRAGMA user_version = ${FORMAT};
`;

/**
 * Format 1 to 2: its locks (of a pid and a host) become leases never renewed, taken over after
 * the default lease unless their run ends first (a run of an older version renews nothing).
 */
const FROM_FORMAT_1 = `ALTER TABLE locks RENAME TO locks_format_1;
${LOCKS}
INSERT INTO locks SELECT tenant, run_id, 'format-1:' || run_id, 0, 30000, at, at FROM locks_format_1;
DROP TABLE locks_format_1;
PRAGMA user_version = ${FORMAT};`;

/** Format 1's locks read as format 2's by a reader that may not write the file (crm sync status). */
const FORMAT_1_LOCKS_READ = `${LOCKS.replace('CREATE TABLE IF NOT EXISTS locks', 'CREATE TEMP TABLE locks')}
INSERT INTO temp.locks SELECT tenant, run_id, 'format-1:' || run_id, 0, 30000, at, at FROM main.locks;`;

const RUNS = `CREATE TABLE IF NOT EXISTS runs (
  tenant TEXT NOT NULL, run_id TEXT NOT NULL, finished_at INTEGER NOT NULL, summary TEXT NOT NULL,
  PRIMARY KEY (tenant, run_id)
) WITHOUT ROWID;`;

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

/** SQLITE_BUSY: another connection holds a lock this statement needs. */
const BUSY = 5;

/**
 * Puts the file in WAL mode. Switching a new file to WAL takes it exclusively, and SQLite answers
 * SQLITE_BUSY there without waiting on busy_timeout when another process is switching it or
 * creating its tables: processes opening one new file at once try again, for as long as a busy
 * transaction would wait (with the switch tried once, 5 of 6 processes opening a new file at once
 * failed with "database is locked").
 */
async function walMode(db: DatabaseSync): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL;');
      return;
    } catch (error) {
      const code = (error as { errcode?: unknown }).errcode;
      // The primary code: an extended one (SQLITE_BUSY_RECOVERY) is busy too.
      if (typeof code !== 'number' || (code & 0xff) !== BUSY || Date.now() >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}

/**
 * What a file opened as a journal holds, read before anything is written to it: nothing yet, a
 * journal of this SDK, or one of format 1 made before journals were marked. Anything else is
 * another application's file, which a journal must not adopt (it added its tables and switched the
 * file to WAL).
 */
function kindOf(db: DatabaseSync, path: string): 'empty' | 'ours' | 'unmarked' {
  const id = (db.prepare('PRAGMA application_id').get() as { application_id: number }).application_id;
  if (id === SQLITE_JOURNAL_APPLICATION_ID) return 'ours';
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  const objects = db.prepare('SELECT type, name FROM sqlite_schema').all() as unknown as {
    type: string;
    name: string;
  }[];
  if (id === 0 && version === 0 && objects.length === 0) return 'empty';
  // SQLite's own tables (sqlite_stat1, which ANALYZE makes) are no application's.
  const tables = objects.filter((o) => o.type === 'table' && !o.name.startsWith('sqlite_')).map((o) => o.name);
  if (
    id === 0 &&
    version === 1 &&
    tables.includes('entries') &&
    tables.includes('locks') &&
    tables.every((name) => name === 'entries' || name === 'locks' || name === 'runs')
  ) {
    const columns = (db.prepare('PRAGMA table_info(entries)').all() as unknown as { name: string }[])
      .map((c) => c.name)
      .sort()
      .join(',');
    if (columns === FORMAT_1_ENTRIES) return 'unmarked';
  }
  throw new SyncJournalError(
    'corrupt',
    `The file ${path} is not a crm-integration-sdk journal (it holds another application's data): name another file; it was left as it was, and nothing was sent.`,
  );
}

/**
 * Makes a missing journal file readable and writable by its owner only (0600, whatever the umask):
 * it holds every record's data. SQLite gives the `-wal` and `-shm` files it makes beside it the
 * file's own mode. A file already there keeps the mode it was given.
 */
async function createPrivate(path: string): Promise<void> {
  // ':memory:', '' (a temporary database) and URIs are no file of this path.
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return;
  const fs = await import('node:fs/promises');
  let handle: Awaited<ReturnType<typeof fs.open>> | undefined;
  try {
    handle = await fs.open(path, 'wx', 0o600);
    await handle.chmod(0o600);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * Opens `path` for reading only, writing nothing to it nor beside it. A journal no process has
 * open has no `-wal` file (its last connection folded it in and removed it), and is read as
 * immutable: with no `-shm` file either, so that neither a directory the reader may not write
 * refuses it, nor a `-shm` file the reader made (with the reader's owner) refuses its writer. One
 * with a `-wal` file is read through it, as SQLite reads a database another process writes.
 */
async function openReadOnly(Database: typeof import('node:sqlite').DatabaseSync, path: string): Promise<DatabaseSync> {
  const [{ access }, { pathToFileURL }, { resolve }] = await Promise.all([
    import('node:fs/promises'),
    import('node:url'),
    import('node:path'),
  ]);
  // Missing here, as when SQLite opens a file for reading.
  await access(path);
  const live = await access(`${path}-wal`).then(
    () => true,
    () => false,
  );
  if (live || path.startsWith('file:')) return new Database(path, { readOnly: true });
  const url = pathToFileURL(resolve(path));
  url.searchParams.set('immutable', '1');
  return new Database(url, { readOnly: true });
}

/** A journal opened for reading: one with nothing in it is said so, and a missing run log is an empty one. */
function readOnlyReady(db: DatabaseSync, kind: 'empty' | 'ours' | 'unmarked', path: string): void {
  if (kind === 'empty')
    throw new SyncJournalError('unavailable', `The sync journal ${path} is empty: no run has written it.`);
  const runs = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'runs'").get();
  // In the connection's memory: the file is not written.
  if (!runs) db.exec(RUNS.replace('CREATE TABLE IF NOT EXISTS runs', 'CREATE TEMP TABLE runs'));
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
        if (version === 1) fromFormat1(db);
        // The run log came after format 1's first files: added where it is missing, which a reader
        // of format 1 that knows nothing of it ignores.
        db.exec(RUNS);
      } else if (version === 1) {
        // Read as format 2, in the connection's memory: the file is not brought to format 2 by a reader.
        db.exec(FORMAT_1_LOCKS_READ);
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

  addRun(tenant: string, run: SyncJournalRun): void {
    const opened = this.#use();
    this.#transaction('written', () =>
      opened.db
        .prepare('INSERT OR REPLACE INTO runs (tenant, run_id, finished_at, summary) VALUES (?, ?, ?, ?)')
        .run(tenant, run.runId, run.finishedAt, run.summary),
    );
  }

  runs(tenant: string, limit: number): readonly SyncJournalRun[] {
    const rows = this.#read(
      () =>
        this.#use()
          .db.prepare(
            'SELECT run_id, finished_at, summary FROM runs WHERE tenant = ? ORDER BY finished_at DESC LIMIT ?',
          )
          .all(tenant, limit) as unknown as { run_id: string; finished_at: number; summary: string }[],
    );
    return rows.map((row) => ({ runId: row.run_id, finishedAt: row.finished_at, summary: row.summary }));
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

/** Format 1 to 2 (FROM_FORMAT_1), once: processes opening one file at once each look again under the write lock. */
function fromFormat1(db: DatabaseSync): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const { user_version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (user_version === 1) db.exec(FROM_FORMAT_1);
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
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
 * file written by an earlier version (format 1) is brought to format 2 when opened; a version
 * that reads format 1 only refuses it then.
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
