import type { SyncJournalPace } from '../sync/journal';

/**
 * The paces a Postgres journal remembers (SyncJournal.paces, issue 48), in a table of their own,
 * `paces`, made by the first run that keeps one (older workers ignore it, as they ignore any
 * table they do not know). One row per tenant, key fingerprint and base URL; no credential.
 */
const pacesSql = (s: string): string => `CREATE TABLE IF NOT EXISTS ${s}.paces (
  tenant bytea NOT NULL, key text NOT NULL, base_url text NOT NULL,
  rate double precision NOT NULL, ceiling double precision NOT NULL, quiet_ms double precision NOT NULL,
  refusals integer NOT NULL, learned_at bigint NOT NULL, used_at bigint NOT NULL,
  PRIMARY KEY (tenant, key, base_url)
)`;

/** One statement of the journal's (its errors its own). */
export type PaceQuery = (doing: string, text: string, values: unknown[]) => Promise<unknown[]>;

interface PaceRow {
  key: string;
  base_url: string;
  rate: number;
  ceiling: number;
  quiet_ms: number;
  refusals: number;
  learned_at: string;
  used_at: string;
}

/** The tenant's paces: none while the table is not made (asked first: a missing table is no journal gone). */
export async function readPaces(query: PaceQuery, s: string, tenant: string): Promise<SyncJournalPace[]> {
  const [made] = (await query('read', 'SELECT pg_catalog.to_regclass($1) IS NOT NULL AS made', [`${s}.paces`])) as {
    made: boolean;
  }[];
  if (!made?.made) return [];
  const rows = (await query(
    'read',
    `SELECT key, base_url, rate, ceiling, quiet_ms, refusals, learned_at, used_at FROM ${s}.paces WHERE tenant = $1`,
    [Buffer.from(tenant, 'utf8')],
  )) as PaceRow[];
  return rows.map((row) => ({
    key: row.key,
    baseUrl: row.base_url,
    rate: Number(row.rate),
    ceiling: Number(row.ceiling),
    quietMs: Number(row.quiet_ms),
    refusals: Number(row.refusals),
    learnedAt: Number(row.learned_at),
    usedAt: Number(row.used_at),
  }));
}

/** Keeps `pace`, replacing the tenant's of the same key and base URL; the table made first when it is not. */
export async function writePace(query: PaceQuery, s: string, tenant: string, pace: SyncJournalPace): Promise<void> {
  try {
    await query('written', pacesSql(s), []);
  } catch {
    // Two workers making it at once: one of them fails (a unique violation in the catalog), and the table is there.
  }
  await query(
    'written',
    `INSERT INTO ${s}.paces (tenant, key, base_url, rate, ceiling, quiet_ms, refusals, learned_at, used_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (tenant, key, base_url) DO UPDATE SET
     rate = excluded.rate, ceiling = excluded.ceiling, quiet_ms = excluded.quiet_ms, refusals = excluded.refusals,
     learned_at = excluded.learned_at, used_at = excluded.used_at`,
    [
      Buffer.from(tenant, 'utf8'),
      pace.key,
      pace.baseUrl,
      pace.rate,
      pace.ceiling,
      pace.quietMs,
      pace.refusals,
      String(Math.round(pace.learnedAt)),
      String(Math.round(pace.usedAt)),
    ],
  );
}
