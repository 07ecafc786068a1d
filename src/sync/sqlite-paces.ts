import type { DatabaseSync } from 'node:sqlite';
import type { SyncJournalPace } from './journal';

/**
 * The paces a SQLite journal remembers (SyncJournal.paces, issue 48): a table of their own, made
 * when the first is kept. No new format: a version that does not know the table leaves it alone
 * (a journal is known by its application id, not by the list of its tables), and reads the file
 * as before.
 */
const PACES = `CREATE TABLE IF NOT EXISTS paces (
  tenant TEXT NOT NULL, key TEXT NOT NULL, base_url TEXT NOT NULL, rate REAL NOT NULL, ceiling REAL NOT NULL,
  quiet_ms REAL NOT NULL, refusals INTEGER NOT NULL, learned_at INTEGER NOT NULL, used_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, base_url)
) WITHOUT ROWID;`;

interface PaceRow {
  key: string;
  base_url: string;
  rate: number;
  ceiling: number;
  quiet_ms: number;
  refusals: number;
  learned_at: number;
  used_at: number;
}

/** The tenant's paces; none in a journal that has kept none yet. */
export function readPaces(db: DatabaseSync, tenant: string): SyncJournalPace[] {
  const made = db.prepare("SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'paces'").get();
  if (made === undefined) return [];
  const rows = db
    .prepare('SELECT key, base_url, rate, ceiling, quiet_ms, refusals, learned_at, used_at FROM paces WHERE tenant = ?')
    .all(tenant) as unknown as PaceRow[];
  return rows.map((row) => ({
    key: row.key,
    baseUrl: row.base_url,
    rate: row.rate,
    ceiling: row.ceiling,
    quietMs: row.quiet_ms,
    refusals: Number(row.refusals),
    learnedAt: Number(row.learned_at),
    usedAt: Number(row.used_at),
  }));
}

/** Keeps `pace`, replacing the tenant's of the same key and base URL (within the caller's transaction). */
export function writePace(db: DatabaseSync, tenant: string, pace: SyncJournalPace): void {
  db.exec(PACES);
  db.prepare(
    'INSERT OR REPLACE INTO paces (tenant, key, base_url, rate, ceiling, quiet_ms, refusals, learned_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    tenant,
    pace.key,
    pace.baseUrl,
    pace.rate,
    pace.ceiling,
    pace.quietMs,
    pace.refusals,
    Math.round(pace.learnedAt),
    Math.round(pace.usedAt),
  );
}
