import { afterAll, beforeAll, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import type { SyncJournalGenerations } from '../../src/sync/journal';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { runInProcess } from '../support/run-crm';

/* `crm sync status --postgres` on a journal whose tenant has open generations. */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const url = () => {
  const { host, port, user, database } = postgres.connection;
  return `postgres://${user}@${host}:${port}/${database}`;
};

test('status lists the open generations of a tenant, each with the slices it is missing, and none once complete', async () => {
  const schema = `gs_${Math.random().toString(36).slice(2)}`;
  const journal = postgresJournal(postgres.pool(), { schema });
  await journal.open();
  const generations = journal.generations as SyncJournalGenerations;
  const finish = (id: string, slice: number) =>
    generations.finish('acme', `run_${id}_${slice}`, { id, slice, remove: false, lists: [] });
  await generations.join('acme', 'night-1', 6);
  for (const slice of [0, 2, 3]) await finish('night-1', slice);
  const env = { CRM_TENANT_ID: 'acme' };
  const args = ['sync', 'status', '--postgres', url(), '--schema', schema];

  const json = await runInProcess([...args, '--json'], env, { stdout: false, stderr: false });
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({
    tenant: 'acme',
    generations: [{ id: 'night-1', slices: 6, state: 'open', missingSlices: [1, 4, 5] }],
  });
  const text = await runInProcess(args, env, { stdout: true, stderr: false });
  expect(text.stdout).toContain('open generations (1):');
  expect(text.stdout).toMatch(
    /night-1.*\(6 slices, started .*\): missing slices 1, 4-5; nothing is removed until they finish/,
  );

  for (const slice of [1, 4, 5]) await finish('night-1', slice);
  const done = await runInProcess([...args, '--json'], env, { stdout: false, stderr: false });
  expect(done.stdout).toBe('');
  journal.close();
});
