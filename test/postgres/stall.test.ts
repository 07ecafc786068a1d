import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startedServer } from '../support/fake-harness';
import { startPostgres, type TestPostgres } from '../support/postgres';

/*
 * A worker stopped (a real SIGSTOP) inside its claim transaction, its keys' advisory locks held
 * (issue 48, 3): the journal's own per-transaction bounds end its session, and another worker takes
 * its keys while it is still stopped, whatever the pool's settings.
 */
const DIST = fileURLToPath(new URL('../../dist/postgres.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./stall-worker.mjs', import.meta.url));
const LEASE_MS = 2000;
const RECORDS = 8;

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

describe.skipIf(!existsSync(DIST))('a worker stalled inside its claim transaction', () => {
  test('loses its keys while still stopped: another worker claims and creates them all, and the resumed one creates none again', {
    timeout: 120_000,
  }, async () => {
    const server = await startedServer({ latencyMs: 5 });
    const { fake } = server;
    const schema = `stall_${Math.random().toString(36).slice(2)}`;
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
          ...extra,
        },
      });
      let stdout = '';
      let stderr = '';
      const said: ((text: string) => void)[] = [];
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk;
        for (const listener of said) listener(stderr);
      });
      const stopping = new Promise<void>((resolve) => said.push((text) => text.includes('stopping') && resolve()));
      const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
        child.on('close', (code) => resolve({ code, stdout, stderr })),
      );
      return { child, done, stopping };
    };

    const stalled = start({ STALL_IN_CLAIM: '1' });
    await stalled.stopping;
    try {
      // The stopped worker holds its first keys' locks in a transaction it will not end.
      const pool = postgres.pool();
      const holding = await pool.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()",
      );
      expect(holding.rows[0].n).toBeGreaterThan(0);

      const taker = await start({}).done;
      expect(taker.code, taker.stderr).toBe(0);
      const report = JSON.parse(taker.stdout) as { created: unknown; inDoubt: unknown[]; skipped: unknown[] };
      // Every key claimed and created by the taker, the stalled worker still stopped: no key was sent by it.
      expect(report.inDoubt).toEqual([]);
      expect(report.skipped).toEqual([]);
      expect(fake.store.accounts.size).toBe(RECORDS);
      expect(stalled.child.exitCode).toBeNull();
    } finally {
      stalled.child.kill('SIGCONT');
    }
    const late = await stalled.done;
    // Resumed, its session is gone: its run fails saying so, or finds every key the taker's. Nothing twice.
    expect(late.stdout).not.toBe('');
    expect(fake.store.accounts.size).toBe(RECORDS);
    expect(fake.requests.filter((r) => r.endpoint === 'createAccount')).toHaveLength(RECORDS);
    const names = [...fake.store.accounts.values()].map((a) => String(a.name));
    expect(new Set(names).size).toBe(RECORDS);
  });
});
