import type { SyncJournalRun } from '../sync/journal';
import { SYNC_HISTORY_KEPT } from '../sync/journal';
import { bytesOf } from './entry-rows';
import type { JournalDatabase } from './journal-database';

/*
 * The history of runs (the `runs` table, schema.ts runsSql) is read by people and by `crm sync
 * status`, not by a run deciding what to send: no claim, lock or entry touches it, and its rows
 * are kept bounded by a rule of their own (SYNC_HISTORY_KEPT), so it is apart from the records.
 */

/** Writes a run's row (at its start, as it goes, at its end); a run's end forgets the oldest past the kept. */
export async function addRun(db: JournalDatabase, tenant: string, run: SyncJournalRun): Promise<void> {
  await db.query(
    'written',
    `INSERT INTO ${db.s}.runs (tenant, run_id, started_at, finished_at, recorded_at, summary)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, run_id) DO UPDATE SET started_at = excluded.started_at,
       finished_at = excluded.finished_at, recorded_at = excluded.recorded_at, summary = excluded.summary,
       stamped_at = pg_catalog.clock_timestamp()`,
    [
      bytesOf(tenant, 'tenant'),
      bytesOf(run.runId, 'run id'),
      String(run.startedAt),
      run.finishedAt === undefined ? null : String(run.finishedAt),
      String(run.recordedAt),
      bytesOf(run.summary, 'run summary'),
    ],
  );
  // A run's end forgets the tenant's runs past the last SYNC_HISTORY_KEPT: the history stays bounded.
  if (run.finishedAt !== undefined) {
    await db.query(
      'written',
      `DELETE FROM ${db.s}.runs WHERE tenant = $1 AND run_id NOT IN
         (SELECT run_id FROM ${db.s}.runs WHERE tenant = $1 ORDER BY started_at DESC, run_id LIMIT $2)`,
      [bytesOf(tenant, 'tenant'), SYNC_HISTORY_KEPT],
    );
  }
}

/** The tenant's last `limit` runs, newest first, each with its age by the server's clock. */
export async function readRuns(db: JournalDatabase, tenant: string, limit: number): Promise<readonly SyncJournalRun[]> {
  const rows = (await db.query(
    'read',
    `SELECT run_id, started_at, finished_at, recorded_at, summary,
         (extract(epoch FROM pg_catalog.clock_timestamp() - stamped_at) OPERATOR(pg_catalog.*) 1000)::bigint AS age_ms
       FROM ${db.s}.runs WHERE tenant = $1 ORDER BY started_at DESC, run_id LIMIT $2`,
    [bytesOf(tenant, 'tenant'), limit],
  )) as {
    run_id: Buffer;
    started_at: string;
    finished_at: string | null;
    recorded_at: string;
    summary: Buffer;
    age_ms: string;
  }[];
  return rows.map((row) => ({
    runId: row.run_id.toString('utf8'),
    startedAt: Number(row.started_at),
    finishedAt: row.finished_at === null ? undefined : Number(row.finished_at),
    recordedAt: Number(row.recorded_at),
    summary: row.summary.toString('utf8'),
    // By the server's clock: a reader on another host tells a live run without comparing clocks.
    ageMs: Number(row.age_ms),
  }));
}
