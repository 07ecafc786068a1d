import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { SyncJournalLock } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import { describeSyncJournal, entry } from './journal-conformance';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeSyncJournal('sqliteJournal()', () => {
  const path = join(dir, `journal-${Math.random().toString(36).slice(2)}.db`);
  return { journal: sqliteJournal(path), reopen: () => sqliteJournal(path) };
});

async function refusal(path: string): Promise<unknown> {
  const journal = sqliteJournal(path);
  try {
    await journal.open();
  } catch (error) {
    return error;
  } finally {
    await journal.close();
  }
  return undefined;
}

describe('sqliteJournal()', () => {
  test('keeps the file in WAL mode with every commit fsynced', async () => {
    const path = join(dir, 'j.db');
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    await journal.close();

    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('SELECT tenant, key, crm_id FROM entries').all()).toEqual([
      { tenant: 'acme', key: 'a1', crm_id: 'crm_a1' },
    ]);
    db.close();
  });

  test('opens a new file while another process holds its write lock, as processes opening one new journal at once do', async () => {
    const path = join(dir, 'new.db');
    // Another process got to the new file first and is writing in it: its lock, held a moment.
    const other = new DatabaseSync(path);
    other.exec('BEGIN IMMEDIATE; CREATE TABLE other (x);');
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec('ROLLBACK');
        resolve();
      }, 200),
    );
    const journal = sqliteJournal(path);

    const opened = await Promise.resolve(journal.open()).then(
      () => 'opened',
      (error: unknown) => error,
    );
    await released;
    other.close();

    expect(opened).toBe('opened');
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({ crmId: 'crm_a1' });
    await journal.close();
  });

  test('refuses a journal written by a newer version, naming it, and leaves it as it was', async () => {
    const path = join(dir, 'newer.db');
    const db = new DatabaseSync(path);
    // A newer version marks its journals as this one does.
    db.exec('PRAGMA application_id = 0x43524D4A; PRAGMA user_version = 7; CREATE TABLE future (x);');
    db.close();

    const error = await refusal(path);

    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'newer-version' });
    expect((error as Error).message).toMatch(/newer version.*format 7/);
    const after = new DatabaseSync(path);
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 7 });
    after.close();
  });

  test('refuses a file that is not a SQLite database as corrupt', async () => {
    const path = join(dir, 'garbage.db');
    writeFileSync(path, 'not a database at all, just some bytes '.repeat(200));

    const error = await refusal(path);

    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'corrupt' });
    expect((error as Error).message).toContain(path);
  });

  test('refuses a database whose pages were damaged as corrupt', async () => {
    const path = join(dir, 'damaged.db');
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.write('acme', { put: Array.from({ length: 2000 }, (_, i) => entry('contacts', `c${i}`)) });
    await journal.close();
    // Overwrite pages past the header, as a failing disk would.
    const { openSync, writeSync, closeSync } = await import('node:fs');
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, 4096 * 3);
    closeSync(fd);

    expect(await refusal(path)).toMatchObject({ reason: 'corrupt' });
  });

  test('an entry of a state it does not know is refused as corrupt when read', async () => {
    const path = join(dir, 'bad-state.db');
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    await journal.close();
    const db = new DatabaseSync(path);
    db.exec("UPDATE entries SET state = 'maybe'");
    db.close();

    const again = sqliteJournal(path);
    await again.open();
    expect(() => again.get('acme', 'accounts', ['a1'])).toThrow(expect.objectContaining({ reason: 'corrupt' }));
    await again.close();
  });

  test("a lock whose process died is taken over; a live process's is not", async () => {
    const path = join(dir, 'lock.db');
    const journal = sqliteJournal(path);
    await journal.open();
    await journal.lock('acme', 'run_live');
    const db = new DatabaseSync(path);
    // A pid that cannot be running (above Linux's pid_max).
    db.exec(
      `INSERT INTO locks (tenant, run_id, pid, host, at) SELECT 'globex', 'run_dead', 99999999, host, 0 FROM locks`,
    );
    db.close();

    const other = sqliteJournal(path);
    await other.open();
    expect(() => other.lock('acme', 'run_2')).toThrow(expect.objectContaining({ reason: 'locked' }));
    const taken = await other.lock('globex', 'run_3');
    await taken.release();
    await other.close();
    await journal.close();
  });
});

/** A run lock of `runId` for acme in the journal at `path`, as of this process's pid and host, taken at `at` (epoch ms). */
function lockOfThisPid(path: string, runId: string, at: number): void {
  const db = new DatabaseSync(path);
  db.prepare('INSERT INTO locks (tenant, run_id, pid, host, at) VALUES (?, ?, ?, ?, ?)').run(
    'acme',
    runId,
    process.pid,
    hostname(),
    at,
  );
  db.close();
}

test("a lock left by an earlier process of this one's pid and host is taken over: a container's worker restarts as the same pid", async () => {
  const path = join(dir, 'restarted.db');
  const journal = sqliteJournal(path);
  await journal.open();
  // The worker that ran before this one on this host, as pid 1 too, was killed mid-run.
  lockOfThisPid(path, 'run_killed', 0);

  const taken = await Promise.resolve()
    .then(() => journal.lock('acme', 'run_new'))
    .catch((error: unknown) => error);

  expect(taken).not.toBeInstanceOf(Error);
  // A run of this process still holds its lock against this process's other runs and journals.
  const again = sqliteJournal(path);
  await again.open();
  expect(() => journal.lock('acme', 'run_other')).toThrow(expect.objectContaining({ reason: 'locked' }));
  expect(() => again.lock('acme', 'run_other')).toThrow(expect.objectContaining({ reason: 'locked' }));
  await (taken as SyncJournalLock).release();
  const next = await again.lock('acme', 'run_next');
  await next.release();
  await again.close();
  await journal.close();
});

test('runs starting at once on one sqliteJournal() open its file once, and close() leaves no connection to it', async () => {
  const path = join(dir, 'once.db');
  const journal = sqliteJournal(path);

  await Promise.all([journal.open(), journal.open(), journal.open()]);
  await journal.write('acme', { put: [entry('accounts', 'a1')] });
  await journal.close();

  // Leaving WAL needs the file alone: a connection left open refuses it ("database is locked").
  const db = new DatabaseSync(path);
  const mode = (() => {
    try {
      return db.prepare('PRAGMA journal_mode = DELETE').get();
    } catch (error) {
      return error;
    }
  })();
  db.close();
  expect(mode).toEqual({ journal_mode: 'delete' });
});

test('a lock another thread of this process took (worker_threads share its pid) is not taken over', async () => {
  const path = join(dir, 'threads.db');
  const journal = sqliteJournal(path);
  await journal.open();
  // A run in a worker thread of this process: its pid and host, taken since the process started.
  lockOfThisPid(path, 'run_of_a_thread', Date.now());

  expect(() => journal.lock('acme', 'run_here')).toThrow(
    expect.objectContaining({ reason: 'locked', message: expect.stringMatching(/run_of_a_thread/) }),
  );
  await journal.close();
});

test('sqliteJournal() keeps a run log across reopening, added to a journal made before it had one', async () => {
  const path = join(dir, 'old.db');
  const old = new DatabaseSync(path);
  // A format-1 file as the first version wrote it: no runs table.
  old.exec(
    'PRAGMA user_version = 1; CREATE TABLE entries (tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL, attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL, PRIMARY KEY (tenant, type, key)) WITHOUT ROWID; CREATE TABLE locks (tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, at INTEGER NOT NULL);',
  );
  old.close();
  const journal = sqliteJournal(path);
  await journal.open();
  await journal.addRun?.('acme', { runId: 'run_1', finishedAt: 1, summary: '{"created":1}' });
  await journal.close();
  const again = sqliteJournal(path);
  await again.open();
  expect(await again.runs?.('acme', 5)).toEqual([{ runId: 'run_1', finishedAt: 1, summary: '{"created":1}' }]);
  expect(await again.tenants?.()).toEqual(['acme']);
  await again.close();
});
