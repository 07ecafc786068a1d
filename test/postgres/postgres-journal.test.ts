import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { CrmClient } from '../../src/index';
import { FORMAT } from '../../src/postgres/journal-opening';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { countingPool, startPostgres, type TestPostgres } from '../support/postgres';
import { describeSyncJournal, entry } from '../sync/journal-conformance';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

// A schema of its own per test: fresh storage, as the suite asks, on one server.
describeSyncJournal('postgresJournal()', ({ leaseMs }) => {
  const pool = postgres.pool();
  const schema = `j_${Math.random().toString(36).slice(2)}`;
  return {
    journal: postgresJournal(pool, { schema, leaseMs }),
    reopen: () => postgresJournal(pool, { schema, leaseMs }),
    cleanup: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
});

const fresh = () => `j_${Math.random().toString(36).slice(2)}`;

async function refusal(journal: SyncJournal): Promise<unknown> {
  try {
    await journal.open();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('postgresJournal()', () => {
  test('creates its tables in its own schema on first use, with a format row', async () => {
    const pool = postgres.pool();
    const schema = fresh();
    const journal = postgresJournal(pool, { schema });
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });

    const tables = await pool.query(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      'claims',
      'entries',
      'format',
      'generation_keys',
      'generation_slices',
      'generations',
      'locks',
      'runs',
    ]);
    expect((await pool.query(`SELECT format FROM ${schema}.format`)).rows).toEqual([{ format: FORMAT }]);
    expect(
      (
        await pool.query(
          `SELECT convert_from(key, 'UTF8') AS key, convert_from(crm_id, 'UTF8') AS id FROM ${schema}.entries`,
        )
      ).rows,
    ).toEqual([{ key: 'a1', id: 'crm_a1' }]);
  });

  test('uses the schema crm_sync unless told another', async () => {
    const pool = postgres.pool();
    await postgresJournal(pool).open();
    expect((await pool.query("SELECT to_regclass('crm_sync.entries') AS t")).rows[0].t).toBe('crm_sync.entries');
  });

  test('eight workers opening a new journal at once create it once', async () => {
    const pool = postgres.pool({ max: 10 });
    const schema = fresh();
    const journals = Array.from({ length: 8 }, () => postgresJournal(pool, { schema }));
    await Promise.all(journals.map((journal) => journal.open()));

    expect((await pool.query(`SELECT count(*)::int AS n FROM ${schema}.format`)).rows[0].n).toBe(1);
  });

  test('four workers whose connections were used before open a new journal at once: it is created once, and none fails', async () => {
    // Long-lived workers: each pool's connection looked the schema up before the lock let it in.
    // (With the lock taken inside the transaction, three of the four failed in every round:
    // CREATE SCHEMA on the catalog's unique index, their cached catalog not knowing the schema.)
    const pools = Array.from({ length: 4 }, () => postgres.pool({ max: 1 }));
    for (let round = 0; round < 3; round++) {
      const schema = fresh();
      await Promise.all(pools.map((pool, i) => postgresJournal(pool, { schema: `${schema}_before${i}` }).open()));
      const opened = await Promise.allSettled(pools.map((pool) => postgresJournal(pool, { schema }).open()));

      expect(opened.filter((result) => result.status === 'rejected')).toEqual([]);
      expect((await pools[0]?.query(`SELECT count(*)::int AS n FROM ${schema}.format`))?.rows[0].n).toBe(1);
    }
  });

  test('a journal that exists is opened with one statement, without a transaction or a lock', async () => {
    const schema = fresh();
    await postgresJournal(postgres.pool(), { schema }).open();
    const statements: string[] = [];
    const journal = postgresJournal(countingPool(postgres.pool(), statements), { schema });

    await journal.open();

    expect(statements).toEqual([
      `SELECT format, pg_catalog.to_regclass($1) IS NOT NULL AND pg_catalog.to_regclass($2) IS NOT NULL AS runs FROM "${schema}".format`,
    ]);
    await journal.write('acme', { put: [entry('accounts', 'a1', { crmId: 'crm_a1' })] });
    expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')?.crmId).toBe('crm_a1');
  });

  test("tells a live run from a killed one by the server's clock, whatever the clock of the run's host says", async () => {
    const pool = postgres.pool();
    const schema = fresh();
    const journal = postgresJournal(pool, { schema, leaseMs: 1000 });
    await journal.open();
    const crm = new CrmClient({ baseUrl: 'https://crm.invalid', apiKey: 'k', tenantId: 'acme' });
    // A host whose clock is a day behind, and one whose clock is a day ahead, both writing now.
    const day = 86_400_000;
    const now = Date.now();
    await journal.addRun?.('acme', {
      runId: 'run_behind',
      startedAt: now - day,
      finishedAt: undefined,
      recordedAt: now - day,
      summary: '{}',
    });
    await journal.addRun?.('acme', {
      runId: 'run_ahead',
      startedAt: now + day,
      finishedAt: undefined,
      recordedAt: now + day,
      summary: '{}',
    });
    // One whose last record the server stamped two leases ago.
    await journal.addRun?.('acme', {
      runId: 'run_killed',
      startedAt: now,
      finishedAt: undefined,
      recordedAt: now,
      summary: '{}',
    });
    await pool.query(`UPDATE ${schema}.runs SET stamped_at = stamped_at - interval '2 seconds' WHERE run_id = $1`, [
      Buffer.from('run_killed'),
    ]);

    const history = await new CrmSync(crm, { journal }).history();
    expect(Object.fromEntries(history.map((run) => [run.runId, run.state]))).toEqual({
      run_behind: 'live',
      run_ahead: 'live',
      run_killed: 'did-not-end',
    });
    journal.close();
  });

  test('a journal made before the history of runs is given its runs table by the first worker that opens it, its entries kept', async () => {
    const pool = postgres.pool();
    const schema = fresh();
    const before = postgresJournal(pool, { schema });
    await before.open();
    await before.write('acme', { put: [entry('accounts', 'a1')] });
    await pool.query(`DROP TABLE ${schema}.runs`);

    const journal = postgresJournal(pool, { schema });
    await journal.open();
    const run = { runId: 'run_1', startedAt: 1, finishedAt: undefined, recordedAt: 2, summary: '{}' };
    await journal.addRun?.('acme', run);
    expect(await journal.runs?.('acme', 5)).toEqual([{ ...run, ageMs: expect.toSatisfy((age: number) => age >= 0) }]);
    expect((await journal.get('acme', 'accounts', ['a1'])).size).toBe(1);
    expect((await pool.query(`SELECT format FROM ${schema}.format`)).rows).toEqual([{ format: FORMAT }]);
  });

  test('refuses a journal written by a newer format, naming it, and changes nothing', async () => {
    const pool = postgres.pool();
    const schema = fresh();
    await postgresJournal(pool, { schema }).open();
    await pool.query(`UPDATE ${schema}.format SET format = 7`);

    const error = await refusal(postgresJournal(pool, { schema }));

    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'newer-version' });
    expect((error as Error).message).toMatch(new RegExp(`schema ${schema} .*newer version.*format 7`));
    expect((await pool.query(`SELECT format FROM ${schema}.format`)).rows).toEqual([{ format: 7 }]);
  });

  test('refuses a schema whose format row is missing or doubled as corrupt', async () => {
    const pool = postgres.pool();
    const schema = fresh();
    await postgresJournal(pool, { schema }).open();
    await pool.query(`INSERT INTO ${schema}.format (format, written_by) VALUES (1, 'someone')`);

    expect(await refusal(postgresJournal(pool, { schema }))).toMatchObject({ reason: 'corrupt' });
    await pool.query(`DELETE FROM ${schema}.format`);
    expect(await refusal(postgresJournal(pool, { schema }))).toMatchObject({ reason: 'corrupt' });
  });

  test('an entry of a state it does not know is refused as corrupt when read', async () => {
    const pool = postgres.pool();
    const schema = fresh();
    const journal = postgresJournal(pool, { schema });
    await journal.open();
    await journal.write('acme', { put: [entry('accounts', 'a1')] });
    await pool.query(`UPDATE ${schema}.entries SET state = 'maybe'`);

    await expect(journal.get('acme', 'accounts', ['a1'])).rejects.toMatchObject({ reason: 'corrupt' });
  });

  test('a Postgres nobody listens on is refused at open, at once, as unavailable', async () => {
    const pool = new pg.Pool({ ...postgres.connection, port: 1, connectionTimeoutMillis: 5_000 });
    try {
      const error = await refusal(postgresJournal(pool));
      expect(error).toBeInstanceOf(SyncJournalError);
      expect(error).toMatchObject({ reason: 'unavailable' });
      expect((error as Error).message).toMatch(/schema crm_sync could not be opened \(.*ECONNREFUSED/);
    } finally {
      await pool.end();
    }
  });

  test('bad options are a TypeError at once, before any connection', () => {
    const pool = { connect: () => Promise.reject(new Error('not called')) };
    for (const schema of ['', 'Crm', 'a-b', 'x"; DROP SCHEMA public; --', 'a'.repeat(64), '1abc']) {
      expect(() => postgresJournal(pool as never, { schema })).toThrow(TypeError);
    }
    expect(() => postgresJournal({} as never)).toThrow(/pg Pool/);
  });

  test('a key that is not well-formed UTF-16 is refused, and nothing of its write is kept', async () => {
    const journal = postgresJournal(postgres.pool(), { schema: fresh() });
    await journal.open();
    await expect(
      journal.write('acme', { put: [entry('contacts', 'ok'), entry('contacts', 'lone \ud800')] }),
    ).rejects.toThrow(TypeError);
    expect((await journal.get('acme', 'contacts', ['ok'])).size).toBe(0);
  });

  test("a run lock whose holder's connection died is free again", async () => {
    const pool = postgres.pool();
    const schema = fresh();
    const journal = postgresJournal(pool, { schema });
    await journal.open();
    const dead = await journal.lock('acme', 'run_dead');
    await expect(Promise.resolve().then(() => journal.lock('acme', 'run_2'))).rejects.toMatchObject({
      reason: 'locked',
      message: expect.stringContaining('run_dead'),
    });

    // The holder's session ends, as when its worker is killed.
    await pool.query(
      "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()",
    );
    const next = await journal.lock('acme', 'run_2');
    // The row its holder left says whose lock this was.
    expect(next.takenOver).toMatchObject({ runId: 'run_dead' });
    await next.release();
    // The holder learns it lost its lock as its session's error comes, or at its next look at it.
    await vi.waitFor(() => expect(dead.signal?.reason).toMatchObject({ reason: 'locked' }), { timeout: 30_000 });
    // Its run ends: there is nothing left to free.
    await dead.release();
  });
});

describe('postgresJournal() when Postgres is lost', () => {
  test('a write while Postgres is down rejects as unavailable, and the journal works again when it is back', async () => {
    const own = await startPostgres();
    try {
      const pool = own.pool();
      const journal = postgresJournal(pool);
      await journal.open();
      await journal.write('acme', { put: [entry('contacts', 'c1', { state: 'sending', crmId: undefined })] });

      await own.stop();
      const error = await Promise.resolve(journal.write('acme', { put: [entry('contacts', 'c1')] })).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SyncJournalError);
      expect(error).toMatchObject({ reason: 'unavailable', message: expect.stringContaining('could not be written') });

      await own.restart();
      expect((await journal.pending('acme')).map((e) => [e.key, e.state])).toEqual([['c1', 'sending']]);
      await journal.write('acme', { put: [entry('contacts', 'c1')] });
      expect((await journal.pending('acme')).length).toBe(0);
    } finally {
      await own.close();
    }
  }, 120_000);
});
