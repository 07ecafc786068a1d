import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import type { SyncJournal, SyncJournalClaims } from '../../src/sync/journal';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { entry } from '../sync/journal-conformance';

/* A shared journal's claim that reserves a key, and the intent written later at its gate, under its fence (issue 46, 1). */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const sending = (key: string, runId: string) => entry('accounts', key, { state: 'sending', crmId: undefined, runId });
type Reserving = SyncJournalClaims & Required<Pick<SyncJournalClaims, 'intend' | 'release'>>;

async function fleet(): Promise<{ a: SyncJournal; b: SyncJournal; ca: Reserving; cb: Reserving; schema: string }> {
  const schema = `r_${Math.random().toString(36).slice(2)}`;
  const a = postgresJournal(postgres.pool(), { schema });
  const b = postgresJournal(postgres.pool(), { schema });
  await a.open();
  await b.open();
  return { a, b, ca: a.claims as Reserving, cb: b.claims as Reserving, schema };
}

/** Ends every claim's lease now, as when its worker was killed. */
const expire = (schema: string) =>
  postgres.pool().query(`UPDATE ${schema}.claims SET expires_at = clock_timestamp() - interval '1 second'`);

const fenceOf = (claim: unknown) => (claim as { fence: number }).fence;

/** The advisory lock number a claim of `key` takes (lock-numbers.ts, lockNumber). */
const claimLock = (schema: string, key: string) =>
  createHash('sha256')
    .update(['crm_sync.claim', schema, 'acme', 'accounts', key].join('\u0000'))
    .digest()
    .readBigInt64BE(0)
    .toString();

/** A transaction of another session holding `key`'s claim lock, as a claim taking it over does, until `end()`. */
async function holding(schema: string, key: string) {
  const client = await postgres.pool().connect();
  await client.query('BEGIN');
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [claimLock(schema, key)]);
  return {
    query: (text: string, values: unknown[]) => client.query(text, values),
    end: async () => {
      await client.query('COMMIT');
      client.release();
    },
  };
}

describe('postgresJournal() claims that reserve a key', () => {
  test('a reserved key is held from other runs but has no entry: nothing is in doubt or in flight', async () => {
    const { a, b, ca, cb } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false, reserve: true }]);
    expect(won).toMatchObject({ outcome: 'claimed' });
    const [other] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(other).toMatchObject({ outcome: 'held' });
    expect((await b.get('acme', 'accounts', ['A1'])).size).toBe(0);
    expect(await b.pending('acme')).toEqual([]);
    expect(await b.inFlight?.('acme')).toEqual([]);
    await a.close();
    await b.close();
  });

  test('a reservation whose worker died is free once its lease lapses, not in doubt, and its late intent is refused', async () => {
    const { b, ca, cb, schema } = await fleet();
    const [first] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false, reserve: true }]);
    await expire(schema);
    expect(await b.pending('acme')).toEqual([]);

    const [taken] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false, reserve: true }]);
    expect(taken).toMatchObject({ outcome: 'claimed' });
    expect(fenceOf(taken)).toBeGreaterThan(fenceOf(first));
    // The first worker, resumed at its gate: its fence no longer holds, and nothing of it is written.
    expect(await ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence: fenceOf(first) }])).toEqual([false]);
    expect((await b.get('acme', 'accounts', ['A1'])).size).toBe(0);
    expect(await cb.intend('acme', [{ intent: sending('A1', 'run_b'), fence: fenceOf(taken) }])).toEqual([true]);
    expect((await b.get('acme', 'accounts', ['A1'])).get('A1')).toMatchObject({ state: 'sending', runId: 'run_b' });
  });

  test('an intent written at the gate keeps its claim: in flight to others, and in doubt once its lease lapses, as today', async () => {
    const { b, ca, cb, schema } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [
      { intent: sending('A1', 'run_a'), resend: false, reserve: true },
      { intent: sending('A2', 'run_a'), resend: false, reserve: true },
    ]);
    expect(await ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence: fenceOf(won) }])).toEqual([true]);
    expect((await b.inFlight?.('acme'))?.map((f) => f.entry.key)).toEqual(['A1']);
    expect(await b.pending('acme')).toEqual([]);
    await expire(schema);
    // A1 left: in doubt. A2 never did: free.
    expect((await b.pending('acme')).map((e) => e.key)).toEqual(['A1']);
    const [a1, a2] = await cb.claim('acme', 'run_b', [
      { intent: sending('A1', 'run_b'), resend: false, reserve: true },
      { intent: sending('A2', 'run_b'), resend: false, reserve: true },
    ]);
    expect(a1).toMatchObject({ outcome: 'exists', entry: { state: 'inDoubt' } });
    expect(a2).toMatchObject({ outcome: 'claimed' });
  });

  test('an intent withdrawn (answered with nothing done, waiting for a retry) leaves no entry and keeps the claim; a commit under the fence then holds', async () => {
    const { b, ca, cb } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false, reserve: true }]);
    const fence = fenceOf(won);
    await ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence }]);
    expect(await ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence, withdrawn: true }])).toEqual([true]);
    expect((await b.get('acme', 'accounts', ['A1'])).size).toBe(0);
    const [other] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(other).toMatchObject({ outcome: 'held' });
    expect(await ca.commit('acme', { put: [entry('accounts', 'A1', { crmId: 'acc_1', runId: 'run_a' })] }, fence)).toBe(
      true,
    );
  });

  test("a reservation released (its request failed before its turn) frees the key at once and leaves a record in doubt's entry as it was", async () => {
    const { b, ca, cb, schema } = await fleet();
    const [first] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false }]);
    await expire(schema);
    await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(first).toMatchObject({ outcome: 'claimed' });
    // A1 is in doubt; looked for and not found, it is reserved to be sent again, then given up.
    const [again] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: true, reserve: true }]);
    expect(again).toMatchObject({ outcome: 'claimed' });
    await cb.release('acme', [fenceOf(again)]);
    expect((await b.get('acme', 'accounts', ['A1'])).get('A1')).toMatchObject({ state: 'inDoubt' });
    expect((await b.pending('acme')).map((e) => e.key)).toEqual(['A1']);
    const [third] = await ca.claim('acme', 'run_c', [{ intent: sending('A1', 'run_c'), resend: true, reserve: true }]);
    expect(third).toMatchObject({ outcome: 'claimed' });
  });

  test("an intent waits for a takeover holding its key's lock, then finds its fence gone and writes nothing", async () => {
    const { b, ca, schema } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false, reserve: true }]);
    const takeover = await holding(schema, 'A1');
    const intended = ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence: fenceOf(won) }]);
    await takeover.query(`UPDATE ${schema}.claims SET fence = fence + 1000, run_id = $1`, [Buffer.from('run_b')]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await takeover.end();
    expect(await intended).toEqual([false]);
    expect((await b.get('acme', 'accounts', ['A1'])).size).toBe(0);
  });

  test("an intent whose key's lock is held past its lock wait (a stalled holder) tries the wait again and is written once it is free", async () => {
    const schema = `r_${Math.random().toString(36).slice(2)}`;
    const a = postgresJournal(postgres.pool(), { schema, leaseMs: 2000 });
    await a.open();
    const ca = a.claims as Reserving;
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false, reserve: true }]);
    const stalled = await holding(schema, 'A1');
    const intended = ca.intend('acme', [{ intent: sending('A1', 'run_a'), fence: fenceOf(won) }]);
    // Longer than the wait's bound (half the lease, 1 s): the first wait gives up, the next one is granted.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await stalled.end();
    expect(await intended).toEqual([true]);
    expect((await a.get('acme', 'accounts', ['A1'])).get('A1')).toMatchObject({ state: 'sending' });
    a.close();
  });

  test('intents of many keys at the gate are written together, each against its own fence', async () => {
    const { b, ca, schema } = await fleet();
    const keys = ['K1', 'K2', 'K3', 'K4'];
    const claims = await ca.claim(
      'acme',
      'run_a',
      keys.map((key) => ({ intent: sending(key, 'run_a'), resend: false, reserve: true })),
    );
    await postgres.pool().query(`UPDATE ${schema}.claims SET fence = fence + 1000 WHERE key = $1`, [Buffer.from('K3')]);
    const held = await ca.intend(
      'acme',
      keys.map((key, i) => ({ intent: sending(key, 'run_a'), fence: fenceOf(claims[i]) })),
    );
    expect(held).toEqual([true, true, false, true]);
    expect([...(await b.get('acme', 'accounts', keys)).keys()].sort()).toEqual(['K1', 'K2', 'K4']);
  });
});
