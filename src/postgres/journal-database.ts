import { SyncJournalError } from '../sync/journal-error';
import type { PostgresPool, PostgresPoolClient } from './pool';
import { BEGIN, boundedBegin, retried } from './transaction-bounds';

/*
 * The one way the journal's statements reach Postgres, shared by the opening, the run lock, the
 * records, the claims and the history: each client is bounded (a connection that stops answering
 * is given up rather than waited on for good), given back or closed as its end requires, and each
 * failure becomes a SyncJournalError that says what the run lost. No other module of the journal
 * handles a client's end or a Postgres error itself.
 */

// SQLSTATE classes of a connection that is gone or never was: 08 (connection exception), 57P0x (shutdown).
const LOST = /^(08|57P0)/;

/** The journal's schema and pool, and whether it is open: what every statement needs. */
export class JournalDatabase {
  readonly #pool: PostgresPool;
  /** The journal's schema, as given (for its messages and lock numbers). */
  readonly schema: string;
  /** How long a statement may go unanswered before its connection is given up (connect()). */
  readonly #answerMs: number;
  /** The schema, quoted, for the statements. */
  readonly s: string;
  /** Set by openJournal() (journal-opening.ts), unset by close() and by a journal found dropped (error()). */
  opened = false;
  readonly leaseMs: number;
  /** BEGIN with the transaction's bounds from the lease (boundedBegin). */
  readonly begin: string;

  constructor(pool: PostgresPool, schema: string, leaseMs: number) {
    this.#pool = pool;
    this.schema = schema;
    // A lease, and never under 5 s: far past any answer a live Postgres gives the journal's small
    // statements, on a busy machine too.
    this.#answerMs = Math.max(leaseMs, 5000);
    this.leaseMs = leaseMs;
    this.begin = boundedBegin(leaseMs);
    this.s = `"${schema}"`;
  }

  use(): void {
    if (!this.opened) {
      throw new SyncJournalError('unavailable', `The Postgres sync journal in schema ${this.schema} is not open.`);
    }
  }

  /**
   * A client of the pool whose statements each fail when unanswered for a lease (at least 5 s), the
   * client then given up (released with that error: the pool closes it). A pooled connection that
   * a NAT or a firewall dropped without a word answers nothing, and a run waited on it for good,
   * deaf to its signal; its claims could not have been renewed over that time anyway.
   */
  async connect(doing: string): Promise<PostgresPoolClient> {
    let client: PostgresPoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.error(error, doing);
    }
    const answerMs = this.#answerMs;
    let silent: Error | undefined;
    return {
      query: (text, values) => {
        if (silent) return Promise.reject(silent);
        let answered = false;
        const asked = client.query(text, values).finally(() => {
          answered = true;
        });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const unanswered = new Promise<never>((_, reject) => {
          // After the poll phase: a process resumed after a stall reads an answer already there first.
          timer = setTimeout(
            () =>
              setImmediate(() => {
                if (answered) return;
                silent = new Error(`Postgres did not answer within ${answerMs} ms: its connection was given up`);
                reject(silent);
              }),
            answerMs,
          );
        });
        return Promise.race([asked, unanswered]).finally(() => clearTimeout(timer));
      },
      release: (error) => client.release(silent ?? error),
      on: (event, listener) => client.on(event, listener),
      removeListener: (event, listener) => client.removeListener(event, listener),
    };
  }

  /** One statement, atomic by itself: no BEGIN and COMMIT around it (two round trips fewer). */
  async query(doing: string, text: string, values: unknown[]): Promise<unknown[]> {
    this.use();
    const client = await this.connect(doing);
    const lost = () => {};
    client.on('error', lost);
    let failure: Error | undefined;
    try {
      return (await client.query(text, values)).rows;
    } catch (error) {
      failure = error as Error;
      throw this.error(error, doing);
    } finally {
      client.removeListener('error', lost);
      client.release(failure ?? false);
    }
  }

  /**
   * One transaction, tried again (up to 5 times) when Postgres aborted it to break a deadlock;
   * `sessionLock`: an advisory lock (lockNumber) its connection holds around it.
   */
  transaction<T>(
    doing: string,
    body: (client: PostgresPoolClient, begun: unknown) => Promise<T>,
    begin = BEGIN,
    sessionLock?: string,
  ): Promise<T> {
    return retried(() => this.#once(doing, body, begin === BEGIN ? this.begin : begin, sessionLock));
  }

  /** One transaction on a client of its own; a client whose connection failed is not given back for reuse. */
  async #once<T>(
    doing: string,
    body: (client: PostgresPoolClient, begun: unknown) => Promise<T>,
    begin = BEGIN,
    sessionLock?: string,
  ): Promise<T> {
    const client = await this.connect(doing);
    const lost = () => {};
    client.on('error', lost);
    let failure: Error | undefined;
    try {
      // Granted before BEGIN is sent: the transaction starts after the last holder's committed.
      if (sessionLock !== undefined)
        await client.query('SELECT pg_catalog.pg_advisory_lock($1::bigint)', [sessionLock]);
      // BEGIN, or BEGIN and the transaction's first statements without parameters (one round trip;
      // node-postgres answers several statements with an array of their results).
      const begun = await client.query(begin);
      const result = await body(client, begun);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw this.error(error, doing);
    } finally {
      // A connection that could not free it is not given back: closed, it frees the lock all the same.
      if (sessionLock !== undefined)
        await client.query('SELECT pg_catalog.pg_advisory_unlock($1::bigint)', [sessionLock]).catch((error: Error) => {
          failure ??= error;
        });
      client.removeListener('error', lost);
      // A refusal of ours left the connection sound; anything else may not have.
      client.release(failure !== undefined && !(failure instanceof SyncJournalError) ? failure : false);
    }
  }

  error(error: unknown, doing: string): Error {
    if (error instanceof SyncJournalError || error instanceof TypeError) return error;
    const code = (error as { code?: unknown }).code;
    const why = error instanceof Error ? error.message : String(error);
    if ((code === '42P01' || code === '3F000') && doing !== 'opened') {
      // Dropped under a journal opened before (an operator's reset): open() runs again on the next
      // run, as in a new worker, rather than every later run of a long-lived one failing so.
      this.opened = false;
      return new SyncJournalError(
        'unavailable',
        `The Postgres sync journal in schema ${this.schema} is gone (${why}, SQLSTATE ${code}): its tables were dropped while this journal was open, and the run sends nothing more. The next run creates the journal anew, as a new worker would, knowing none of the records it held, and creates them again: restore the schema from a backup before then to keep them (README.md, "Syncing with many workers").`,
        { cause: error },
      );
    }
    const lost = typeof code !== 'string' || LOST.test(code);
    return new SyncJournalError(
      'unavailable',
      `The Postgres sync journal in schema ${this.schema} could not be ${doing} (${why}${lost ? '' : `, SQLSTATE ${String(code)}`})${
        doing !== 'opened' && doing !== 'locked' && doing !== 'unlocked'
          ? ': a run sends nothing more; a create in flight whose answer could not be written is settled as in doubt by the next run'
          : ''
      }.`,
      { cause: error },
    );
  }
}
