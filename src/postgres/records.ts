import type { SyncJournalChange, SyncJournalEntry, SyncJournalInFlight, SyncType } from '../sync/journal';
import { byTypeAndKey, bytesOf, COLUMNS, entriesFrom, entryColumns, entryOf, type Row, UPSERT } from './entry-rows';
import type { JournalDatabase } from './journal-database';
import type { PostgresPoolClient } from './pool';

/*
 * The records as a run reads and writes them outside any claim: the entries (a record's mapping,
 * its outcome, one in doubt) read by key, listed, found pending, in flight under another worker's
 * claim, and written as a change under the run's lock. A claim's reads and writes of the same rows
 * are the claims' (claims.ts), since they hold the keys' locks while they do.
 */

async function readRows(db: JournalDatabase, text: string, values: unknown[]): Promise<Row[]> {
  return (await db.query('read', text, values)) as Row[];
}

/** The tenant's entries of `type` for `keys`, by key. */
export async function getEntries(
  db: JournalDatabase,
  tenant: string,
  type: SyncType,
  keys: readonly string[],
): Promise<ReadonlyMap<string, SyncJournalEntry>> {
  const rows = await readRows(
    db,
    `SELECT ${COLUMNS} FROM ${db.s}.entries WHERE tenant = $1 AND type = $2 AND key = ANY($3::bytea[])`,
    [bytesOf(tenant, 'tenant'), type, keys.map((key) => bytesOf(key, 'key'))],
  );
  const found = new Map<string, SyncJournalEntry>();
  for (const row of rows) {
    const entry = entryOf(row, db.schema);
    found.set(entry.key, entry);
  }
  return found;
}

/** The tenant's entries of `type` after `after`, in key order, at most `limit`. */
export async function listEntries(
  db: JournalDatabase,
  tenant: string,
  type: SyncType,
  after: string | undefined,
  limit: number,
): Promise<readonly SyncJournalEntry[]> {
  // bytea compares byte by byte: UTF-8's order, which is the code points' order.
  const rows =
    after === undefined
      ? await readRows(
          db,
          `SELECT ${COLUMNS} FROM ${db.s}.entries WHERE tenant = $1 AND type = $2 ORDER BY key LIMIT $3`,
          [bytesOf(tenant, 'tenant'), type, limit],
        )
      : await readRows(
          db,
          `SELECT ${COLUMNS} FROM ${db.s}.entries WHERE tenant = $1 AND type = $2 AND key > $3 ORDER BY key LIMIT $4`,
          [bytesOf(tenant, 'tenant'), type, bytesOf(after, 'key'), limit],
        );
  return rows.map((row) => entryOf(row, db.schema));
}

/** The tenant's records in doubt: sending or in doubt, under no live claim. */
export async function pendingEntries(db: JournalDatabase, tenant: string): Promise<readonly SyncJournalEntry[]> {
  const rows = await readRows(
    db,
    // An entry under a live claim is another worker's create in flight, not a record in doubt.
    `SELECT ${COLUMNS} FROM ${db.s}.entries e WHERE tenant = $1 AND state IN ('sending', 'inDoubt')
       AND NOT EXISTS (SELECT 1 FROM ${db.s}.claims c WHERE c.tenant = e.tenant AND c.type = e.type
         AND c.key = e.key AND c.expires_at > pg_catalog.clock_timestamp())`,
    [bytesOf(tenant, 'tenant')],
  );
  return rows.map((row) => entryOf(row, db.schema));
}

/** The statements of one change, its strings encoded first: a key refused leaves nothing half-written. */
export function changeOf(
  db: JournalDatabase,
  tenant: string,
  change: SyncJournalChange,
): (client: PostgresPoolClient) => Promise<void> {
  const t = bytesOf(tenant, 'tenant');
  // Rows in one order in every worker, so that two writes of the same keys queue rather than deadlock.
  const put = [...(change.put ?? [])].sort(byTypeAndKey);
  const remove = [...(change.remove ?? [])].sort(byTypeAndKey);
  const putKeys = put.map((e) => bytesOf(e.key, 'key'));
  const removeKeys = remove.map((e) => bytesOf(e.key, 'key'));
  const putValues = [t, put.map((e) => e.type), putKeys, ...entryColumns(put)];
  return async (client) => {
    if (put.length > 0) {
      await client.query(`INSERT INTO ${db.s}.entries (tenant, ${COLUMNS}) ${entriesFrom(4)} ${UPSERT}`, putValues);
    }
    if (remove.length > 0) {
      await client.query(
        `DELETE FROM ${db.s}.entries e USING ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])) AS r(type, key)
           WHERE e.tenant = $1 AND e.type = r.type AND e.key = r.key`,
        [t, remove.map((e) => e.type), removeKeys],
      );
    }
  };
}

/** The tenant's creates in flight: entries sending or in doubt under a live claim, with its holder. */
export async function inFlightEntries(db: JournalDatabase, tenant: string): Promise<readonly SyncJournalInFlight[]> {
  const rows = (await db.query(
    'read',
    `SELECT ${COLUMNS.split(', ')
      .map((column) => `e.${column}`)
      .join(', ')}, c.run_id AS claimed_by,
         (extract(epoch FROM c.expires_at) OPERATOR(pg_catalog.*) 1000)::bigint AS expires_at
       FROM ${db.s}.entries e JOIN ${db.s}.claims c ON c.tenant = e.tenant AND c.type = e.type AND c.key = e.key
       WHERE e.tenant = $1 AND e.state IN ('sending', 'inDoubt') AND c.expires_at > pg_catalog.clock_timestamp()
       ORDER BY e.type, e.key`,
    [bytesOf(tenant, 'tenant')],
  )) as (Row & { claimed_by: Buffer; expires_at: string })[];
  return rows.map((row) => ({
    entry: entryOf(row, db.schema),
    runId: row.claimed_by.toString('utf8'),
    expiresAt: Number(row.expires_at),
  }));
}

/** Every tenant the journal holds anything of: entries, runs, claims or a generation not done. */
export async function knownTenants(db: JournalDatabase): Promise<readonly string[]> {
  const rows = (await db.query(
    'read',
    `SELECT tenant FROM ${db.s}.entries UNION SELECT tenant FROM ${db.s}.runs
       UNION SELECT tenant FROM ${db.s}.claims
       UNION SELECT tenant FROM ${db.s}.generations WHERE state IN ('open', 'removing') ORDER BY tenant`,
    [],
  )) as { tenant: Buffer }[];
  return rows.map((row) => row.tenant.toString('utf8'));
}
