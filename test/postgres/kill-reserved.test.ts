import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { startedServer } from '../support/fake-harness';
import { startPostgres, type TestPostgres } from '../support/postgres';

/*
 * A Postgres worker killed -9 while its creates wait for their turn (issue 46, 1): their keys are
 * reserved, not in doubt; once its lease lapses the next worker sends them, and only the create
 * the server received without answering is in doubt.
 */
const DIST = fileURLToPath(new URL('../../dist/postgres.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./fleet-worker.mjs', import.meta.url));
const LEASE_MS = 2000;
const RECORDS = 12;

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!existsSync(DIST))('a Postgres worker killed while its creates wait for their turn', () => {
  test('leaves in doubt only the create the server received without an answer; the next worker sends the rest once, 0 duplicates', {
    timeout: 120_000,
  }, async () => {
    const server = await startedServer({ latencyMs: 5 });
    const { fake } = server;
    const schema = `kill_${Math.random().toString(36).slice(2)}`;
    const start = (extra: Record<string, string>) => {
      const child = spawn(process.execPath, [WORKER], {
        env: {
          ...process.env,
          CRM_BASE_URL: server.url,
          CRM_API_KEY: String(fake.credentials.apiKey),
          CRM_TENANT_ID: fake.tenantId,
          FLEET_PG: JSON.stringify(postgres.connection),
          FLEET_SCHEMA: schema,
          FLEET_LEASE_MS: String(LEASE_MS),
          FLEET_RECORDS: String(RECORDS),
          FLEET_FROM: '0',
          FLEET_TO: String(RECORDS - 1),
          FLEET_ONLY_ACCOUNTS: '1',
          ...extra,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
      });
      const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.on('close', (code) => resolve({ code, stdout, stderr })),
      );
      return { child, done };
    };
    const pool = postgres.pool();
    const count = async (sql: string) => (await pool.query(sql)).rows[0].n as number;

    // One call on the wire at a time (maxConcurrency 1) for the run's 4 slots; the first create is
    // stored at once and answered a minute later: the 3 other slots' creates wait for their turn.
    fake.failNext({ endpoint: 'createAccount', applied: true, delayMs: 60_000 });
    const killed = start({ FLEET_MAX_CONCURRENCY: '1' });
    while (!fake.requests.some((r) => r.endpoint === 'createAccount')) await sleep(10);
    // Every slot's key reserved (the table exists once the worker opened the journal).
    while ((await count(`SELECT count(*)::int AS n FROM ${schema}.claims`)) < 4) await sleep(20);
    killed.child.kill('SIGKILL');
    await killed.done;

    const received = fake.requests.filter((r) => r.endpoint === 'createAccount').length;
    expect(received).toBe(1);
    // The intent of the one that left is written; the 3 waiting wrote none.
    expect(await count(`SELECT count(*)::int AS n FROM ${schema}.entries`)).toBe(1);
    const journal = postgresJournal(pool, { schema });
    await journal.open();
    while ((await count(`SELECT count(*)::int AS n FROM ${schema}.claims WHERE expires_at > clock_timestamp()`)) > 0)
      await sleep(100);
    // In doubt: at most the requests the server received without answering (1), not the 4 claimed.
    const inDoubt = await journal.pending(fake.tenantId);
    expect(inDoubt.map((e) => e.key)).toEqual(['A0']);

    const next = await start({}).done;
    expect(next.code, next.stderr).toBe(0);
    const report = JSON.parse(next.stdout) as { inDoubt: { key: string }[]; created: unknown };
    expect(report.inDoubt.map((r) => r.key)).toEqual(['A0']);
    // Every account once: the one in doubt is stored, the others created by the next worker.
    const names = [...fake.store.accounts.values()].map((a) => String(a.name));
    expect(names).toHaveLength(RECORDS - 1);
    expect(new Set(names).size).toBe(names.length);
    expect(fake.requests.filter((r) => r.endpoint === 'createAccount')).toHaveLength(RECORDS - 1);
    await journal.close();
  });
});
