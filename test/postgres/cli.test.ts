import { afterAll, beforeAll, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { runCrm } from '../support/run-crm';
import { syncCliFixture } from '../support/sync-cli';
import { entry } from '../sync/journal-conformance';

/*
 * `crm sync` on the Postgres journal (--postgres), against a real Postgres: the dist/ bin, as a
 * user runs it. The cluster trusts every connection, so the password of the connection string is
 * given and never checked: it is there to be looked for in everything crm writes.
 */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const fixture = syncCliFixture('crm-sync-pg-');
const PASSWORD = 'Pa55-w0rd_never-shown';
const url = () => {
  const { host, port, user, database } = postgres.connection;
  return `postgres://${user}:${PASSWORD}@${host}:${port}/${database}`;
};
const fresh = () => `s_${Math.random().toString(36).slice(2)}`;
const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('apply, status and resolve take --postgres: a worker killed mid-create leaves a record in doubt that status lists and resolve settles, and a live worker’s claim is in flight', async () => {
  const { server, env, file } = fixture;
  const schema = fresh();
  const tenant = server.fake.tenantId;
  const accounts = file('customers.csv', 'key,name\nC-1,Acme Ltd\nC-2,Beta Inc\n');
  const pg = ['--postgres', url(), '--schema', schema];
  const seen: string[] = [];
  const crm = async (args: string[], withEnv = env) => {
    const run = await runCrm(args, withEnv);
    seen.push(run.stdout, run.stderr);
    return run;
  };

  const plan = await crm(['sync', 'plan', ...pg, '--accounts', accounts, '--json']);
  expect([plan.code, lines(plan.stdout).at(-1)]).toEqual([
    0,
    expect.objectContaining({ counts: expect.objectContaining({ create: 2 }) }),
  ]);
  const apply = await crm(['sync', 'apply', ...pg, '--accounts', accounts]);
  expect([apply.code, JSON.parse(apply.stdout)]).toEqual([0, expect.objectContaining({ created: 2 })]);

  // Two workers of the fleet, as postgresJournal() in their own processes: one killed after it
  // claimed K-dead (its claim lapses within a second), one alive and still creating K-live.
  const dead = postgresJournal(postgres.pool(), { schema, leaseMs: 1000 });
  const live = postgresJournal(postgres.pool(), { schema, leaseMs: 60_000 });
  await dead.open();
  await live.open();
  const sending = (key: string, runId: string) => entry('accounts', key, { state: 'sending', crmId: undefined, runId });
  await dead.claims?.claim(tenant, 'run_dead', [{ intent: sending('K-dead', 'run_dead'), resend: false }]);
  await live.claims?.claim(tenant, 'run_live', [{ intent: sending('K-live', 'run_live'), resend: false }]);
  dead.close();
  // Its claim goes unrenewed past its lease.
  await new Promise((wait) => setTimeout(wait, 1500));

  const status = await crm(['sync', 'status', ...pg, '--json']);
  expect(status.code).toBe(0);
  const [shown] = lines(status.stdout);
  expect(shown).toMatchObject({
    tenant,
    lock: null,
    runs: [expect.objectContaining({ state: 'finished', created: 2 })],
    inDoubt: [{ type: 'accounts', key: 'K-dead', state: 'sending' }],
    inFlight: [{ type: 'accounts', key: 'K-live', state: 'sending', runId: 'run_live' }],
  });

  const resolve = await crm(['sync', 'resolve', ...pg, '--type', 'accounts', '--key', 'K-dead', '--absent']);
  expect(resolve.code).toBe(0);
  // DATABASE_URL, when --postgres is given no value.
  const after = await crm(['sync', 'status', '--postgres', '--schema', schema, '--json'], {
    ...env,
    DATABASE_URL: url(),
  });
  expect(after.code).toBe(0);
  expect(lines(after.stdout)[0]).toMatchObject({ inDoubt: [], inFlight: [{ key: 'K-live' }] });
  live.close();

  // A schema that holds no journal is said so, and not made.
  const none = await crm(['sync', 'status', '--postgres', url(), '--schema', fresh()]);
  expect([none.code, JSON.parse(none.stderr).message]).toEqual([
    2,
    expect.stringMatching(/^No journal in schema s_\w+ on 127\.0\.0\.1:\d+\/postgres: crm sync apply makes one$/),
  ]);
  // A server that is not there: the failure names the host, never the password.
  const down = await crm(['sync', 'status', '--postgres', url().replace(/:\d+\//, ':1/'), '--schema', schema]);
  expect(down.code).not.toBe(0);

  for (const text of seen) expect(text).not.toContain(PASSWORD);
}, 120_000);
