import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal, SyncJournalClaims } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import { startedServer } from '../support/fake-harness';
import { runCrm } from '../support/run-crm';
import { erpSource, syncHarness, withMethods } from '../support/sync';

const DIST = fileURLToPath(new URL('../../dist/sync.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./crash-child.mjs', import.meta.url));

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('sync.history()', () => {
  test('keeps a run made through sync.run(), with its start, its end and its counts', async () => {
    const { sync } = await syncHarness();
    const source = erpSource(2);

    const report = await sync.run(source);
    const [run, ...older] = await sync.history();

    expect(older).toEqual([]);
    expect(run).toMatchObject({
      runId: report.runId,
      state: 'finished',
      created: report.created,
      updated: 0,
      failed: 0,
      inDoubt: 0,
      skipped: 0,
      failures: [],
    });
    expect(run?.finishedAt?.getTime()).toBeGreaterThanOrEqual(run?.startedAt.getTime() ?? Number.NaN);
    const second = await sync.run(source);
    expect((await sync.history()).map((r) => [r.runId, r.unchanged])).toEqual([
      [second.runId, second.unchanged],
      [report.runId, 0],
    ]);
    expect(await sync.history({ limit: 1 })).toHaveLength(1);
  });

  test('keeps a run that stopped, by the name of what stopped it, with what it had done', async () => {
    const { sync } = await syncHarness();
    const stop = new AbortController();
    const run = sync.run(erpSource(3), {
      signal: stop.signal,
      onProgress: (progress) => {
        if (progress.done >= 1) stop.abort();
      },
    });
    await expect(run).rejects.toThrow();

    const [stopped] = await sync.history();
    expect(stopped).toMatchObject({ state: 'stopped', stoppedBy: 'AbortError' });
    expect(stopped?.finishedAt).toBeInstanceOf(Date);
  });

  test('refuses a limit out of 1 to 1,000', async () => {
    const { sync } = await syncHarness();
    await expect(sync.history({ limit: 0 })).rejects.toThrow(/limit/);
    await expect(sync.history({ limit: 1001 })).rejects.toThrow(/limit/);
  });

  test('a journal that keeps no history gives none, and its runs go as before', async () => {
    const base = memoryJournal();
    // A journal of one's own, of the required methods only.
    const journal: SyncJournal = {
      open: () => base.open(),
      lock: (tenant, runId, options) => base.lock(tenant, runId, options),
      get: (tenant, type, keys) => base.get(tenant, type, keys),
      list: (tenant, type, after, limit) => base.list(tenant, type, after, limit),
      pending: (tenant) => base.pending(tenant),
      write: (tenant, change) => base.write(tenant, change),
      close: () => base.close(),
    };
    const { sync } = await syncHarness({ journal });
    expect((await sync.run(erpSource(1))).created).toBe(6);
    expect(await sync.history()).toEqual([]);
  });
});

describe('sync.history() of a shared journal (one with claims, no lock)', () => {
  test('a run not ended is live while its record is younger than a claim’s lease, and did not end once older', async () => {
    const memory = memoryJournal();
    const journal = withMethods(memory, {
      claims: { leaseMs: 1000 } as SyncJournalClaims,
      addRun: (tenant, run) => memory.addRun?.(tenant, run),
      runs: (tenant, limit) => memory.runs?.(tenant, limit) ?? [],
    });
    const { sync, fake } = await syncHarness({ journal });
    // The reader's clock stands still: a record 1 ms short of the lease is live however slow the machine.
    const now = Date.parse('2026-12-04T02:00:00Z');
    vi.useFakeTimers({ toFake: ['Date'], now });
    try {
      const run = (runId: string, startedAt: number, recordedAt: number, finishedAt?: number) =>
        journal.addRun?.(fake.tenantId, { runId, startedAt, finishedAt, recordedAt, summary: '{"done":4}' });
      await run('run_ended', now - 9000, now - 8000, now - 8000);
      await run('run_killed', now - 7000, now - 1001);
      await run('run_live', now - 3000, now - 999);

      expect((await sync.history()).map((r) => [r.runId, r.state, r.done])).toEqual([
        ['run_live', 'live', 4],
        ['run_killed', 'did-not-end', 4],
        ['run_ended', 'finished', 4],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a live run and a killed run in the history', () => {
  test('a run waiting for an answer is live, seen from another process’s journal, and finished once answered', async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-history-'));
    const path = join(dir, 'live.sync.db');
    const server = await startedServer();
    const { fake } = server;
    const handle = fake.handle.bind(fake);
    let release: () => void = () => {};
    const held = new Promise<void>((reached) => {
      fake.handle = (request: Request) => {
        if (request.method !== 'POST') return handle(request);
        // The first create waits until the test lets it go.
        fake.handle = handle;
        reached();
        return new Promise<void>((go) => {
          release = go;
        }).then(() => handle(request));
      };
    });
    const crm = new CrmClient({ ...fake.credentials, baseUrl: server.url, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: sqliteJournal(path), settleMs: 0 });
    const running = sync.run({ accounts: [{ key: 'A1', data: { name: 'Acme' } }] });
    await held;

    const reader = new CrmSync(crm, { journal: sqliteJournal(path, { readOnly: true }) });
    const [live] = await reader.history();
    expect(live).toMatchObject({ state: 'live', finishedAt: undefined, created: 0 });

    release();
    const report = await running;
    const [ended] = await reader.history();
    expect(ended).toMatchObject({ runId: report.runId, state: 'finished', created: 1 });
  });

  test.skipIf(!existsSync(DIST))(
    'a run killed -9 stays in the history as a run that did not end, with its progress as last recorded',
    { timeout: 60_000 },
    async () => {
      dir = mkdtempSync(join(tmpdir(), 'crm-history-'));
      const path = join(dir, 'killed.sync.db');
      const server = await startedServer();
      const { fake } = server;
      const handle = fake.handle.bind(fake);
      let posts = 0;
      let killed: () => void = () => {};
      const child = spawn(process.execPath, [CHILD], {
        env: {
          ...process.env,
          CRM_BASE_URL: server.url,
          CRM_API_KEY: String(fake.credentials.apiKey),
          CRM_TENANT_ID: fake.tenantId,
          CRASH_JOURNAL: path,
          CRASH_RECORDS: '20',
          CRASH_LEASE_MS: '300',
        },
        stdio: 'ignore',
      });
      const closed = new Promise<void>((done) => child.on('close', () => done()));
      fake.handle = (request: Request) => {
        // Killed while its fifth create waits for the answer: that record is in doubt after.
        if (request.method === 'POST' && ++posts === 5) {
          child.kill('SIGKILL');
          killed();
          return new Promise(() => {});
        }
        return handle(request);
      };
      await new Promise<void>((done) => {
        killed = done;
      });
      await closed;

      const crm = new CrmClient({ ...fake.credentials, baseUrl: server.url, maxRetries: 0 });
      const journal = sqliteJournal(path, { readOnly: true });
      const sync = new CrmSync(crm, { journal });
      // Its lock goes unrenewed for one lease (300 ms) before the run counts as stopped.
      let [run] = await sync.history();
      for (let i = 0; i < 100 && run?.state === 'live'; i++) {
        await new Promise((wait) => setTimeout(wait, 50));
        [run] = await sync.history();
      }
      expect(run).toMatchObject({ state: 'did-not-end', finishedAt: undefined });
      expect(run?.startedAt).toBeInstanceOf(Date);
      await journal.open();
      expect((await journal.pending(fake.tenantId)).map((e) => [e.state, e.runId])).toContainEqual([
        'sending',
        run?.runId,
      ]);
      await journal.close();
      // crm sync status says the same: the run did not end, and what it had in flight is in doubt.
      const status = await runCrm(['sync', 'status', '--journal', path]);
      const shown = JSON.parse(status.stdout) as { runs: unknown[]; inFlight: unknown[]; inDoubt: unknown[] };
      expect(shown.runs[0]).toMatchObject({ runId: run?.runId, state: 'did-not-end', finishedAt: null });
      expect(shown.inFlight).toEqual([]);
      expect(shown.inDoubt).toContainEqual(expect.objectContaining({ state: 'sending' }));
    },
  );
});
