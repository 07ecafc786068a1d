import { afterAll, beforeAll, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import type { SyncJournalClaims } from '../../src/sync/journal';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { entry } from '../sync/journal-conformance';

/* The journal's own bounds on its transactions (issue 48, 3): set per transaction, never left on the pool's sessions. */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

test("a claim's bounds are its transaction's alone: the pool's session keeps its own settings after it", async () => {
  const pool = postgres.pool({ max: 1 });
  const journal = postgresJournal(pool, { schema: `b_${Math.random().toString(36).slice(2)}`, leaseMs: 4000 });
  await journal.open();
  const claims = journal.claims as SyncJournalClaims;
  await claims.claim('acme', 'run_a', [
    { intent: entry('accounts', 'A1', { state: 'sending', crmId: undefined, runId: 'run_a' }), resend: false },
  ]);
  // The pool's one client ran the claim: its session is as it was, with no bound left on it.
  const shown = await pool.query('SHOW idle_in_transaction_session_timeout');
  const lock = await pool.query('SHOW lock_timeout');
  expect([shown.rows[0].idle_in_transaction_session_timeout, lock.rows[0].lock_timeout]).toEqual(['0', '0']);
  journal.close();
});
