import type { JournalDatabase } from './journal-database';

/*
 * A claim holds only while its worker renews it, so the fences this process holds are state of
 * their own, outliving any one statement: the claims add to them, the commits, intents and
 * releases take from them, and one timer renews them all. Keeping the set and its timer here lets
 * each of those modules change them the same way, and close() stop them in one call.
 */

/** This process's live claims and the timer that renews them. */
export class ClaimLeases {
  readonly #db: JournalDatabase;
  /** This process's live claims, by fence: renewed every third of the lease while any is held. */
  readonly held = new Set<number>();
  #renewal: ReturnType<typeof setInterval> | undefined;

  constructor(db: JournalDatabase) {
    this.#db = db;
  }

  /** Renews this process's claims while it holds any: a lease ends only when the process stops renewing. */
  renewEvery(leaseMs: number): void {
    if (this.#renewal || this.held.size === 0) return;
    this.#renewal = setInterval(() => {
      if (this.held.size === 0) {
        clearInterval(this.#renewal);
        this.#renewal = undefined;
        return;
      }
      const fences = [...this.held].map(String);
      // A renewal that fails (Postgres away) is tried again; the commit's fence says whether it held.
      void this.#db
        .transaction('renewed', (client) =>
          client.query(
            `UPDATE ${this.#db.s}.claims SET expires_at = pg_catalog.clock_timestamp() + ($2 OPERATOR(pg_catalog.*) interval '1 millisecond')
           WHERE fence = ANY($1::bigint[]) AND expires_at > pg_catalog.clock_timestamp()`,
            [fences, leaseMs],
          ),
        )
        .catch(() => {});
    }, leaseMs / 3);
    this.#renewal.unref?.();
  }

  /** Stops renewing and forgets every claim held (the journal closes). */
  stop(): void {
    clearInterval(this.#renewal);
    this.#renewal = undefined;
    this.held.clear();
  }
}
