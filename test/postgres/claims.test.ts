import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PostgresPool } from '../../src/postgres/pool';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import type { SyncJournal, SyncJournalClaims } from '../../src/sync/journal';
import { claimsRenewed, countingPool, startPostgres, type TestPostgres } from '../support/postgres';
import { entry } from '../sync/journal-conformance';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const sending = (key: string, runId: string) => entry('accounts', key, { state: 'sending', crmId: undefined, runId });

/** Two workers' journals over one schema, opened. */
async function fleet(): Promise<{
  a: SyncJournal;
  b: SyncJournal;
  ca: SyncJournalClaims;
  cb: SyncJournalClaims;
  schema: string;
}> {
  const schema = `c_${Math.random().toString(36).slice(2)}`;
  const a = postgresJournal(postgres.pool(), { schema });
  const b = postgresJournal(postgres.pool(), { schema });
  await a.open();
  await b.open();
  return { a, b, ca: a.claims as SyncJournalClaims, cb: b.claims as SyncJournalClaims, schema };
}

/** Ends every claim's lease now, as when its worker stalled past it. */
const expire = (schema: string) =>
  postgres.pool().query(`UPDATE ${schema}.claims SET expires_at = clock_timestamp() - interval '1 second'`);

describe('postgresJournal() claims', () => {
  test('a key is claimed by one run: the other is told it is held, until when', async () => {
    const { a, b, ca, cb } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false }]);
    const [lost] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);

    expect(won).toMatchObject({ outcome: 'claimed', fence: expect.any(Number) });
    expect(lost).toMatchObject({ outcome: 'held', expiresAt: expect.any(Number) });
    expect((await b.get('acme', 'accounts', ['A1'])).get('A1')).toMatchObject({ state: 'sending', runId: 'run_a' });
    expect([...(await cb.held('acme', 'run_b', 'accounts', ['A1', 'A2'])).keys()]).toEqual(['A1']);
    expect((await ca.held('acme', 'run_a', 'accounts', ['A1'])).size).toBe(0);
    // Another worker's create in flight is not a record in doubt.
    expect(await b.pending('acme')).toEqual([]);
    await a.close();
    await b.close();
  });

  test('many workers claiming the same keys at once, in any order, each key is claimed once', async () => {
    const { ca, cb, schema } = await fleet();
    const keys = Array.from({ length: 24 }, (_, i) => `K${i}`);
    const workers = [ca, cb, ca, cb].map((claims, w) =>
      claims.claim(
        'acme',
        `run_${w}`,
        (w % 2 ? [...keys].reverse() : keys).map((k) => ({ intent: sending(k, `run_${w}`), resend: false })),
      ),
    );
    const answers = (await Promise.all(workers)).flat();

    expect(answers.filter((a) => a.outcome === 'claimed')).toHaveLength(24);
    expect((await postgres.pool().query(`SELECT count(*)::int AS n FROM ${schema}.claims`)).rows[0].n).toBe(24);
  });

  test("a commit holds while its fence does, and releases the claim; the key is then the journal's", async () => {
    const { b, ca, cb } = await fleet();
    const [won] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false }]);
    const fence = (won as { fence: number }).fence;

    expect(await ca.commit('acme', { put: [entry('accounts', 'A1', { crmId: 'acc_1', runId: 'run_a' })] }, fence)).toBe(
      true,
    );
    expect((await cb.held('acme', 'run_b', 'accounts', ['A1'])).size).toBe(0);
    const [again] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(again).toMatchObject({ outcome: 'exists', entry: { state: 'synced', crmId: 'acc_1' } });
    expect((await b.get('acme', 'accounts', ['A1'])).get('A1')?.crmId).toBe('acc_1');
  });

  test("a claim of many keys is one transaction of four round trips: BEGIN with the keys' locks, one read, one write, COMMIT", async () => {
    const schema = `c_${Math.random().toString(36).slice(2)}`;
    const statements: string[] = [];
    const a = postgresJournal(countingPool(postgres.pool(), statements), { schema });
    await a.open();
    const ca = a.claims as SyncJournalClaims;
    // Held by another run, synced by another, and free: the three answers of one claim.
    const [held] = await ca.claim('acme', 'run_b', [{ intent: sending('K0', 'run_b'), resend: false }]);
    await a.write('acme', { put: [entry('accounts', 'K1', { crmId: 'acc_K1', runId: 'run_b' })] });
    const keys = Array.from({ length: 8 }, (_, i) => `K${i}`);
    statements.length = 0;

    const answers = await ca.claim(
      'acme',
      'run_a',
      keys.map((k) => ({ intent: sending(k, 'run_a'), resend: false })),
    );

    expect(held).toMatchObject({ outcome: 'claimed' });
    expect(answers.map((answer) => answer.outcome)).toEqual(['held', 'exists', ...keys.slice(2).map(() => 'claimed')]);
    expect(answers[1]).toMatchObject({ entry: { state: 'synced', crmId: 'acc_K1' } });
    expect(statements).toHaveLength(4);
    // The transaction's bounds from the lease (issue 48, 3) go in the same round trip.
    expect(statements[0]).toMatch(
      /^BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL idle_in_transaction_session_timeout = 15000; SET LOCAL lock_timeout = 15000; SELECT .*pg_try_advisory_xact_lock/s,
    );
    expect(statements[3]).toBe('COMMIT');
    const intents = await a.get('acme', 'accounts', keys);
    expect(keys.slice(2).map((k) => intents.get(k))).toEqual(
      keys.slice(2).map((k) => expect.objectContaining({ state: 'sending', runId: 'run_a', key: k })),
    );
    const claims = await postgres.pool().query(`SELECT count(*)::int AS n FROM ${schema}.claims`);
    expect(claims.rows[0].n).toBe(7);
    await a.close();
  });

  test('a key another worker is claiming at this moment is answered held at once, not waited for; the other keys are claimed', async () => {
    const schema = `c_${Math.random().toString(36).slice(2)}`;
    let pause: (() => void) | undefined;
    const paused = new Promise<void>((resolve) => {
      pause = resolve;
    });
    let resume: () => void = () => {};
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    // Worker B's claim stops after its first statement (BEGIN and its keys' locks), until resumed.
    const gated: PostgresPool = {
      connect: async () => {
        const client = await postgres.pool().connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            const result = await client.query(text, values);
            if (text.startsWith('BEGIN') && text.includes('pg_try_advisory_xact_lock')) {
              pause?.();
              await resumed;
            }
            return result;
          },
          release: (error?: Error | boolean) => client.release(error),
          on: (event: 'error', listener: (error: Error) => void) => client.on(event, listener),
          removeListener: (event: 'error', listener: (error: Error) => void) => client.removeListener(event, listener),
        };
      },
    };
    const a = postgresJournal(postgres.pool(), { schema });
    const b = postgresJournal(gated, { schema });
    await a.open();
    await b.open();
    const bClaim = (b.claims as SyncJournalClaims).claim('acme', 'run_b', [
      { intent: sending('K1', 'run_b'), resend: false },
    ]);
    await paused;

    const aClaim = (a.claims as SyncJournalClaims).claim('acme', 'run_a', [
      { intent: sending('K1', 'run_a'), resend: false },
      { intent: sending('K2', 'run_a'), resend: false },
    ]);
    // Answered while B still holds its lock, however slow the machine: a claim that waited for B's
    // is never answered here (B goes on only after it), and the test times out.
    const answers = await aClaim;
    resume();

    expect(answers.map((answer) => answer.outcome)).toEqual(['held', 'claimed']);
    expect(await bClaim).toEqual([{ outcome: 'claimed', fence: expect.any(Number) }]);
    const claims = await postgres
      .pool()
      .query(
        `SELECT convert_from(key, 'UTF8') AS key, convert_from(run_id, 'UTF8') AS run FROM ${schema}.claims ORDER BY key`,
      );
    expect(claims.rows).toEqual([
      { key: 'K1', run: 'run_b' },
      { key: 'K2', run: 'run_a' },
    ]);
    await a.close();
    await b.close();
  });

  test("claims of two keys at once are not aborted under a role whose default isolation is serializable: the journal's transactions read committed", async () => {
    const schema = `c_${Math.random().toString(36).slice(2)}`;
    const serializable = { options: '-c default_transaction_isolation=serializable' };
    let paused: () => void = () => {};
    const atWrite = new Promise<void>((resolve) => {
      paused = resolve;
    });
    let resume: () => void = () => {};
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const statements: string[] = [];
    // Worker B's first claim stops after its read, before its write, until A has claimed another key.
    const gated: PostgresPool = {
      connect: async () => {
        const client = await postgres.pool(serializable).connect();
        return {
          query: async (text: string, values?: unknown[]) => {
            statements.push(text);
            if (text.includes(`INSERT INTO "${schema}".claims`) && statements.filter((t) => t === text).length === 1) {
              paused();
              await resumed;
            }
            return client.query(text, values);
          },
          release: (error?: Error | boolean) => client.release(error),
          on: (event: 'error', listener: (error: Error) => void) => client.on(event, listener),
          removeListener: (event: 'error', listener: (error: Error) => void) => client.removeListener(event, listener),
        };
      },
    };
    const a = postgresJournal(postgres.pool(serializable), { schema });
    const b = postgresJournal(gated, { schema });
    await a.open();
    await b.open();
    statements.length = 0;

    const bClaim = (b.claims as SyncJournalClaims).claim('acme', 'run_b', [
      { intent: sending('K1', 'run_b'), resend: false },
    ]);
    await atWrite;
    const aAnswers = await (a.claims as SyncJournalClaims).claim('acme', 'run_a', [
      { intent: sending('K2', 'run_a'), resend: false },
    ]);
    resume();
    const bAnswers = await bClaim;

    expect(aAnswers).toEqual([{ outcome: 'claimed', fence: expect.any(Number) }]);
    expect(bAnswers).toEqual([{ outcome: 'claimed', fence: expect.any(Number) }]);
    // Serializable, B's transaction had read what A then wrote and wrote what A had read: Postgres
    // aborted it (SQLSTATE 40001), and the journal sent it again.
    expect(statements.filter((text) => text === 'ROLLBACK')).toEqual([]);
    expect(statements.filter((text) => text.startsWith('BEGIN'))).toHaveLength(1);
    await a.close();
    await b.close();
  });

  test('commits made while one is in flight go to Postgres together in the next statement, each checked against its own fence', async () => {
    const schema = `c_${Math.random().toString(36).slice(2)}`;
    const statements: string[] = [];
    const counting = countingPool(postgres.pool(), statements);
    const a = postgresJournal(counting, { schema });
    await a.open();
    const ca = a.claims as SyncJournalClaims;
    const keys = Array.from({ length: 20 }, (_, i) => `K${i}`);
    const claimed = await ca.claim(
      'acme',
      'run_a',
      keys.map((k) => ({ intent: sending(k, 'run_a'), resend: false })),
    );
    const fences = claimed.map((c) => (c as { fence: number }).fence);
    statements.length = 0;

    const commits = keys.map((k, i) => {
      // K1's fence is not its claim's (another run took it over): refused, alone.
      const fence = i === 1 ? (fences[1] as number) + 1000 : (fences[i] as number);
      return i % 2 === 0
        ? ca.commit('acme', { put: [entry('accounts', k, { crmId: `acc_${k}`, runId: 'run_a' })] }, fence)
        : ca.commit('acme', { remove: [{ type: 'accounts', key: k }] }, fence);
    });
    const answers = await Promise.all(commits);

    expect(answers).toEqual(keys.map((_, i) => i !== 1));
    expect(statements.length).toBeLessThanOrEqual(2);
    const entries = await a.get('acme', 'accounts', keys);
    expect([...entries.keys()].sort()).toEqual(keys.filter((_, i) => i % 2 === 0 || i === 1).sort());
    expect(entries.get('K0')).toMatchObject({ state: 'synced', crmId: 'acc_K0' });
    expect(entries.get('K1')).toMatchObject({ state: 'sending' });
    const left = await postgres.pool().query(`SELECT count(*)::int AS n FROM ${schema}.claims`);
    expect(left.rows[0].n).toBe(1);
    await a.close();
  });

  test('a claim whose lease ended is taken over as in doubt, and the late answer of its first owner cannot commit', async () => {
    const { b, ca, cb, schema } = await fleet();
    const [first] = await ca.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false }]);
    await expire(schema);

    const [taken] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(taken).toMatchObject({ outcome: 'exists', entry: { state: 'inDoubt', runId: 'run_b' } });

    const late = await ca.commit(
      'acme',
      { put: [entry('accounts', 'A1', { crmId: 'acc_late', runId: 'run_a' })] },
      (first as { fence: number }).fence,
    );
    expect(late).toBe(false);
    expect((await b.get('acme', 'accounts', ['A1'])).get('A1')).toMatchObject({ state: 'inDoubt', crmId: undefined });
    expect((await b.pending('acme')).map((e) => e.key)).toEqual(['A1']);
  });

  test('a record in doubt that was looked for may be claimed again (resend), with a higher fence; the old fence is refused', async () => {
    const { ca, cb, schema } = await fleet();
    const [first] = await ca.claim('acme', 'run_a', [{ intent: sending('C1', 'run_a'), resend: false }]);
    await expire(schema);
    await cb.claim('acme', 'run_b', [{ intent: sending('C1', 'run_b'), resend: false }]);

    const [again] = await cb.claim('acme', 'run_b', [{ intent: sending('C1', 'run_b'), resend: true }]);
    expect(again).toMatchObject({ outcome: 'claimed' });
    expect((again as { fence: number }).fence).toBeGreaterThan((first as { fence: number }).fence);
    expect(
      await ca.commit('acme', { remove: [{ type: 'accounts', key: 'C1' }] }, (first as { fence: number }).fence),
    ).toBe(false);
  });

  test('a live worker renews its claims before their lease ends', async () => {
    const schema = `c_${Math.random().toString(36).slice(2)}`;
    const a = postgresJournal(postgres.pool(), { schema, leaseMs: 1000 });
    await a.open();
    await a.claims?.claim('acme', 'run_a', [{ intent: sending('A1', 'run_a'), resend: false }]);
    // Renewed every third of the lease.
    const { first, later } = await claimsRenewed(postgres.pool(), schema);
    expect(later).toBeGreaterThan(first);
    await a.close();
  });

  test('leaseMs out of range is a TypeError', () => {
    const pool = postgres.pool();
    for (const leaseMs of [0, 999, 1.5, 3_600_001, Number.NaN]) {
      expect(() => postgresJournal(pool, { leaseMs })).toThrow(TypeError);
    }
  });
});
