/*
 * The bounds every transaction of the journal runs within, apart from the code that runs it: the
 * claims and the intents write their own BEGIN (the bounds, then their locks, in one round trip)
 * and the commits retry a statement of their own, so the isolation, the timeouts and what counts
 * as a transaction to try again are said once for all of them.
 */

/**
 * SQLSTATEs of a transaction Postgres chose to abort (a deadlock, a serialization failure), or
 * whose wait for a lock ran out (lock_timeout: a stalled holder's session is ended meanwhile):
 * it changed nothing, and is tried again.
 */
const RETRY = new Set(['40P01', '40001', '55P03']);

/**
 * Every transaction of the journal reads committed rows, whatever the role's or the session's
 * default isolation: each statement of a claim reads what its keys' last holder committed once
 * their locks are held. Under a default of `serializable` (a role's, or a setting a shared pool's
 * session kept), Postgres aborted claims of other keys that had read the same tables (43 of the
 * claims of four workers overlapping on one source), and a run failed as a read was aborted too.
 */
export const BEGIN = 'BEGIN ISOLATION LEVEL READ COMMITTED';

/**
 * BEGIN, then the bounds of a transaction, from the lease, whatever the pool's sessions say: a
 * worker stalled inside one (SIGSTOP, a frozen VM, a debugger) holds its keys' advisory locks
 * with its transaction, past its lease, and the fleet stopped behind it until it woke (27 s with
 * a 2 s lease). Postgres ends a session idle in its transaction for half a lease, 1 s at least
 * (its locks go with it: the keys are free within about one lease), and a wait for a lock gives
 * up as soon (the stalled holder is ended meanwhile, and the wait tried again), well before
 * connect() (journal-database.ts) gives up on an unanswered statement (a lease, 5 s at least)
 * and fails the run. A live worker's transactions are a few round trips, never idle that long.
 * SET LOCAL: the session's own settings come back at its end.
 */
export const boundedBegin = (leaseMs: number): string => {
  const half = Math.max(1000, Math.floor(leaseMs / 2));
  return `${BEGIN}; SET LOCAL idle_in_transaction_session_timeout = ${half}; SET LOCAL lock_timeout = ${half}`;
};

/** Tries `attempt` again (up to 5 times in all) when Postgres aborted it to break a deadlock: it changed nothing. */
export async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      if (n >= 5 || typeof code !== 'string' || !RETRY.has(code)) throw error;
    }
  }
}
