import type { SyncJournalFencedIntent } from '../sync/journal';
import type { ClaimLeases } from './claim-leases';
import { byTypeAndKey, bytesOf, COLUMNS, entryColumns, UPSERT } from './entry-rows';
import type { JournalDatabase } from './journal-database';
import { lockNumber } from './lock-numbers';

/*
 * A reserved claim (a claim asked with `reserve`) writes no intent when it is taken: its intent is
 * written at the send gate, just before the request leaves, or the claim is given up unsent. Those
 * two steps decide whether a create may be sent at all against a takeover by another worker, so
 * their locking order and fence checks are kept together, apart from the claim itself.
 */

/**
 * Writes reserved keys' intents (or removes them, `withdrawn`) under their claims' fences,
 * keeping and renewing the claims. The keys' advisory locks are taken first, waited for, in one
 * order: a claim of another worker taking over a lapsed reservation holds them while it reads
 * and writes, so it either commits first (the fence then differs, and the request is not sent)
 * or finds this intent written (its create in doubt), never both workers sending.
 */
export async function intendReserved(
  db: JournalDatabase,
  leases: ClaimLeases,
  tenant: string,
  intents: readonly SyncJournalFencedIntent[],
  leaseMs: number,
): Promise<readonly boolean[]> {
  db.use();
  if (intents.length === 0) return [];
  const t = bytesOf(tenant, 'tenant');
  const rows = [...intents].sort((x, y) => byTypeAndKey(x.intent, y.intent));
  const locks = new Set(
    rows.map(({ intent }) => lockNumber('crm_sync.claim', db.schema, tenant, intent.type, intent.key)),
  );
  const begin = `${db.begin}; SELECT pg_catalog.pg_advisory_xact_lock(l.x)
      FROM (SELECT x FROM pg_catalog.unnest('{${[...locks].join(',')}}'::bigint[]) AS x ORDER BY x) AS l`;
  const written = await db.transaction(
    'written',
    async (client) => {
      const columns = entryColumns(rows.map(({ intent }) => intent));
      const found = (
        await client.query(
          `WITH r AS (
               SELECT * FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[]),
                 pg_catalog.unnest($4::bigint[]), pg_catalog.unnest($5::boolean[]), pg_catalog.unnest($6::text[]),
                 pg_catalog.unnest($7::bytea[]), pg_catalog.unnest($8::bytea[]), pg_catalog.unnest($9::bytea[]),
                 pg_catalog.unnest($10::bigint[]), pg_catalog.unnest($11::bytea[]), pg_catalog.unnest($12::bytea[]))
               AS r(type, key, fence, withdrawn, state, crm_id, hash, data, attempted_at, request_id, run_id)),
             mine AS (
               UPDATE ${db.s}.claims c SET expires_at = pg_catalog.clock_timestamp() + ($13 OPERATOR(pg_catalog.*) interval '1 millisecond')
               FROM r WHERE c.tenant = $1 AND c.type = r.type AND c.key = r.key AND c.fence = r.fence
               RETURNING c.fence),
             put AS (
               INSERT INTO ${db.s}.entries (tenant, ${COLUMNS})
               SELECT $1, r.type, r.key, r.state, r.crm_id, r.hash, r.data, r.attempted_at, r.request_id, r.run_id
               FROM r JOIN mine ON mine.fence = r.fence WHERE NOT r.withdrawn
               ${UPSERT}
               RETURNING 1),
             gone AS (
               DELETE FROM ${db.s}.entries e USING r, mine
               WHERE mine.fence = r.fence AND r.withdrawn AND e.tenant = $1 AND e.type = r.type AND e.key = r.key
               RETURNING 1)
             SELECT fence FROM mine`,
          [
            t,
            rows.map(({ intent }) => intent.type),
            rows.map(({ intent }) => bytesOf(intent.key, 'key')),
            rows.map(({ fence }) => String(fence)),
            rows.map(({ withdrawn }) => withdrawn === true),
            ...columns,
            leaseMs,
          ],
        )
      ).rows as { fence: string }[];
      return new Set(found.map((row) => String(row.fence)));
    },
    begin,
  );
  const answers = intents.map(({ fence }) => written.has(String(fence)));
  for (const [i, { fence }] of intents.entries()) if (!answers[i]) leases.held.delete(fence);
  return answers;
}

/** Gives up reserved claims whose requests never left: their keys are free at once, their entries as they were. */
export async function releaseReserved(
  db: JournalDatabase,
  leases: ClaimLeases,
  tenant: string,
  fences: readonly number[],
): Promise<void> {
  for (const fence of fences) leases.held.delete(fence);
  if (fences.length === 0) return;
  await db.query('written', `DELETE FROM ${db.s}.claims WHERE tenant = $1 AND fence = ANY($2::bigint[])`, [
    bytesOf(tenant, 'tenant'),
    fences.map(String),
  ]);
}
