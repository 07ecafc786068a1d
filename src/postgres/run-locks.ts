import type { SyncJournalLock, SyncJournalLockOptions, SyncJournalTakeover } from '../sync/journal';
import { SyncJournalError } from '../sync/journal-error';
import { bytesOf } from './entry-rows';
import type { JournalDatabase } from './journal-database';
import { lockNumber } from './lock-numbers';

/*
 * A run's lock is a session's advisory lock: it lives as long as one client stays checked out of
 * the pool, unlike every other statement of the journal, which borrows a client and gives it back.
 * Holding that client, watching it and telling the run when it is lost are one concern, kept here.
 */

/** The tenants' run locks of one journal. */
export class PostgresRunLocks {
  readonly #db: JournalDatabase;
  /** The run locks this journal holds, by tenant: each given up (its session closed) when it closes. */
  readonly #locks = new Map<string, { readonly lose: (why: string) => void; readonly signal: AbortSignal }>();

  constructor(db: JournalDatabase) {
    this.#db = db;
  }

  async lock(tenant: string, runId: string, options?: SyncJournalLockOptions): Promise<SyncJournalLock> {
    this.#db.use();
    options?.signal?.throwIfAborted();
    const number = lockNumber('crm_sync.run', this.#db.schema, tenant);
    const client = await this.#db.connect('locked');
    // The lock is the session's: while this client is checked out and alive, no other session
    // takes it, and a worker that dies (its connection closes) frees it at once. The session is
    // the holder's identity (Postgres gives no two live sessions one), and its liveness the
    // lease's renewal: a holder whose connection fails has lost the lock (lose()).
    const controller = new AbortController();
    let check: ReturnType<typeof setInterval> | undefined;
    const lose = (why: string) => {
      if (controller.signal.aborted) return;
      controller.abort(
        new SyncJournalError('locked', `This run lost the tenant's lock: ${why}. It stops, and writes nothing more.`),
      );
      done(new Error(`The run lock's session was given up: ${why}`));
    };
    const lost = () => lose('its Postgres session failed');
    client.on('error', lost);
    let returned = false;
    const done = (error?: Error) => {
      clearInterval(check);
      if (returned) return;
      returned = true;
      client.removeListener('error', lost);
      client.release(error ?? false);
    };
    let takenOver: SyncJournalTakeover | undefined;
    try {
      const taken = await client.query('SELECT pg_catalog.pg_try_advisory_lock($1::bigint) AS taken', [number]);
      if (!(taken.rows[0] as { taken: boolean }).taken) {
        const held = await client.query(`SELECT run_id, at FROM ${this.#db.s}.locks WHERE tenant = $1`, [
          bytesOf(tenant, 'tenant'),
        ]);
        const holder = held.rows[0] as { run_id: Buffer; at: Date } | undefined;
        throw new SyncJournalError(
          'locked',
          `Another sync run (${holder ? `${holder.run_id.toString('utf8')}, since ${holder.at.toISOString()}` : 'starting'}) holds the Postgres sync journal in schema ${this.#db.schema} for tenant ${tenant}.`,
        );
      }
      // A row left beside a free lock is a run's whose session ended without releasing it.
      const left = await client.query(`SELECT run_id, at FROM ${this.#db.s}.locks WHERE tenant = $1`, [
        bytesOf(tenant, 'tenant'),
      ]);
      const before = left.rows[0] as { run_id: Buffer; at: Date } | undefined;
      if (before) takenOver = { runId: before.run_id.toString('utf8'), takenAt: before.at.getTime() };
      await client.query(
        `INSERT INTO ${this.#db.s}.locks (tenant, run_id, at) VALUES ($1, $2, pg_catalog.now())
         ON CONFLICT (tenant) DO UPDATE SET run_id = excluded.run_id, at = excluded.at`,
        [bytesOf(tenant, 'tenant'), bytesOf(runId, 'run id')],
      );
    } catch (error) {
      done(error instanceof SyncJournalError ? undefined : (error as Error));
      throw this.#db.error(error, 'locked');
    }
    // The session is looked at every third of the lease: one gone silent (a dropped connection)
    // fails its statement within connect()'s answer time, and the run learns it lost the lock.
    check = setInterval(() => {
      client.query('SELECT 1').catch(() => lose('its Postgres session did not answer'));
    }, this.#db.leaseMs / 3);
    (check as { unref?: () => void }).unref?.();
    this.#locks.set(tenant, { lose, signal: controller.signal });
    let released = false;
    return {
      signal: controller.signal,
      takenOver,
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(check);
        if (this.#locks.get(tenant)?.signal === controller.signal) this.#locks.delete(tenant);
        // A lock lost was freed with its session.
        if (controller.signal.aborted) return;
        try {
          await client.query(`DELETE FROM ${this.#db.s}.locks WHERE tenant = $1 AND run_id = $2`, [
            bytesOf(tenant, 'tenant'),
            bytesOf(runId, 'run id'),
          ]);
          await client.query('SELECT pg_catalog.pg_advisory_unlock($1::bigint)', [number]);
          done();
        } catch (error) {
          // Closing the session frees its advisory lock all the same.
          done(error as Error);
          throw this.#db.error(error, 'unlocked');
        }
      },
    };
  }

  /** The run lock this journal holds for `tenant`, if any. */
  held(tenant: string): { readonly signal: AbortSignal } | undefined {
    return this.#locks.get(tenant);
  }

  /** Gives up every run lock this journal holds, each run told `why`. */
  loseAll(why: string): void {
    for (const held of this.#locks.values()) held.lose(why);
    this.#locks.clear();
  }
}
