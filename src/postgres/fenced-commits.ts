import type { SyncJournalChange, SyncJournalState, SyncType } from '../sync/journal';
import type { ClaimLeases } from './claim-leases';
import { bytesOf, COLUMNS, UPSERT } from './entry-rows';
import type { JournalDatabase } from './journal-database';
import { retried } from './transaction-bounds';

/*
 * A create's outcome is written under its claim's fence, and a busy run ends many creates at
 * once: the commits that come while one statement is in flight wait, and go together in the next
 * (one round trip, one WAL flush). That queue is state a commit shares with every other, so the
 * commits are an object of their own rather than a statement each.
 */

/** One commit's values, as its statement takes them (an entry removed has no state). */
interface CommitRow {
  readonly tenant: Buffer;
  readonly type: SyncType;
  readonly key: Buffer;
  readonly fence: string;
  readonly state: SyncJournalState | null;
  readonly crmId: Buffer | null;
  readonly hash: Buffer | null;
  readonly data: Buffer | null;
  readonly attemptedAt: string | null;
  readonly requestId: Buffer | null;
  readonly runId: Buffer | null;
}

/** The commits of one journal: each waits for the statement in flight, and goes in the next. */
export class FencedCommits {
  readonly #db: JournalDatabase;
  readonly #leases: ClaimLeases;
  /** Commits waiting for the one in flight (#commitWaiting). */
  readonly #commits: { row: CommitRow; resolve: (mine: boolean) => void; reject: (error: unknown) => void }[] = [];
  #committing = false;

  constructor(db: JournalDatabase, leases: ClaimLeases) {
    this.#db = db;
    this.#leases = leases;
  }

  /** Writes one entry (or removes it) if the claim of `fence` still holds, releasing the claim: whether it held. */
  async commit(tenant: string, change: SyncJournalChange, fence: number): Promise<boolean> {
    this.#db.use();
    const put = change.put ?? [];
    const remove = change.remove ?? [];
    const of = put[0] ?? remove[0];
    if (!of || put.length + remove.length !== 1) {
      throw new TypeError(
        'SyncJournalClaims.commit(): a change of one entry, put or removed, the one its fence claims.',
      );
    }
    const e = put[0];
    const row: CommitRow = {
      tenant: bytesOf(tenant, 'tenant'),
      type: of.type,
      key: bytesOf(of.key, 'key'),
      fence: String(fence),
      // No state: the entry is removed.
      state: e ? e.state : null,
      crmId: e?.crmId === undefined ? null : bytesOf(e.crmId, 'CRM id'),
      hash: e ? bytesOf(e.hash, 'hash') : null,
      data: e ? bytesOf(e.data, 'data') : null,
      attemptedAt: e?.attemptedAt === undefined ? null : String(e.attemptedAt),
      requestId: e?.requestId === undefined ? null : bytesOf(e.requestId, 'request id'),
      runId: e ? bytesOf(e.runId, 'run id') : null,
    };
    try {
      return await new Promise<boolean>((resolve, reject) => {
        this.#commits.push({ row, resolve, reject });
        if (!this.#committing) void this.#commitWaiting();
      });
    } finally {
      this.#leases.held.delete(fence);
    }
  }

  /**
   * Sends the commits waiting, those that came while one statement was in flight together in the
   * next: one round trip and one WAL flush for all, each fence checked in the WHERE that releases
   * its claim. A statement that fails fails each of its commits.
   */
  async #commitWaiting(): Promise<void> {
    this.#committing = true;
    try {
      while (this.#commits.length > 0) {
        const batch = this.#commits.splice(0, 1000);
        // In one order in every worker, as the claims' takeovers take them.
        const rows = batch
          .map((c) => c.row)
          .sort((x, y) => (x.type < y.type ? -1 : x.type > y.type ? 1 : Buffer.compare(x.key, y.key)));
        try {
          const mine = new Set(
            (
              (await retried(() =>
                this.#db.query(
                  'written',
                  `WITH r AS (
                   SELECT * FROM ROWS FROM (pg_catalog.unnest($1::bytea[]), pg_catalog.unnest($2::text[]),
                     pg_catalog.unnest($3::bytea[]), pg_catalog.unnest($4::bigint[]), pg_catalog.unnest($5::text[]),
                     pg_catalog.unnest($6::bytea[]), pg_catalog.unnest($7::bytea[]), pg_catalog.unnest($8::bytea[]),
                     pg_catalog.unnest($9::bigint[]), pg_catalog.unnest($10::bytea[]), pg_catalog.unnest($11::bytea[]))
                   AS r(tenant, type, key, fence, state, crm_id, hash, data, attempted_at, request_id, run_id)),
                 mine AS (
                   DELETE FROM ${this.#db.s}.claims c USING r
                   WHERE c.tenant = r.tenant AND c.type = r.type AND c.key = r.key AND c.fence = r.fence
                   RETURNING c.fence),
                 put AS (
                   INSERT INTO ${this.#db.s}.entries (tenant, ${COLUMNS})
                   SELECT r.tenant, r.type, r.key, r.state, r.crm_id, r.hash, r.data, r.attempted_at, r.request_id, r.run_id
                   FROM r JOIN mine ON mine.fence = r.fence WHERE r.state IS NOT NULL
                   ${UPSERT}
                   RETURNING 1),
                 gone AS (
                   DELETE FROM ${this.#db.s}.entries e USING r, mine
                   WHERE mine.fence = r.fence AND r.state IS NULL AND e.tenant = r.tenant AND e.type = r.type AND e.key = r.key
                   RETURNING 1)
                 SELECT fence FROM mine`,
                  [
                    rows.map((r) => r.tenant),
                    rows.map((r) => r.type),
                    rows.map((r) => r.key),
                    rows.map((r) => r.fence),
                    rows.map((r) => r.state),
                    rows.map((r) => r.crmId),
                    rows.map((r) => r.hash),
                    rows.map((r) => r.data),
                    rows.map((r) => r.attemptedAt),
                    rows.map((r) => r.requestId),
                    rows.map((r) => r.runId),
                  ],
                ),
              )) as { fence: string }[]
            ).map((row) => String(row.fence)),
          );
          for (const c of batch) c.resolve(mine.has(c.row.fence));
        } catch (error) {
          for (const c of batch) c.reject(error);
        }
      }
    } finally {
      this.#committing = false;
    }
  }
}
