import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import type { SyncJournalClaims } from '../../src/sync/journal';
import { claimsRenewed, startPostgres, type TestPostgres } from '../support/postgres';
import { describeSyncJournal, entry } from '../sync/journal-conformance';

let postgres: TestPostgres;

/**
 * A schema of look-alikes of every function and operator the journal's statements use, each
 * failing when called: a caller whose search_path puts such a schema before pg_catalog (or a
 * `public` anyone may create in) would otherwise run them inside the journal's statements.
 */
const HOSTILE = `
CREATE SCHEMA evil;
CREATE FUNCTION evil.hostile(name text) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'hostile % called', name; END $$;
CREATE FUNCTION evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('clock_timestamp'); RETURN NULL; END $$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('now'); RETURN NULL; END $$;
CREATE FUNCTION evil.unnest(text[]) RETURNS SETOF text LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('unnest'); END $$;
CREATE FUNCTION evil.unnest(bytea[]) RETURNS SETOF bytea LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('unnest'); END $$;
CREATE FUNCTION evil.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('unnest'); END $$;
CREATE FUNCTION evil.nextval(text) RETURNS bigint LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('nextval'); RETURN 1; END $$;
CREATE FUNCTION evil.nextval(regclass) RETURNS bigint LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('nextval'); RETURN 1; END $$;
CREATE FUNCTION evil.to_regclass(text) RETURNS regclass LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('to_regclass'); RETURN NULL; END $$;
CREATE FUNCTION evil.pg_try_advisory_lock(bigint) RETURNS boolean LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('pg_try_advisory_lock'); RETURN true; END $$;
CREATE FUNCTION evil.pg_advisory_lock(bigint) RETURNS void LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('pg_advisory_lock'); END $$;
CREATE FUNCTION evil.pg_advisory_unlock(bigint) RETURNS boolean LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('pg_advisory_unlock'); RETURN true; END $$;
CREATE FUNCTION evil.pg_try_advisory_xact_lock(bigint) RETURNS boolean LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('pg_try_advisory_xact_lock'); RETURN true; END $$;
CREATE FUNCTION evil.agg(text[], text) RETURNS text[] LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('array_agg'); RETURN NULL; END $$;
CREATE AGGREGATE evil.array_agg(text) (SFUNC = evil.agg, STYPE = text[]);
CREATE FUNCTION evil.times(numeric, integer) RETURNS numeric LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('*'); RETURN 0; END $$;
CREATE OPERATOR evil.* (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = evil.times);
CREATE FUNCTION evil.times(double precision, interval) RETURNS interval LANGUAGE plpgsql AS
  $$ BEGIN PERFORM evil.hostile('*'); RETURN NULL; END $$;
CREATE OPERATOR evil.* (LEFTARG = double precision, RIGHTARG = interval, FUNCTION = evil.times);
`;

/** A pool whose sessions find the hostile schema first, as a caller's search_path setting would have it. */
const hostilePool = () => postgres.pool({ options: '-c search_path=evil,pg_catalog,public' });

beforeAll(async () => {
  postgres = await startPostgres();
  await postgres.pool().query(HOSTILE);
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

test('the hostile schema is found first by a statement that does not qualify its functions', async () => {
  const pool = hostilePool();
  await expect(pool.query('SELECT clock_timestamp()')).rejects.toThrow(/hostile clock_timestamp called/);
  await expect(pool.query("SELECT nextval('s')")).rejects.toThrow(/hostile nextval called/);
  await expect(pool.query("SELECT * FROM unnest('{a}'::text[])")).rejects.toThrow(/hostile unnest called/);
  await expect(pool.query('SELECT pg_try_advisory_lock(1)')).rejects.toThrow(/hostile pg_try_advisory_lock called/);
});

// Every statement of the journal's contract, under that search_path: none calls a look-alike.
describeSyncJournal('postgresJournal() under a hostile search_path', () => {
  const pool = hostilePool();
  const schema = `h_${Math.random().toString(36).slice(2)}`;
  return {
    journal: postgresJournal(pool, { schema }),
    reopen: () => postgresJournal(pool, { schema }),
    cleanup: async () => {
      await postgres.pool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
});

describe('postgresJournal() claims under a hostile search_path', () => {
  const sending = (key: string, runId: string) => entry('accounts', key, { state: 'sending', crmId: undefined, runId });

  test('claims, tells what another run holds, commits, and renews its claims, calling none of the look-alikes', async () => {
    const schema = `h_${Math.random().toString(36).slice(2)}`;
    const a = postgresJournal(hostilePool(), { schema, leaseMs: 1000 });
    const b = postgresJournal(hostilePool(), { schema, leaseMs: 1000 });
    await a.open();
    await b.open();
    const ca = a.claims as SyncJournalClaims;
    const cb = b.claims as SyncJournalClaims;

    const [won, other] = await ca.claim('acme', 'run_a', [
      { intent: sending('A1', 'run_a'), resend: false },
      { intent: sending('A2', 'run_a'), resend: false },
    ]);
    const [lost] = await cb.claim('acme', 'run_b', [{ intent: sending('A1', 'run_b'), resend: false }]);
    expect(won).toMatchObject({ outcome: 'claimed', fence: expect.any(Number) });
    expect(lost).toMatchObject({ outcome: 'held', expiresAt: expect.any(Number) });
    expect([...(await cb.held('acme', 'run_b', 'accounts', ['A1'])).keys()]).toEqual(['A1']);
    expect(await b.pending('acme')).toEqual([]);

    // Renewed every third of the lease: their end moves.
    const { first, later } = await claimsRenewed(postgres.pool(), schema);
    expect(later).toBeGreaterThan(first);

    const fence = (won as { fence: number }).fence;
    expect(await ca.commit('acme', { put: [entry('accounts', 'A1', { runId: 'run_a' })] }, fence)).toBe(true);
    expect(
      await ca.commit('acme', { remove: [{ type: 'accounts', key: 'A2' }] }, (other as { fence: number }).fence),
    ).toBe(true);
    expect((await b.get('acme', 'accounts', ['A1', 'A2'])).get('A1')).toMatchObject({ state: 'synced' });
    await a.close();
    await b.close();
  });
});
