import type { SyncJournalClaim, SyncJournalClaimRequest, SyncJournalEntry, SyncType } from '../sync/journal';
import type { ClaimLeases } from './claim-leases';
import { byTypeAndKey, bytesOf, COLUMNS, entriesFrom, entryColumns, entryOf, type Row, UPSERT } from './entry-rows';
import type { JournalDatabase } from './journal-database';
import { lockNumber } from './lock-numbers';

/*
 * How a fleet's workers share out the keys they create: a key is claimed by one run at a time, a
 * claim whose lease ran out is taken over (its create put in doubt), and a key another worker is
 * claiming is answered held rather than waited for. This is the journal's one concurrent decision
 * across workers, so its locks, its reads and its writes are kept in one place to be read whole.
 */

/**
 * Claims `requests`' keys for `runId`, each answered claimed (with its fence), held by another
 * run, or found existing (a create taken over is answered in doubt); the claims won are renewed.
 */
export async function claimKeys(
  db: JournalDatabase,
  leases: ClaimLeases,
  tenant: string,
  runId: string,
  requests: readonly SyncJournalClaimRequest[],
  leaseMs: number,
): Promise<readonly SyncJournalClaim[]> {
  db.use();
  const t = bytesOf(tenant, 'tenant');
  const run = bytesOf(runId, 'run id');
  const all = requests.map(({ intent, resend, reserve }) => ({
    intent,
    resend,
    reserve: reserve === true,
    id: `${intent.type}\u0000${intent.key}`,
    key: bytesOf(intent.key, 'key'),
    lock: lockNumber('crm_sync.claim', db.schema, tenant, intent.type, intent.key),
  }));
  const ofKeys = `tenant = $1 AND (type, key) IN (SELECT * FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])))`;
  // A key's lock is held by the transaction claiming it. A key another worker is claiming at
  // this moment is answered held at once, as its claim will be once committed, rather than
  // waited for: the run sets it aside and decides it once that worker is done, as for a claim
  // found (overlapping workers met the same keys at once and queued behind each other's
  // transactions, each claim waiting out the last). Never waiting, two claims never deadlock.
  // BEGIN and the locks in one round trip (a statement without parameters may be several): the
  // lock numbers are decimal integers of our own (lockNumber), so written into it as they are.
  const begin = `${db.begin}; SELECT pg_catalog.array_agg(x::text) FILTER (WHERE pg_catalog.pg_try_advisory_xact_lock(x)) AS mine,
      (extract(epoch FROM pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint AS now
      FROM pg_catalog.unnest('{${[...new Set(all.map((item) => item.lock))].join(',')}}'::bigint[]) AS x`;
  const claims = await db.transaction(
    'claimed',
    async (client, begun) => {
      const results = (Array.isArray(begun) ? begun : [begun]) as { rows: unknown[] }[];
      const locked = results.at(-1)?.rows[0] as { mine: string[] | null; now: string };
      const mine = new Set(locked.mine ?? []);
      const answers = new Map<string, SyncJournalClaim>();
      for (const item of all) {
        if (!mine.has(item.lock)) answers.set(item.id, { outcome: 'held', expiresAt: Number(locked.now) + leaseMs });
      }
      const items = all.filter((item) => mine.has(item.lock));
      if (items.length === 0) return answers;
      const types = items.map((item) => item.intent.type);
      const keys = items.map((item) => item.key);
      // The keys' live claims of other runs and their entries, read in one statement once the
      // locks are held (a statement of its own: its snapshot sees what their last holder committed).
      const read = (
        await client.query(
          `SELECT u.type, u.key, (extract(epoch FROM c.expires_at) OPERATOR(pg_catalog.*) 1000)::bigint AS held_until,
               e.state, e.crm_id, e.hash, e.data, e.attempted_at, e.request_id, e.run_id
             FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])) AS u(type, key)
             LEFT JOIN ${db.s}.claims c ON c.tenant = $1 AND c.type = u.type AND c.key = u.key
               AND c.run_id <> $4 AND c.expires_at > pg_catalog.clock_timestamp()
             LEFT JOIN ${db.s}.entries e ON e.tenant = $1 AND e.type = u.type AND e.key = u.key`,
          [t, types, keys, run],
        )
      ).rows as (Row & { held_until: string | null; state: string | null })[];
      const held = new Map<string, number>();
      const entries = new Map<string, SyncJournalEntry>();
      for (const row of read) {
        const id = `${row.type}\u0000${row.key.toString('utf8')}`;
        if (row.held_until !== null) held.set(id, Number(row.held_until));
        if (row.state !== null) entries.set(id, entryOf(row as Row, db.schema));
      }
      const takeOver: typeof items = [];
      const claim: typeof items = [];
      const claiming = new Set<string>();
      for (const item of items) {
        const expiresAt = held.get(item.id);
        const found = entries.get(item.id);
        // A key asked twice in one claim is answered once.
        if (answers.has(item.id) || claiming.has(item.id)) continue;
        if (expiresAt !== undefined) answers.set(item.id, { outcome: 'held', expiresAt });
        else if (found && !(item.resend && (found.state === 'sending' || found.state === 'inDoubt'))) {
          if (found.state !== 'sending') answers.set(item.id, { outcome: 'exists', entry: found });
          else {
            // A create whose claim ended (its worker died or stalled) may have been sent: in doubt.
            takeOver.push(item);
            answers.set(item.id, { outcome: 'exists', entry: { ...found, state: 'inDoubt', runId } });
          }
        } else {
          claiming.add(item.id);
          claim.push(item);
        }
      }
      if (takeOver.length > 0) {
        const values = [t, takeOver.map((i) => i.intent.type), takeOver.map((i) => i.key)];
        // Claims before entries, as a commit takes them.
        await client.query(`DELETE FROM ${db.s}.claims WHERE ${ofKeys}`, values);
        await client.query(`UPDATE ${db.s}.entries SET state = 'inDoubt', run_id = $4 WHERE ${ofKeys}`, [
          ...values,
          run,
        ]);
      }
      if (claim.length > 0) {
        // Rows in one order in every worker, as changeOf() (records.ts) writes them.
        claim.sort((x, y) => byTypeAndKey(x.intent, y.intent));
        // A reserved key's intent is written at its send gate (reserved-claims.ts), not here.
        const intents = claim.filter((i) => !i.reserve);
        const alone = intents.length > 0 && intents.length < claim.length;
        const withIntents = intents.length === claim.length;
        // The claims and their intents in one statement: claims before entries, as a commit takes them.
        const rows = (
          await client.query(
            `WITH claimed AS (
                 INSERT INTO ${db.s}.claims (tenant, type, key, run_id, fence, expires_at)
                 SELECT $1, u.type, u.key, $4, pg_catalog.nextval('${db.s}.fences'),
                   pg_catalog.clock_timestamp() + ($5 OPERATOR(pg_catalog.*) interval '1 millisecond')
                 FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])) AS u(type, key)
                 ON CONFLICT (tenant, type, key) DO UPDATE SET run_id = excluded.run_id, fence = excluded.fence,
                   expires_at = excluded.expires_at
                 RETURNING type, key, fence)${
                   withIntents
                     ? `,
               intents AS (
                 INSERT INTO ${db.s}.entries (tenant, ${COLUMNS}) ${entriesFrom(6)} ${UPSERT}
                 RETURNING 1)`
                     : ''
                 }
               SELECT type, key, fence FROM claimed`,
            [
              t,
              claim.map((i) => i.intent.type),
              claim.map((i) => i.key),
              run,
              leaseMs,
              ...(withIntents ? entryColumns(claim.map((i) => i.intent)) : []),
            ],
          )
        ).rows as { type: string; key: Buffer; fence: string }[];
        if (alone) {
          await client.query(`INSERT INTO ${db.s}.entries (tenant, ${COLUMNS}) ${entriesFrom(4)} ${UPSERT}`, [
            t,
            intents.map((i) => i.intent.type),
            intents.map((i) => i.key),
            ...entryColumns(intents.map((i) => i.intent)),
          ]);
        }
        for (const row of rows) {
          answers.set(`${row.type}\u0000${row.key.toString('utf8')}`, {
            outcome: 'claimed',
            fence: Number(row.fence),
          });
        }
      }
      return answers;
    },
    begin,
  );
  const answers = all.map((item) => claims.get(item.id) as SyncJournalClaim);
  for (const answer of answers) if (answer.outcome === 'claimed') leases.held.add(answer.fence);
  leases.renewEvery(leaseMs);
  return answers;
}

/** The keys of `keys` that other runs than `runId` hold a live claim on, with when each ends. */
export async function heldBy(
  db: JournalDatabase,
  tenant: string,
  runId: string,
  type: SyncType,
  keys: readonly string[],
): Promise<ReadonlyMap<string, number>> {
  const rows = (await db.query(
    'read',
    `SELECT key, (extract(epoch FROM expires_at) OPERATOR(pg_catalog.*) 1000)::bigint AS expires_at FROM ${db.s}.claims
       WHERE tenant = $1 AND type = $2 AND key = ANY($3::bytea[]) AND run_id <> $4 AND expires_at > pg_catalog.clock_timestamp()`,
    [bytesOf(tenant, 'tenant'), type, keys.map((key) => bytesOf(key, 'key')), bytesOf(runId, 'run id')],
  )) as { key: Buffer; expires_at: string }[];
  return new Map(rows.map((row) => [row.key.toString('utf8'), Number(row.expires_at)]));
}
