import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { CrmSync } from '../../src/sync/crm-sync';
import { startedServer } from '../support/fake-harness';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { erpSource } from '../support/sync';

/*
 * A generation run by worker processes, as a queue runs it: 4 at a time take the 12 slices of a
 * night, one is killed -9 while it reads its slice, and its slice is retried. The dist/ build, as
 * the fleet test runs it.
 */

const DIST = fileURLToPath(new URL('../../dist/postgres.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./generation-worker.mjs', import.meta.url));
const ACCOUNTS = 100;
const SLICES = 12;
const LEASE_MS = 2000;

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

interface SliceReport {
  deactivated: number;
  refusedRemovals: unknown[];
  generation: { state: string };
  failed: number;
}

describe.skipIf(!existsSync(DIST))('a generation run by worker processes', () => {
  test('4 worker processes on 12 slices, one killed -9 mid-slice and its slice retried: exactly the dropped records are deactivated, once', {
    timeout: 300_000,
  }, async () => {
    const server = await startedServer({ latencyMs: 2 });
    const { fake } = server;
    const schema = `gf_${Math.random().toString(36).slice(2)}`;
    // The first night, in this process: every record created.
    const crm = new CrmClient({ ...fake.credentials, baseUrl: server.url, maxRetries: 0 });
    const journal = postgresJournal(postgres.pool(), { schema, leaseMs: LEASE_MS });
    const all = erpSource(ACCOUNTS);
    const first = await new CrmSync(crm, { journal, settleMs: 0 }).run({
      accounts: all.accounts,
      contacts: all.contacts,
    });
    expect(first).toMatchObject({ created: 3 * ACCOUNTS, failed: [] });
    const from = fake.requests.length;
    const dropped = ['A10', 'C20', 'C21', 'A55', 'C110', 'C111'];

    const run = (slice: number, kill: boolean) =>
      new Promise<{ killed: boolean; report?: SliceReport; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [WORKER], {
          env: {
            ...process.env,
            CRM_BASE_URL: server.url,
            CRM_API_KEY: String(fake.credentials.apiKey),
            CRM_TENANT_ID: fake.tenantId,
            GEN_PG: JSON.stringify(postgres.connection),
            GEN_SCHEMA: schema,
            GEN_LEASE_MS: String(LEASE_MS),
            GEN_ACCOUNTS: String(ACCOUNTS),
            GEN_SLICES: String(SLICES),
            GEN_SLICE: String(slice),
            GEN_ID: '2026-12-03',
            GEN_DROPPED: JSON.stringify(dropped),
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk;
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
          if (kill && stderr.includes('reading contacts')) child.kill('SIGKILL');
        });
        child.on('close', (code, signal) =>
          resolve(
            signal === 'SIGKILL'
              ? { killed: true, stderr }
              : { killed: false, stderr, ...(code === 0 ? { report: JSON.parse(stdout) as SliceReport } : {}) },
          ),
        );
      });

    const queue = Array.from({ length: SLICES }, (_, slice) => slice);
    const reports: SliceReport[] = [];
    let kills = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let slice = queue.shift(); slice !== undefined; slice = queue.shift()) {
          const outcome = await run(slice, slice === 5 && kills === 0);
          if (outcome.killed) {
            kills++;
            queue.push(slice);
            continue;
          }
          expect(outcome.report, outcome.stderr).toBeDefined();
          reports.push(outcome.report as SliceReport);
        }
      }),
    );

    expect(kills).toBe(1);
    expect(reports).toHaveLength(SLICES);
    const keyOf = new Map<string, string>();
    for (const type of ['accounts', 'contacts'] as const) {
      for (const e of await journal.list(fake.tenantId, type, undefined, 1000)) keyOf.set(e.crmId as string, e.key);
    }
    const counts: Record<string, number> = {};
    for (const r of fake.requests.slice(from)) {
      if ((r.body as { status?: unknown } | undefined)?.status !== 'inactive') continue;
      const key = keyOf.get(r.path.split('/').pop() as string) ?? r.path;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    expect(counts).toEqual(Object.fromEntries(dropped.map((key) => [key, 1])));
    expect(reports.filter((r) => r.generation.state === 'completed')).toEqual([
      {
        deactivated: dropped.length,
        refusedRemovals: [],
        generation: expect.objectContaining({ state: 'completed' }),
        failed: 0,
      },
    ]);
    expect(reports.reduce((n, r) => n + r.deactivated, 0)).toBe(dropped.length);
  });
});
