import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
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

describeSyncJournal('sqliteJournal()', ({ leaseMs }) => {
  const path = join(dir, `journal-${Math.random().toString(36).slice(2)}.db`);
  return { journal: sqliteJournal(path, { leaseMs }), reopen: () => sqliteJournal(path, { leaseMs }) };
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
  await journal.addRun?.('acme', {
    runId: 'run_1',
    startedAt: 1,
    finishedAt: 1,
    recordedAt: 1,
    summary: '{"created":1}',
  });
  await journal.close();
  const again = sqliteJournal(path);
  await again.open();
  expect(await again.runs?.('acme', 5)).toEqual([
    { runId: 'run_1', startedAt: 1, finishedAt: 1, recordedAt: 1, summary: '{"created":1}' },
  ]);
  expect(await again.tenants?.()).toEqual(['acme']);
  await again.close();
});

test('a format-1 journal is brought to format 3 when opened: its lock of a pid and a host becomes a lease, taken over once it goes unrenewed', async () => {
  const path = join(dir, 'format-1.db');
  const old = new DatabaseSync(path);
  // A run of the version before was killed holding the lock, on a host that no longer exists.
  old.exec(
    "PRAGMA user_version = 1; CREATE TABLE entries (tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL, attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL, PRIMARY KEY (tenant, type, key)) WITHOUT ROWID; CREATE TABLE locks (tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, at INTEGER NOT NULL); INSERT INTO locks VALUES ('acme', 'run_old', 1, 'pod-gone', 0);",
  );
  old.close();
  const journal = sqliteJournal(path);
  await journal.open();

  expect(await journal.lockHolder?.('acme')).toMatchObject({ runId: 'run_old', leaseMs: 30_000 });
  const db = new DatabaseSync(path);
  expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
  db.close();
  await journal.close();
});

/** A journal of format 2 as the version before wrote it: its run log of finished runs, kept by crm sync apply. */
function format2(path: string): void {
  const old = new DatabaseSync(path);
  old.exec(`CREATE TABLE entries (tenant TEXT NOT NULL, type TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, crm_id TEXT, hash TEXT NOT NULL, data TEXT NOT NULL, attempted_at INTEGER, request_id TEXT, run_id TEXT NOT NULL, PRIMARY KEY (tenant, type, key)) WITHOUT ROWID;
CREATE TABLE locks (tenant TEXT PRIMARY KEY, run_id TEXT NOT NULL, token TEXT NOT NULL, version INTEGER NOT NULL, lease_ms INTEGER NOT NULL, taken_at INTEGER NOT NULL, renewed_at INTEGER NOT NULL);
CREATE TABLE runs (tenant TEXT NOT NULL, run_id TEXT NOT NULL, finished_at INTEGER NOT NULL, summary TEXT NOT NULL, PRIMARY KEY (tenant, run_id)) WITHOUT ROWID;
INSERT INTO runs VALUES ('acme', 'run_old', 5000, '{"created":2,"failed":[{"type":"accounts","key":"C-9","reason":"bad"}],"inDoubt":1,"skipped":0}');
PRAGMA user_version = 2; PRAGMA application_id = 1129467210;`);
  old.close();
}

test('a format-2 journal is brought to format 3 when opened: its run log becomes the history, each run started when it ended', async () => {
  const path = join(dir, 'format-2.db');
  format2(path);
  const journal = sqliteJournal(path);
  await journal.open();

  expect(await journal.runs?.('acme', 5)).toEqual([
    {
      runId: 'run_old',
      startedAt: 5000,
      finishedAt: 5000,
      recordedAt: 5000,
      summary: expect.stringContaining('"created":2'),
    },
  ]);
  await journal.addRun?.('acme', {
    runId: 'run_new',
    startedAt: 6000,
    finishedAt: undefined,
    recordedAt: 6000,
    summary: '{}',
  });
  expect((await journal.runs?.('acme', 5))?.map((run) => [run.runId, run.finishedAt])).toEqual([
    ['run_new', undefined],
    ['run_old', 5000],
  ]);
  await journal.close();
  const db = new DatabaseSync(path);
  expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 3 });
  db.close();
  // A history kept in the new format is read back by the next process.
  const again = sqliteJournal(path);
  await again.open();
  expect(await again.runs?.('acme', 5)).toHaveLength(2);
  await again.close();
});

test('a format-2 journal read only is read as format 3 and left at format 2', async () => {
  const path = join(dir, 'format-2-read.db');
  format2(path);
  const journal = sqliteJournal(path, { readOnly: true });
  await journal.open();
  expect((await journal.runs?.('acme', 5))?.map((run) => [run.runId, run.startedAt, run.finishedAt])).toEqual([
    ['run_old', 5000, 5000],
  ]);
  await journal.close();
  const db = new DatabaseSync(path);
  expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
  db.close();
});

/*
 * Processes side by side on one journal, as containers are: each a lock-child.mjs (the built
 * package: npm run build), its pid and host name stood in for. What each says is counted; the
 * leases are short so that a watch ends soon, and nothing asserted depends on how soon.
 */
const DIST = fileURLToPath(new URL('../../dist/sync.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./lock-child.mjs', import.meta.url));
// Long enough that a holder process starved of CPU on a busy machine still renews within it.
const LEASE_MS = 5000;

interface LockProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The next thing it says. */
  next(): Promise<Record<string, unknown>>;
  tell(line: string): void;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function lockProcess(path: string, runId: string, as: { pid?: number; host?: string } = {}): LockProcess {
  const child = spawn(process.execPath, [CHILD], {
    env: {
      ...process.env,
      LOCK_JOURNAL: path,
      LOCK_RUN: runId,
      LOCK_LEASE_MS: String(LEASE_MS),
      LOCK_PID: as.pid === undefined ? '' : String(as.pid),
      LOCK_HOST: as.host ?? '',
    },
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    next: async () => {
      const { value, done } = await lines.next();
      if (done) throw new Error(`${runId} ended without a word`);
      return JSON.parse(value as string) as Record<string, unknown>;
    },
    tell: (line) => child.stdin.write(`${line}\n`),
  };
}

describe.skipIf(!existsSync(DIST))('sqliteJournal() run locks across processes', () => {
  test('two processes of pid 1 with one host name, on one journal, never both hold the lock', async () => {
    const path = join(dir, 'containers.db');
    const first = lockProcess(path, 'run_a', { pid: 1, host: 'worker' });
    expect(await first.next()).toMatchObject({ event: 'held', pid: 1, host: 'worker' });
    // The second container starts after the first took the lock, as pid 1 on the same host name.
    const second = lockProcess(path, 'run_b', { pid: 1, host: 'worker' });

    expect(await second.next()).toMatchObject({ event: 'refused', reason: 'locked' });
    first.tell('write');
    expect(await first.next()).toEqual({ event: 'written' });
    first.tell('release');
  });

  test('a lock left by a killed process of another host is taken over after its lease, and the run says whose it was', async () => {
    const path = join(dir, 'cronjob.db');
    // A CronJob's pod, with a host name no later pod has, killed (OOM) while it held the lock.
    const pod = lockProcess(path, 'run_oom', { host: 'nightly-28310-abcde' });
    expect(await pod.next()).toMatchObject({ event: 'held' });
    pod.child.kill('SIGKILL');
    await new Promise((exit) => pod.child.once('exit', exit));
    const journal = sqliteJournal(path);
    await journal.open();

    const lock = await journal.lock('acme', 'run_next');

    expect(lock.takenOver).toMatchObject({ runId: 'run_oom' });
    await lock.release();
    await journal.close();
  });

  test('a holder stalled past its lease learns it lost the lock when it wakes, and its writes are refused', async () => {
    const path = join(dir, 'stalled.db');
    const holder = lockProcess(path, 'run_stalled');
    expect(await holder.next()).toMatchObject({ event: 'held' });
    holder.child.kill('SIGSTOP');
    const journal = sqliteJournal(path);
    await journal.open();

    const lock = await journal.lock('acme', 'run_next');
    holder.child.kill('SIGCONT');

    expect(lock.takenOver).toMatchObject({ runId: 'run_stalled' });
    expect(await holder.next()).toEqual({ event: 'lost', reason: 'locked' });
    holder.tell('write');
    expect(await holder.next()).toEqual({ event: 'write refused', reason: 'locked' });
    expect((await journal.get('acme', 'accounts', ['run_stalled'])).size).toBe(0);
    expect(await journal.lockHolder?.('acme')).toMatchObject({ runId: 'run_next' });
    await lock.release();
    await journal.close();
  });
});
