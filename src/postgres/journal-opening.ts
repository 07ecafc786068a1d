import { SyncJournalError } from '../sync/journal-error';
import type { JournalDatabase } from './journal-database';
import { lockNumber } from './lock-numbers';
import { generationsSql, runsSql, schemaSql } from './schema';
import { BEGIN } from './transaction-bounds';

/*
 * The one place that creates the journal's tables or adds those a newer version needs, and that
 * refuses a schema of another format: a fleet's workers open one journal at once, so the lock,
 * the catalogue's timing and the refusals that make that safe are read together, and no run
 * starts on tables it did not check.
 */

/** The format this version writes (the `format` table's one row); any other is refused. */
export const FORMAT = 1;

/** Opens the journal `db` names: its tables made or brought up to date, or its format refused. */
export async function openJournal(db: JournalDatabase): Promise<void> {
  if (db.opened) return;
  // A journal that exists (every open but the first of a schema) is read in one statement, with
  // no transaction and no lock: the format row is written once and never changed.
  const found = await formatRow(db);
  if (found?.format === FORMAT && found.runs) {
    db.opened = true;
    return;
  }
  // Workers starting together create the schema once: the others wait for the lock, then read
  // it. The lock is the session's, granted before BEGIN is sent (db.transaction()), so that the
  // transaction starts after the worker that created the schema committed: a connection's cached
  // catalog is brought up to date when a transaction starts, not when an advisory lock is granted.
  // (Taken inside the transaction, a connection that had looked for the schema before, as
  // formatRow() does, still found none; CREATE SCHEMA IF NOT EXISTS then failed on the catalog's
  // unique index, and three of four workers whose pools were warm failed to open a new journal.)
  await db.transaction(
    'opened',
    async (client) => {
      const found = await client.query('SELECT pg_catalog.to_regclass($1) AS format', [`${db.s}.format`]);
      if ((found.rows[0] as { format: string | null }).format === null) {
        await client.query(schemaSql(db.s, FORMAT) + generationsSql(db.s));
        return;
      }
      const rows = (await client.query(`SELECT format FROM ${db.s}.format`)).rows as { format: number }[];
      check(db, rows);
      // A journal made before the history (or generations) had no such tables: its first opener adds them.
      await client.query(runsSql(db.s) + generationsSql(db.s));
    },
    BEGIN,
    lockNumber('crm_sync.open', db.schema),
  );
  db.opened = true;
}

/**
 * The journal's format when its format table holds exactly one row, else undefined (no journal
 * yet, or one being created: the locked path of openJournal() decides, and refuses what it must).
 */
async function formatRow(db: JournalDatabase): Promise<{ format: number; runs: boolean } | undefined> {
  const client = await db.connect('opened');
  const lost = () => {};
  client.on('error', lost);
  let failure: Error | undefined;
  try {
    const rows = (
      await client.query(
        `SELECT format, pg_catalog.to_regclass($1) IS NOT NULL AND pg_catalog.to_regclass($2) IS NOT NULL AS runs FROM ${db.s}.format`,
        [`${db.s}.runs`, `${db.s}.generation_keys`],
      )
    ).rows as { format: number; runs: boolean }[];
    return rows.length === 1 ? rows[0] : undefined;
  } catch (error) {
    // 42P01 (no such table) and 3F000 (no such schema): a journal not created yet.
    const code = (error as { code?: unknown }).code;
    if (code === '42P01' || code === '3F000') return undefined;
    failure = error as Error;
    throw db.error(error, 'opened');
  } finally {
    client.removeListener('error', lost);
    client.release(failure ?? false);
  }
}

/** Refuses a format table that is not this version's one row (see openJournal()). */
function check(db: JournalDatabase, rows: readonly { format: number }[]): void {
  const format = rows.length === 1 ? rows[0]?.format : undefined;
  if (format === FORMAT) return;
  if (format !== undefined && format > FORMAT) {
    throw new SyncJournalError(
      'newer-version',
      `The Postgres sync journal in schema ${db.schema} was written by a newer version of crm-integration-sdk (format ${format}, this one reads ${FORMAT}): upgrade every worker to use it; nothing was changed or sent.`,
    );
  }
  throw new SyncJournalError(
    'corrupt',
    `The Postgres sync journal in schema ${db.schema} has no readable format row (${rows.length} rows, format ${String(format)}): it was not written by crm-integration-sdk, or was damaged; name another schema, or restore it (README.md, "Syncing with many workers"); nothing was changed or sent.`,
  );
}
