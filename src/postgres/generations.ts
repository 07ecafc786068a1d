import { createHash } from 'node:crypto';
import type {
  SyncJournalGenerationEnd,
  SyncJournalGenerationState,
  SyncJournalGenerationStatus,
  SyncJournalGenerations,
  SyncJournalSliceList,
  SyncType,
} from '../sync/journal';
import type { PostgresPoolClient } from './pool';

/*
 * Generations in the Postgres journal (schema.ts, generationsSql): a row per generation, a row
 * per slice finished, and a row per key a slice read. The keys are a table of their own rather
 * than a mark on the entries: a slice reads keys the journal does not hold yet (the records it is
 * about to create), and the entries' rows are the claims' to write. Each step that decides
 * (join, finish) runs under the tenant's generation lock, so that two workers finishing the last
 * two slices at once see each other's and one of them claims the removal.
 */

/** How long a generation may stay open: a week, so that a nightly pass whose retries ran late still completes. */
const GENERATION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** What the generations use of the journal: its statements (each retried as the journal retries its own) and its lease. */
export interface GenerationsDatabase {
  /** The journal's schema, quoted. */
  readonly s: string;
  /** The journal's schema, as given (for the lock numbers). */
  readonly schema: string;
  /** The lease of a removal's claim, as of a create's. */
  readonly leaseMs: number;
  query(doing: string, text: string, values: unknown[]): Promise<unknown[]>;
  transaction<T>(doing: string, body: (client: PostgresPoolClient) => Promise<T>): Promise<T>;
}

/** Strings are stored as their UTF-8 bytes, as the journal stores them. */
function bytesOf(value: string, what: string): Buffer {
  if (!value.isWellFormed()) {
    throw new TypeError(`A ${what} given to the Postgres sync journal is not well-formed UTF-16 (a lone surrogate).`);
  }
  return Buffer.from(value, 'utf8');
}

/** The tenant's generation lock, a 64-bit advisory lock number as Postgres reads a bigint parameter. */
function lockOf(schema: string, tenant: string): string {
  return createHash('sha256')
    .update(['crm_sync.generation', schema, tenant].join('\u0000'))
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/** The slices of `slices` not in `finished`, ascending. */
function missingOf(slices: number, finished: readonly number[]): number[] {
  const done = new Set(finished);
  const missing: number[] = [];
  for (let slice = 0; slice < slices; slice++) if (!done.has(slice)) missing.push(slice);
  return missing;
}

/** The lists every slice read to their end, in the order of the first, with their unusable keys summed. */
function listsOf(rows: readonly { types: string[]; unusable: number[] }[]): SyncJournalSliceList[] {
  const [first, ...rest] = rows;
  if (!first) return [];
  return first.types.flatMap((type, i) => {
    let unusableKeys = first.unusable[i] ?? 0;
    for (const row of rest) {
      const at = row.types.indexOf(type);
      if (at < 0) return [];
      unusableKeys += row.unusable[at] ?? 0;
    }
    return [{ type: type as SyncType, unusableKeys }];
  });
}

const STATES: ReadonlySet<string> = new Set<SyncJournalGenerationState>([
  'open',
  'removing',
  'done',
  'superseded',
  'expired',
]);

/** The generations of a Postgres journal (see {@link SyncJournalGenerations}). */
export function postgresGenerations(db: GenerationsDatabase): SyncJournalGenerations {
  const { s, leaseMs } = db;
  const ms = (n: number) => `(${n}::bigint OPERATOR(pg_catalog.*) interval '1 millisecond')`;
  const maxAge = ms(GENERATION_MAX_AGE_MS);
  const lease = ms(leaseMs);
  const now = 'pg_catalog.clock_timestamp()';
  // A removal's claim that lapsed (its run stopped or stalled past the lease) may be taken again.
  const lapsed = `(removal_expires_at IS NULL OR removal_expires_at < ${now})`;

  /** The tenant's generations that outlived their age, or that `id` (started now) supersedes, closed; their keys forgotten. */
  async function close(client: PostgresPoolClient, tenant: Buffer, id: Buffer | undefined): Promise<void> {
    await client.query(
      `UPDATE ${s}.generations SET state = 'expired' WHERE tenant = $1 AND state IN ('open', 'removing')
         AND started_at < ${now} OPERATOR(pg_catalog.-) ${maxAge} AND (state = 'open' OR ${lapsed})`,
      [tenant],
    );
    if (id !== undefined) {
      // A removal under way is left to end: its remover reads the keys of its generation.
      await client.query(
        `UPDATE ${s}.generations SET state = 'superseded' WHERE tenant = $1 AND id <> $2
           AND (state = 'open' OR (state = 'removing' AND ${lapsed}))`,
        [tenant, id],
      );
    }
    await client.query(
      `DELETE FROM ${s}.generation_keys k USING ${s}.generations g WHERE g.tenant = $1
         AND g.state IN ('done', 'superseded', 'expired') AND k.tenant = g.tenant AND k.id = g.id`,
      [tenant],
    );
  }

  /** Takes the removal's claim of `id` for `run` (the generation is complete); its fence. */
  async function claimRemoval(client: PostgresPoolClient, tenant: Buffer, id: Buffer, run: Buffer): Promise<number> {
    const rows = (
      await client.query(
        `UPDATE ${s}.generations SET state = 'removing', remover = $3,
           removal_fence = pg_catalog.nextval('${s}.fences'), removal_expires_at = ${now} OPERATOR(pg_catalog.+) ${lease}
         WHERE tenant = $1 AND id = $2 RETURNING removal_fence`,
        [tenant, id, run],
      )
    ).rows as { removal_fence: string }[];
    return Number(rows[0]?.removal_fence);
  }

  /** The claim `fence` of `id`, renewed every third of the lease until it is done or released. */
  function removalClaim(tenant: Buffer, id: Buffer, fence: number) {
    const ofClaim = `tenant = $1 AND id = $2 AND removal_fence = $3 AND state = 'removing'`;
    const values = [tenant, id, String(fence)];
    const renewal = setInterval(() => {
      void db
        .query(
          'renewed',
          `UPDATE ${s}.generations SET removal_expires_at = ${now} OPERATOR(pg_catalog.+) ${lease} WHERE ${ofClaim}`,
          values,
        )
        .catch(() => {});
    }, leaseMs / 3);
    renewal.unref?.();
    return {
      fence,
      done: async () => {
        clearInterval(renewal);
        return db.transaction('written', async (client) => {
          const rows = (
            await client.query(
              `UPDATE ${s}.generations SET state = 'done', removal_expires_at = NULL WHERE ${ofClaim} RETURNING id`,
              values,
            )
          ).rows;
          // Its keys are not needed any more: no slice's read counts now.
          if (rows.length > 0)
            await client.query(`DELETE FROM ${s}.generation_keys WHERE tenant = $1 AND id = $2`, [tenant, id]);
          return rows.length > 0;
        });
      },
      release: async () => {
        clearInterval(renewal);
        await db.query('written', `UPDATE ${s}.generations SET removal_expires_at = ${now} WHERE ${ofClaim}`, values);
      },
    };
  }

  return {
    maxAgeMs: GENERATION_MAX_AGE_MS,

    async join(tenant, id, slices) {
      const t = bytesOf(tenant, 'tenant');
      const g = bytesOf(id, 'generation id');
      return db.transaction('written', async (client) => {
        await client.query('SELECT pg_catalog.pg_advisory_xact_lock($1::bigint)', [lockOf(db.schema, tenant)]);
        const started = (
          await client.query(
            `INSERT INTO ${s}.generations (tenant, id, slices, state) VALUES ($1, $2, $3, 'open')
             ON CONFLICT (tenant, id) DO NOTHING RETURNING id`,
            [t, g, slices],
          )
        ).rows;
        await close(client, t, started.length > 0 ? g : undefined);
        const row = (
          await client.query(`SELECT slices, state FROM ${s}.generations WHERE tenant = $1 AND id = $2`, [t, g])
        ).rows[0] as { slices: number; state: string };
        return {
          slices: row.slices,
          state: (STATES.has(row.state) ? row.state : 'done') as SyncJournalGenerationState,
        };
      });
    },

    async read(tenant, id, type, keys) {
      // In one order in every worker: two slices inserting the same keys queue rather than deadlock.
      const sorted = [...new Set(keys)].sort().map((key) => bytesOf(key, 'key'));
      await db.transaction('written', (client) =>
        client.query(
          `INSERT INTO ${s}.generation_keys (tenant, id, type, key)
           SELECT $1, $2, $3, k FROM pg_catalog.unnest($4::bytea[]) AS k
           WHERE EXISTS (SELECT 1 FROM ${s}.generations WHERE tenant = $1 AND id = $2 AND state = 'open')
           ON CONFLICT DO NOTHING`,
          [bytesOf(tenant, 'tenant'), bytesOf(id, 'generation id'), type, sorted],
        ),
      );
    },

    async unread(tenant, id, type, keys, fence) {
      const rows = (await db.query(
        'read',
        `SELECT k FROM pg_catalog.unnest($4::bytea[]) AS k
         WHERE EXISTS (SELECT 1 FROM ${s}.generations WHERE tenant = $1 AND id = $2 AND state = 'removing' AND removal_fence = $5)
           AND NOT EXISTS (SELECT 1 FROM ${s}.generation_keys r WHERE r.tenant = $1 AND r.id = $2 AND r.type = $3 AND r.key = k)`,
        [
          bytesOf(tenant, 'tenant'),
          bytesOf(id, 'generation id'),
          type,
          keys.map((key) => bytesOf(key, 'key')),
          String(fence),
        ],
      )) as { k: Buffer }[];
      return new Set(rows.map((row) => row.k.toString('utf8')));
    },

    async finish(tenant, runId, { id, slice, remove, lists }) {
      const t = bytesOf(tenant, 'tenant');
      const g = bytesOf(id, 'generation id');
      const run = bytesOf(runId, 'run id');
      const ended = await db.transaction('written', async (client): Promise<SyncJournalGenerationEnd | number> => {
        await client.query('SELECT pg_catalog.pg_advisory_xact_lock($1::bigint)', [lockOf(db.schema, tenant)]);
        await close(client, t, undefined);
        const row = (
          await client.query(
            `SELECT slices, state, ${lapsed} AS lapsed FROM ${s}.generations WHERE tenant = $1 AND id = $2`,
            [t, g],
          )
        ).rows[0] as { slices: number; state: string; lapsed: boolean } | undefined;
        if (!row) return { outcome: 'closed', state: 'expired' };
        if (row.state === 'open') {
          // A slice finished twice (a queue's retry, or two runs of it at once) counts once.
          await client.query(
            `INSERT INTO ${s}.generation_slices (tenant, id, slice, run_id, types, unusable)
             VALUES ($1, $2, $3, $4, $5::text[], $6::integer[]) ON CONFLICT DO NOTHING`,
            [t, g, slice, run, lists.map((l) => l.type), lists.map((l) => l.unusableKeys)],
          );
          const finished = (
            await client.query(`SELECT slice FROM ${s}.generation_slices WHERE tenant = $1 AND id = $2`, [t, g])
          ).rows as { slice: number }[];
          const missing = missingOf(
            row.slices,
            finished.map((f) => f.slice),
          );
          if (missing.length > 0) return { outcome: 'open', missing };
          if (!remove) {
            await client.query(`UPDATE ${s}.generations SET state = 'done' WHERE tenant = $1 AND id = $2`, [t, g]);
            await close(client, t, undefined);
            return { outcome: 'closed', state: 'done' };
          }
          return claimRemoval(client, t, g, run);
        }
        if (row.state === 'removing' && row.lapsed && remove) return claimRemoval(client, t, g, run);
        return { outcome: 'closed', state: row.state as Exclude<SyncJournalGenerationState, 'open'> };
      });
      if (typeof ended !== 'number') return ended;
      const rows = (await db.query(
        'read',
        `SELECT types, unusable FROM ${s}.generation_slices WHERE tenant = $1 AND id = $2 ORDER BY slice`,
        [t, g],
      )) as { types: string[]; unusable: number[] }[];
      return { outcome: 'remove', lists: listsOf(rows), claim: removalClaim(t, g, ended) };
    },

    async open(tenant) {
      const rows = (await db.query(
        'read',
        `SELECT g.id, g.slices, g.state, (extract(epoch FROM g.started_at) OPERATOR(pg_catalog.*) 1000)::bigint AS started_at,
           ARRAY(SELECT f.slice FROM ${s}.generation_slices f WHERE f.tenant = g.tenant AND f.id = g.id) AS finished
         FROM ${s}.generations g WHERE g.tenant = $1 AND g.state IN ('open', 'removing')
           AND g.started_at >= ${now} OPERATOR(pg_catalog.-) ${maxAge}
         ORDER BY g.started_at DESC, g.id`,
        [bytesOf(tenant, 'tenant')],
      )) as { id: Buffer; slices: number; state: 'open' | 'removing'; started_at: string; finished: number[] }[];
      return rows.map(
        (row): SyncJournalGenerationStatus => ({
          id: row.id.toString('utf8'),
          slices: row.slices,
          state: row.state,
          startedAt: Number(row.started_at),
          missing: missingOf(row.slices, row.finished),
        }),
      );
    },
  };
}
