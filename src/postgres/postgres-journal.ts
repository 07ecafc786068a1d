import type {
  SyncJournal,
  SyncJournalChange,
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
import { claimKeys, heldBy } from './claims';
import { FencedCommits } from './fenced-commits';
import { postgresGenerations } from './generations';
import { JournalDatabase } from './journal-database';
import { openJournal } from './journal-opening';
import { readPaces, writePace } from './pace-table';
import type { PostgresPool } from './pool';
import { changeOf, getEntries, inFlightEntries, knownTenants, listEntries, pendingEntries } from './records';
import { intendReserved, releaseReserved } from './reserved-claims';
import { addRun, readRuns } from './run-history';
import { PostgresRunLocks } from './run-locks';

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

/*
 * The class only wires: each concern is a module of its own (journal-opening, run-locks, records,
 * claims, reserved-claims, fenced-commits, run-history), and what they share is made here once per
 * journal (its JournalDatabase and its ClaimLeases), so that close() can end it all in one place.
 */
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
  readonly #locks: PostgresRunLocks;

  constructor(pool: PostgresPool, schema: string, leaseMs: number) {
    this.#db = new JournalDatabase(pool, schema, leaseMs);
    this.#locks = new PostgresRunLocks(this.#db);
    this.#leases = new ClaimLeases(this.#db);
    this.#commits = new FencedCommits(this.#db, this.#leases);
    this.claims = {
      leaseMs,
      claim: (tenant, runId, requests) => claimKeys(this.#db, this.#leases, tenant, runId, requests, leaseMs),
      commit: (tenant, change, fence) => this.#commits.commit(tenant, change, fence),
      held: (tenant, runId, type, keys) => heldBy(this.#db, tenant, runId, type, keys),
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
