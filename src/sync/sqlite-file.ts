// Opening a SQLite journal's file, before any of it is read: ours or another application's, made
// private, read without being written, in WAL mode, and at this version's format.
import type { DatabaseSync } from 'node:sqlite';
import { SyncJournalError } from './journal-error';

/**
 * The format this version writes (PRAGMA user_version); a file with a higher one is refused.
 * Format 2 locks by a token and a lease (format 1 by a pid and a host): a version that reads
 * format 1 only would not see a format-2 lock renewed, so it refuses the file. Format 3 keeps
 * every run's start, end and progress (`runs`, written by the engine): a version that reads
 * format 2 would write runs without a start, so it refuses the file.
 */
export const FORMAT = 3;

const LOCKS = `CREATE TABLE IF NOT EXISTS locks (
  tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, token TEXT NOT NULL, version INTEGER NOT NULL,
  lease_ms INTEGER NOT NULL, taken_at INTEGER NOT NULL, renewed_at INTEGER NOT NULL
);`;

/** The history of runs (format 3): a run not ended has no `finished_at`. */
const RUNS = `CREATE TABLE IF NOT EXISTS runs (
  tenant TEXT NOT NULL, run_id TEXT NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER,
  recorded_at INTEGER NOT NULL, summary TEXT NOT NULL,
  PRIMARY KEY (tenant, run_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS runs_started ON runs (tenant, started_at);`;

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

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL,
  state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL,
  attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL,
  PRIMARY KEY (tenant, type, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_pending ON entries (tenant, state) WHERE state IN ('sending', 'inDoubt');
${LOCKS}
${RUNS}
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
PRAGMA user_version = 2;`;

/** Format 1's locks read as format 2's by a reader that may not write the file (crm sync status). */
export const FORMAT_1_LOCKS_READ = `${LOCKS.replace('CREATE TABLE IF NOT EXISTS locks', 'CREATE TEMP TABLE locks')}
INSERT INTO temp.locks SELECT tenant, run_id, 'format-1:' || run_id, 0, 30000, at, at FROM main.locks;`;

/** Format 2's run log, of finished runs (written by `crm sync apply` alone): their start is not known, and taken as their end. */
const FORMAT_2_RUNS_AS_3 =
  'SELECT tenant, run_id, finished_at AS started_at, finished_at, finished_at AS recorded_at, summary';

/** Format 2 to 3: its run log (when it has one) becomes the history. */
const FROM_FORMAT_2 = (hasRuns: boolean) => `${hasRuns ? 'ALTER TABLE runs RENAME TO runs_format_2;' : ''}
${RUNS}
${hasRuns ? `INSERT INTO runs ${FORMAT_2_RUNS_AS_3} FROM runs_format_2; DROP TABLE runs_format_2;` : ''}
PRAGMA user_version = ${FORMAT};`;

/** Format 2's run log read as format 3's by a reader that may not write the file (crm sync status). */
export const FORMAT_2_RUNS_READ = `CREATE TEMP VIEW runs AS ${FORMAT_2_RUNS_AS_3} FROM main.runs;`;

/** SQLITE_BUSY: another connection holds a lock this statement needs. */
const BUSY = 5;

/**
 * Puts the file in WAL mode. Switching a new file to WAL takes it exclusively, and SQLite answers
 * SQLITE_BUSY there without waiting on busy_timeout when another process is switching it or
 * creating its tables: processes opening one new file at once try again, for as long as a busy
 * transaction would wait (with the switch tried once, 5 of 6 processes opening a new file at once
 * failed with "database is locked").
 */
export async function walMode(db: DatabaseSync): Promise<void> {
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
export function kindOf(db: DatabaseSync, path: string): 'empty' | 'ours' | 'unmarked' {
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
export async function createPrivate(path: string): Promise<void> {
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
export async function openReadOnly(
  Database: typeof import('node:sqlite').DatabaseSync,
  path: string,
): Promise<DatabaseSync> {
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
export function readOnlyReady(db: DatabaseSync, kind: 'empty' | 'ours' | 'unmarked', path: string): void {
  if (kind === 'empty')
    throw new SyncJournalError('unavailable', `The sync journal ${path} is empty: no run has written it.`);
  // In the connection's memory: the file is not written.
  if (!hasTable(db, 'runs'))
    db.exec(
      RUNS.replace('CREATE TABLE IF NOT EXISTS runs', 'CREATE TEMP TABLE runs').replace(/CREATE INDEX[^;]*;/, ''),
    );
}

/** Whether the file has a table `name` (of its main database, not a reader's temporary one). */
export const hasTable = (db: DatabaseSync, name: string): boolean =>
  db.prepare("SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;

/**
 * Format 1 to 2 (FROM_FORMAT_1) and 2 to 3 (FROM_FORMAT_2), once: processes opening one file at
 * once each look again under the write lock.
 */
export function upgrade(db: DatabaseSync): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const version = () => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version() === 1) db.exec(FROM_FORMAT_1);
    if (version() === 2) db.exec(FROM_FORMAT_2(hasTable(db, 'runs')));
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
