import type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalClaim,
  SyncJournalClaimRequest,
  SyncJournalClaims,
  SyncJournalEntry,
  SyncJournalGenerations,
  SyncJournalInFlight,
  SyncJournalLock,
  SyncJournalLockOptions,
  SyncJournalPace,
  SyncJournalRun,
  SyncType,
} from '../sync/journal';
import { SyncJournalError } from '../sync/journal-error';
import { ClaimLeases } from './claim-leases';
import { byTypeAndKey, bytesOf, COLUMNS, entriesFrom, entryColumns, entryOf, type Row, UPSERT } from './entry-rows';
import { FencedCommits } from './fenced-commits';
import { postgresGenerations } from './generations';
import { JournalDatabase } from './journal-database';
import { openJournal } from './journal-opening';
import { lockNumber } from './lock-numbers';
import { readPaces, writePace } from './pace-table';
import type { PostgresPool } from './pool';
import { changeOf, getEntries, inFlightEntries, knownTenants, listEntries, pendingEntries } from './records';
import { intendReserved, releaseReserved } from './reserved-claims';
import { addRun, readRuns } from './run-history';
import { RunLocks } from './run-locks';

/** Options of {@link postgresJournal}. */
export interface PostgresJournalOptions {
  /**
   * The schema that holds the journal's tables, created on first use (default `'crm_sync'`): a
   * lower-case SQL identifier (letters, digits, `_`, at most 63 characters). Every worker of a
   * fleet names the same one.
   */
  readonly schema?: string | undefined;
  /**
   * How long a worker's claim on a key it creates holds without renewal, in milliseconds (default
   * 30,000; from 1,000 to 3,600,000). A live worker renews its claims every third of it; a worker
   * that dies or stalls longer loses them, and another takes the keys over as records in doubt.
   */
  readonly leaseMs?: number | undefined;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

class PostgresJournal implements SyncJournal {
  /** The journal's statements, and whether it is open. */
  readonly #db: JournalDatabase;
  readonly claims: SyncJournalClaims;
  readonly generations: SyncJournalGenerations;
  /** This process's live claims and their renewal. */
  readonly #leases: ClaimLeases;
  /** The commits waiting for the one in flight. */
  readonly #commits: FencedCommits;
  /** The tenants' run locks this journal holds. */
  readonly #locks: RunLocks;

  constructor(pool: PostgresPool, schema: string, leaseMs: number) {
    this.#db = new JournalDatabase(pool, schema, leaseMs);
    this.#locks = new RunLocks(this.#db);
    this.#leases = new ClaimLeases(this.#db);
    this.#commits = new FencedCommits(this.#db, this.#leases);
    this.claims = {
      leaseMs,
      claim: (tenant, runId, requests) => this.#claim(tenant, runId, requests, leaseMs),
      commit: (tenant, change, fence) => this.#commits.commit(tenant, change, fence),
      held: (tenant, runId, type, keys) => this.#heldBy(tenant, runId, type, keys),
      intend: (tenant, intents) => intendReserved(this.#db, this.#leases, tenant, intents, leaseMs),
      release: (tenant, fences) => releaseReserved(this.#db, this.#leases, tenant, fences),
    };
    this.generations = postgresGenerations({
      s: this.#db.s,
      schema,
      leaseMs,
      query: (doing, text, values) => this.#db.query(doing, text, values),
      transaction: (doing, body) => this.#db.transaction(doing, body),
    });
  }

  open(): Promise<void> {
    return openJournal(this.#db);
  }

  lock(tenant: string, runId: string, options?: SyncJournalLockOptions): Promise<SyncJournalLock> {
    return this.#locks.lock(tenant, runId, options);
  }

  get(tenant: string, type: SyncType, keys: readonly string[]): Promise<ReadonlyMap<string, SyncJournalEntry>> {
    return getEntries(this.#db, tenant, type, keys);
  }

  list(tenant: string, type: SyncType, after: string | undefined, limit: number): Promise<readonly SyncJournalEntry[]> {
    return listEntries(this.#db, tenant, type, after, limit);
  }

  pending(tenant: string): Promise<readonly SyncJournalEntry[]> {
    return pendingEntries(this.#db, tenant);
  }

  async write(tenant: string, change: SyncJournalChange): Promise<void> {
    this.#db.use();
    const held = this.#locks.held(tenant);
    if (held?.signal.aborted) throw held.signal.reason;
    const apply = changeOf(this.#db, tenant, change);
    await this.#db.transaction('written', apply);
  }

  async #claim(
    tenant: string,
    runId: string,
    requests: readonly SyncJournalClaimRequest[],
    leaseMs: number,
  ): Promise<readonly SyncJournalClaim[]> {
    this.#db.use();
    const t = bytesOf(tenant, 'tenant');
    const run = bytesOf(runId, 'run id');
    const all = requests.map(({ intent, resend, reserve }) => ({
      intent,
      resend,
      reserve: reserve === true,
      id: `${intent.type}\u0000${intent.key}`,
      key: bytesOf(intent.key, 'key'),
      lock: lockNumber('crm_sync.claim', this.#db.schema, tenant, intent.type, intent.key),
    }));
    const ofKeys = `tenant = $1 AND (type, key) IN (SELECT * FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])))`;
    // A key's lock is held by the transaction claiming it. A key another worker is claiming at
    // this moment is answered held at once, as its claim will be once committed, rather than
    // waited for: the run sets it aside and decides it once that worker is done, as for a claim
    // found (overlapping workers met the same keys at once and queued behind each other's
    // transactions, each claim waiting out the last). Never waiting, two claims never deadlock.
    // BEGIN and the locks in one round trip (a statement without parameters may be several): the
    // lock numbers are decimal integers of our own (lockNumber), so written into it as they are.
    const begin = `${this.#db.begin}; SELECT pg_catalog.array_agg(x::text) FILTER (WHERE pg_catalog.pg_try_advisory_xact_lock(x)) AS mine,
      (extract(epoch FROM pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) 1000)::bigint AS now
      FROM pg_catalog.unnest('{${[...new Set(all.map((item) => item.lock))].join(',')}}'::bigint[]) AS x`;
    const claims = await this.#db.transaction(
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
             LEFT JOIN ${this.#db.s}.claims c ON c.tenant = $1 AND c.type = u.type AND c.key = u.key
               AND c.run_id <> $4 AND c.expires_at > pg_catalog.clock_timestamp()
             LEFT JOIN ${this.#db.s}.entries e ON e.tenant = $1 AND e.type = u.type AND e.key = u.key`,
            [t, types, keys, run],
          )
        ).rows as (Row & { held_until: string | null; state: string | null })[];
        const held = new Map<string, number>();
        const entries = new Map<string, SyncJournalEntry>();
        for (const row of read) {
          const id = `${row.type}\u0000${row.key.toString('utf8')}`;
          if (row.held_until !== null) held.set(id, Number(row.held_until));
          if (row.state !== null) entries.set(id, entryOf(row as Row, this.#db.schema));
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
          await client.query(`DELETE FROM ${this.#db.s}.claims WHERE ${ofKeys}`, values);
          await client.query(`UPDATE ${this.#db.s}.entries SET state = 'inDoubt', run_id = $4 WHERE ${ofKeys}`, [
            ...values,
            run,
          ]);
        }
        if (claim.length > 0) {
          // Rows in one order in every worker, as #change writes them.
          claim.sort((x, y) => byTypeAndKey(x.intent, y.intent));
          // A reserved key's intent is written at its send gate (#intend), not here.
          const intents = claim.filter((i) => !i.reserve);
          const alone = intents.length > 0 && intents.length < claim.length;
          const withIntents = intents.length === claim.length;
          // The claims and their intents in one statement: claims before entries, as a commit takes them.
          const rows = (
            await client.query(
              `WITH claimed AS (
                 INSERT INTO ${this.#db.s}.claims (tenant, type, key, run_id, fence, expires_at)
                 SELECT $1, u.type, u.key, $4, pg_catalog.nextval('${this.#db.s}.fences'),
                   pg_catalog.clock_timestamp() + ($5 OPERATOR(pg_catalog.*) interval '1 millisecond')
                 FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[])) AS u(type, key)
                 ON CONFLICT (tenant, type, key) DO UPDATE SET run_id = excluded.run_id, fence = excluded.fence,
                   expires_at = excluded.expires_at
                 RETURNING type, key, fence)${
                   withIntents
                     ? `,
               intents AS (
                 INSERT INTO ${this.#db.s}.entries (tenant, ${COLUMNS}) ${entriesFrom(6)} ${UPSERT}
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
            await client.query(`INSERT INTO ${this.#db.s}.entries (tenant, ${COLUMNS}) ${entriesFrom(4)} ${UPSERT}`, [
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
    for (const answer of answers) if (answer.outcome === 'claimed') this.#leases.held.add(answer.fence);
    this.#leases.renewEvery(leaseMs);
    return answers;
  }

  async #heldBy(
    tenant: string,
    runId: string,
    type: SyncType,
    keys: readonly string[],
  ): Promise<ReadonlyMap<string, number>> {
    const rows = (await this.#db.query(
      'read',
      `SELECT key, (extract(epoch FROM expires_at) OPERATOR(pg_catalog.*) 1000)::bigint AS expires_at FROM ${this.#db.s}.claims
       WHERE tenant = $1 AND type = $2 AND key = ANY($3::bytea[]) AND run_id <> $4 AND expires_at > pg_catalog.clock_timestamp()`,
      [bytesOf(tenant, 'tenant'), type, keys.map((key) => bytesOf(key, 'key')), bytesOf(runId, 'run id')],
    )) as { key: Buffer; expires_at: string }[];
    return new Map(rows.map((row) => [row.key.toString('utf8'), Number(row.expires_at)]));
  }

  tenants(): Promise<readonly string[]> {
    return knownTenants(this.#db);
  }

  // The paces remembered between runs: src/postgres/pace-table.ts.
  paces(tenant: string): Promise<readonly SyncJournalPace[]> {
    return readPaces((doing, text, values) => this.#db.query(doing, text, values), this.#db.s, tenant);
  }

  keepPace(tenant: string, pace: SyncJournalPace): Promise<void> {
    return writePace((doing, text, values) => this.#db.query(doing, text, values), this.#db.s, tenant, pace);
  }

  addRun(tenant: string, run: SyncJournalRun): Promise<void> {
    return addRun(this.#db, tenant, run);
  }

  runs(tenant: string, limit: number): Promise<readonly SyncJournalRun[]> {
    return readRuns(this.#db, tenant, limit);
  }

  inFlight(tenant: string): Promise<readonly SyncJournalInFlight[]> {
    return inFlightEntries(this.#db, tenant);
  }

  close(): void {
    // The pool is the caller's: it ends it. A run lock still held is given up, its session closed.
    this.#locks.loseAll('its journal was closed while the run held it');
    this.#db.opened = false;
    this.#leases.stop();
  }
}

/**
 * A {@link SyncJournal} in Postgres, over the node-postgres (`pg`) pool you pass: the journal for
 * a fleet of workers that sync one tenant together, on any number of machines (README.md,
 * "Syncing with many workers").
 *
 * Its tables live in their own schema (`crm_sync` unless `schema` names another), created on
 * first use with a format row. A schema written by another format is refused with a
 * {@link SyncJournalError} (`'newer-version'`, or `'corrupt'` for one that is not a journal), and
 * is never migrated by surprise. Every `write()` is one transaction, durable when it commits.
 * `lock()` is a session advisory lock: a worker that dies frees it as its connection closes; a
 * pooler in transaction mode (PgBouncer) does not keep session locks, so point the journal at
 * Postgres itself or at a session-mode pool.
 *
 * Give the pool a `connectionTimeoutMillis`, so that a run fails at once when Postgres cannot be
 * reached, and an `'error'` listener (node-postgres emits its idle clients' errors there, and a
 * pool without a listener throws them).
 *
 * @param pool - A `pg.Pool`, yours to configure and to end. No step of a run or of
 * `sync.resolve()` needs two of its clients at once, so any size works; a run's claims, commits
 * and renewals each use one, and overlap when the pool has room.
 * @example
 * ```ts
 * import pg from 'pg';
 * import { CrmSync } from 'crm-integration-sdk/sync';
 * import { postgresJournal } from 'crm-integration-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: 5_000 });
 * pool.on('error', (error) => console.error('postgres', error.message));
 * const sync = new CrmSync(crm, { journal: postgresJournal(pool) });
 * ```
 */
export function postgresJournal(pool: PostgresPool, options: PostgresJournalOptions = {}): SyncJournal {
  const schema = options.schema ?? 'crm_sync';
  const leaseMs = options.leaseMs ?? 30_000;
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 1000 || leaseMs > 3_600_000) {
    throw new TypeError(
      `postgresJournal(): leaseMs must be an integer from 1,000 to 3,600,000, got ${String(leaseMs)}.`,
    );
  }
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new TypeError(
      `postgresJournal(): schema must be a lower-case SQL identifier (letters, digits and _, at most 63 characters), got ${JSON.stringify(schema)}.`,
    );
  }
  if (typeof pool?.connect !== 'function') {
    throw new TypeError('postgresJournal(): pool must be a pg Pool (node-postgres), or an object with its connect().');
  }
  return new PostgresJournal(pool, schema, leaseMs);
}
