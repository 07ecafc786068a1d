import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SyncJournalError } from '../../src/sync/journal-error';
import { SQLITE_JOURNAL_APPLICATION_ID, sqliteJournal } from '../../src/sync/sqlite-journal';
import { entry } from './journal-conformance';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-journal-files-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** What `path` and the files beside it are, byte for byte, with their times. */
function snapshot(path: string) {
  return {
    bytes: readFileSync(path).toString('base64'),
    mtimeMs: statSync(path).mtimeMs,
    files: readdirSync(dir).sort(),
  };
}

/** What open() rejected with, or undefined. A journal that fails to open keeps nothing open. */
const openError = (path: string, options?: { readOnly?: boolean }): Promise<unknown> =>
  Promise.resolve(sqliteJournal(path, options).open()).then(
    () => undefined,
    (error: unknown) => error,
  );

const pragma = (path: string, name: string) => {
  const db = new DatabaseSync(path, { readOnly: true });
  const value = Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
  db.close();
  return value;
};

/** A format-1 journal as this SDK wrote it before journals were marked, with one entry. */
function unmarkedJournal(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA user_version = 1;
    CREATE TABLE entries (tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL, attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL, PRIMARY KEY (tenant, type, key)) WITHOUT ROWID;
    CREATE INDEX entries_pending ON entries (tenant, state) WHERE state IN ('sending', 'inDoubt');
    CREATE TABLE locks (tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, at INTEGER NOT NULL);
    INSERT INTO entries VALUES ('acme', 'accounts', 'a1', 'synced', 'crm_a1', 'h', '{}', NULL, NULL, 'run_0');`);
  db.close();
}

describe("sqliteJournal() never adopts another application's file", () => {
  const notOurs = /^The file .* is not a crm-integration-sdk journal/;

  test("refuses another application's SQLite file as corrupt before writing anything to it", async () => {
    const path = join(dir, 'app.db');
    const db = new DatabaseSync(path);
    db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT); INSERT INTO users VALUES (1, 'a@x.example');");
    db.close();
    const before = snapshot(path);

    const error = await openError(path);

    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'corrupt', message: expect.stringMatching(notOurs) });
    expect((error as Error).message).toContain(path);
    // Not switched to WAL, no table added: the file and its directory as they were.
    expect(snapshot(path)).toEqual(before);
    expect(pragma(path, 'journal_mode')).toBe('delete');
  });

  test('refuses a foreign file with an entries table of its own, with or without a user_version', async () => {
    for (const version of [0, 1]) {
      const path = join(dir, `entries-${version}.db`);
      const db = new DatabaseSync(path);
      db.exec(`PRAGMA user_version = ${version}; CREATE TABLE entries (id INTEGER PRIMARY KEY, amount REAL);
        CREATE TABLE locks (name TEXT);`);
      db.close();
      const before = snapshot(path);

      expect(await openError(path)).toMatchObject({ reason: 'corrupt', message: expect.stringMatching(notOurs) });
      expect(snapshot(path)).toEqual(before);
    }
  });

  test("refuses a file marked as another application's, even with no table", async () => {
    const path = join(dir, 'marked.db');
    const db = new DatabaseSync(path);
    db.exec('PRAGMA application_id = 1598903374;');
    db.close();

    expect(await openError(path)).toMatchObject({ reason: 'corrupt', message: expect.stringMatching(notOurs) });
    expect(pragma(path, 'application_id')).toBe(1598903374);
  });

  test('marks a journal it makes as its own (application_id 0x43524D4A), and opens it again', async () => {
    const path = join(dir, 'new.db');
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    await journal.close();

    expect(SQLITE_JOURNAL_APPLICATION_ID).toBe(0x43524d4a);
    expect(pragma(path, 'application_id')).toBe(0x43524d4a);
    const again = sqliteJournal(path);
    await again.open();
    expect((await again.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({ crmId: 'crm_a1' });
    await again.close();
  });

  test('opens a journal an earlier version made (format 1, not marked), keeps its entries, and marks it', async () => {
    const path = join(dir, 'old.db');
    unmarkedJournal(path);
    // SQLite's own statistics table (ANALYZE, run by a careful operator) belongs to no application.
    const db = new DatabaseSync(path);
    db.exec('ANALYZE');
    db.close();

    const journal = sqliteJournal(path);
    await journal.open();
    expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({ crmId: 'crm_a1' });
    await journal.close();

    expect(pragma(path, 'application_id')).toBe(SQLITE_JOURNAL_APPLICATION_ID);
  });
});

describe('sqliteJournal() keeps its files private', () => {
  test('makes the journal, its -wal and its -shm with mode 0600 whatever the umask', async () => {
    const path = join(dir, 'private.db');
    const umask = process.umask(0o000);
    try {
      const journal = sqliteJournal(path);
      await journal.open();
      await journal.write('acme', { put: [entry('contacts', 'c1')] });
      // While it is open: SQLite removes the -wal and -shm files at the last close.
      const modes = ['', '-wal', '-shm'].map((suffix) => [suffix, statSync(`${path}${suffix}`).mode & 0o777]);
      await journal.close();
      expect(modes).toEqual([
        ['', 0o600],
        ['-wal', 0o600],
        ['-shm', 0o600],
      ]);
    } finally {
      process.umask(umask);
    }
  });
});

describe('sqliteJournal(path, { readOnly: true })', () => {
  async function madeJournal(path: string): Promise<void> {
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    await journal.addRun?.('acme', { runId: 'run_1', startedAt: 1, finishedAt: 1, recordedAt: 1, summary: '{}' });
    await journal.close();
  }

  test('reads a closed journal and writes nothing, to it or beside it: same bytes, same time, no -wal or -shm', async () => {
    const path = join(dir, 'closed.db');
    await madeJournal(path);
    const before = snapshot(path);

    const journal = sqliteJournal(path, { readOnly: true });
    await journal.open();
    expect(await journal.tenants?.()).toEqual(['acme']);
    expect(await journal.runs?.('acme', 5)).toEqual([
      { runId: 'run_1', startedAt: 1, finishedAt: 1, recordedAt: 1, summary: '{}' },
    ]);
    expect(await journal.pending('acme')).toEqual([]);
    expect(() => journal.write('acme', { put: [entry('accounts', 'a2')] })).toThrow(SyncJournalError);
    expect(snapshot(path)).toEqual(before);
    await journal.close();

    expect(snapshot(path)).toEqual(before);
  });

  test('reads a journal a run has open, through its -wal, and does not mark an unmarked one', async () => {
    const path = join(dir, 'live.db');
    const writer = sqliteJournal(path);
    await writer.open();
    await writer.write('acme', { put: [entry('accounts', 'a1')] });

    const reader = sqliteJournal(path, { readOnly: true });
    await reader.open();
    expect((await reader.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({ crmId: 'crm_a1' });
    await reader.close();
    await writer.close();

    const old = join(dir, 'old.db');
    unmarkedJournal(old);
    const before = snapshot(old);
    const oldReader = sqliteJournal(old, { readOnly: true });
    await oldReader.open();
    // A journal of before the run log: read as having none.
    expect(await oldReader.runs?.('acme', 5)).toEqual([]);
    await oldReader.close();
    expect(snapshot(old)).toEqual(before);
    expect(pragma(old, 'application_id')).toBe(0);
  });

  test("reads a format-1 journal's lock of a pid and a host as a lease, without bringing the file to format 2", async () => {
    const path = join(dir, 'old-locked.db');
    unmarkedJournal(path);
    const db = new DatabaseSync(path);
    db.exec("INSERT INTO locks VALUES ('acme', 'run_old', 1, 'pod-gone', 1000)");
    db.close();
    const before = snapshot(path);

    const reader = sqliteJournal(path, { readOnly: true });
    await reader.open();
    expect(await reader.lockHolder?.('acme')).toEqual({
      runId: 'run_old',
      takenAt: 1000,
      renewedAt: 1000,
      leaseMs: 30_000,
    });
    expect(await reader.lockHolder?.('globex')).toBeUndefined();
    expect((await reader.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({ crmId: 'crm_a1' });
    await reader.close();

    expect(snapshot(path)).toEqual(before);
    expect(pragma(path, 'user_version')).toBe(1);
  });

  test('refuses a foreign file, a missing one and an empty one, and makes none', async () => {
    const foreign = join(dir, 'app.db');
    const db = new DatabaseSync(foreign);
    db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY);');
    db.close();
    expect(await openError(foreign, { readOnly: true })).toMatchObject({ reason: 'corrupt' });

    const missing = join(dir, 'missing.db');
    expect(await openError(missing, { readOnly: true })).toBeInstanceOf(SyncJournalError);
    expect(existsSync(missing)).toBe(false);

    const empty = join(dir, 'empty.db');
    await import('node:fs/promises').then((fs) => fs.writeFile(empty, ''));
    expect(await openError(empty, { readOnly: true })).toMatchObject({
      reason: 'unavailable',
      message: `The sync journal ${empty} is empty: no run has written it.`,
    });
    expect(statSync(empty).size).toBe(0);
  });
});
