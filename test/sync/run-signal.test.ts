import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import type { SyncAccountRecord } from '../../src/sync/types';
import type { FakeCrmCore } from '../../src/testing/index';
import { syncHarness } from '../support/sync';

/* A run's signal reaches every call it makes (issue 45, 4). */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sync-signal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const accounts = (n: number, name = 'Account'): SyncAccountRecord[] =>
  Array.from({ length: n }, (_, i) => ({ key: `A${i}`, data: { name: `${name} ${i}` } }));

/**
 * A client of the harness's fake whose key provider answers `answers` look-ups, then never again
 * (a vault that stopped answering); `controller` aborts once the fake has answered the calls that
 * had a key.
 */
function hangingKey(fake: FakeCrmCore, crm: CrmClient, answers: number, controller: AbortController) {
  const abort = () => setTimeout(() => controller.abort(new Error('nightly window over')), 0);
  let calls = 0;
  const provider = () => {
    if (++calls <= answers) return fake.credentials.apiKey as string;
    if (answers === 0 && calls === 1) abort();
    return new Promise<string>(() => {});
  };
  let answered = 0;
  const handle = fake.handle.bind(fake);
  fake.handle = async (request: Request) => {
    const response = await handle(request);
    if (++answered === answers) abort();
    return response;
  };
  return crm.withTenant(crm.tenantId as string, { apiKey: provider });
}

/** The tenant's rows in the SQLite journal's lock table. */
async function lockRows(path: string, tenant: string): Promise<number> {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Number((db.prepare('SELECT COUNT(*) AS n FROM locks WHERE tenant = ?').get(tenant) as { n: number }).n);
  } finally {
    db.close();
  }
}

/**
 * 10 accounts synced on a SQLite journal, a sync of the tenant on it (`sync`), and one whose key
 * provider never answers (`hung`), with the signal that aborts at its first look-up.
 */
async function syncedThenHung() {
  const path = join(dir, 'acme.db');
  const { fake, crm } = await syncHarness();
  const journal = sqliteJournal(path);
  const sync = new CrmSync(crm, { journal, settleMs: 0 });
  await sync.run({ accounts: accounts(10) });
  const controller = new AbortController();
  const hung = new CrmSync(hangingKey(fake, crm, 0, controller), { journal, settleMs: 0 });
  return { fake, sync, journal, hung, signal: controller.signal, locks: () => lockRows(path, fake.tenantId) };
}

describe("a run's signal", () => {
  test('abandons the creates waiting for a key provider that stopped answering: the run settles, its lock is released, and nothing is left in doubt', async () => {
    const path = join(dir, 'acme.db');
    const { fake, crm } = await syncHarness();
    const journal = sqliteJournal(path);
    const controller = new AbortController();
    const hung = new CrmSync(hangingKey(fake, crm, 5, controller), { journal, settleMs: 0 });

    await expect(hung.run({ accounts: accounts(20) }, { signal: controller.signal, concurrency: 8 })).rejects.toThrow(
      'nightly window over',
    );

    // The 5 creates that had their key were sent and answered; the others were never sent.
    expect(fake.store.accounts.size).toBe(5);
    expect(await journal.pending(fake.tenantId)).toEqual([]);
    expect((await journal.list(fake.tenantId, 'accounts', undefined, 100)).map((e) => e.state)).toEqual(
      Array(5).fill('synced'),
    );
    expect(await lockRows(path, fake.tenantId)).toBe(0);
    // A later run of the tenant is accepted, and creates the rest once.
    const report = await new CrmSync(crm, { journal, settleMs: 0 }).run({ accounts: accounts(20) });
    expect(report).toMatchObject({ created: 15, unchanged: 5, inDoubt: [] });
    expect(fake.store.accounts.size).toBe(20);
    journal.close();
  });

  test('abandons the updates waiting for a key, and the journal keeps what was last synced', async () => {
    const { fake, sync, journal, hung, signal, locks } = await syncedThenHung();

    await expect(hung.run({ accounts: accounts(10, 'Renamed') }, { signal })).rejects.toThrow('nightly window over');

    expect([...fake.store.accounts.values()].filter((a) => a.name?.startsWith('Renamed'))).toEqual([]);
    expect(await locks()).toBe(0);
    expect(await sync.run({ accounts: accounts(10, 'Renamed') })).toMatchObject({ updated: 10, unchanged: 0 });
    journal.close();
  });

  test('abandons the deactivations waiting for a key, and the removed records stay synced for the next run', async () => {
    const { fake, sync, journal, hung, signal, locks } = await syncedThenHung();

    await expect(hung.run({ accounts: accounts(8) }, { signal, removed: 'deactivate' })).rejects.toThrow(
      'nightly window over',
    );

    expect([...fake.store.accounts.values()].filter((a) => a.status === 'inactive')).toEqual([]);
    expect(await locks()).toBe(0);
    const report = await sync.run({ accounts: accounts(8) }, { removed: 'deactivate' });
    expect(report).toMatchObject({ deactivated: 2, unchanged: 8 });
    journal.close();
  });

  test.each([
    ['', undefined],
    [' (a client with a signal of its own)', new AbortController().signal],
  ])(
    'abandons the creates waiting for a maxConcurrency slot, and lets the one on the wire be answered and written down%s',
    async (_, signal) => {
      const { fake, journal } = await syncHarness();
      const crm = new CrmClient({
        ...fake.credentials,
        baseUrl: fake.baseUrl,
        maxRetries: 0,
        maxConcurrency: 1,
        signal,
      });
      // The first create is held on the wire while the others wait for the client's one slot.
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let onTheWire!: () => void;
      const sent = new Promise<void>((resolve) => {
        onTheWire = resolve;
      });
      const handle = fake.handle.bind(fake);
      fake.handle = async (request: Request) => {
        onTheWire();
        await released;
        return handle(request);
      };
      let calls = 0;
      let allCalled!: () => void;
      const called = new Promise<void>((resolve) => {
        allCalled = resolve;
      });
      const create = crm.accounts.create.bind(crm.accounts);
      crm.accounts.create = (...args: Parameters<typeof create>) => {
        if (++calls === 4) allCalled();
        return create(...args);
      };
      const controller = new AbortController();
      const outcome = new CrmSync(crm, { journal, settleMs: 0 })
        .run({ accounts: accounts(20) }, { signal: controller.signal, concurrency: 4 })
        .catch((error: unknown) => error);
      await Promise.all([called, sent]);
      controller.abort(new Error('nightly window over'));
      release();

      expect(await outcome).toMatchObject({ message: 'nightly window over' });
      expect(fake.requests).toHaveLength(1);
      expect(fake.store.accounts.size).toBe(1);
      // Answered, so known: synced, not in doubt; the creates never sent left no intent.
      expect(await journal.pending(fake.tenantId)).toEqual([]);
      expect(await journal.list(fake.tenantId, 'accounts', undefined, 100)).toMatchObject([
        { state: 'synced', crmId: [...fake.store.accounts.keys()][0] },
      ]);
    },
  );

  test("abandons the creates waiting for their turn at the pace after a refusal, without waiting out the server's Retry-After", async () => {
    const { fake, journal } = await syncHarness();
    const crm = new CrmClient({ ...fake.credentials, baseUrl: fake.baseUrl, maxRetries: 2, throttle: 'auto' });
    const controller = new AbortController();
    fake.handle = async () => {
      setTimeout(() => controller.abort(new Error('nightly window over')), 0);
      return Response.json(
        { success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } },
        { status: 429, headers: { 'retry-after': '60' } },
      );
    };

    await expect(
      new CrmSync(crm, { journal, settleMs: 0 }).run({ accounts: accounts(6) }, { signal: controller.signal }),
    ).rejects.toThrow('nightly window over');

    expect(await journal.pending(fake.tenantId)).toEqual([]);
    expect(await journal.list(fake.tenantId, 'accounts', undefined, 100)).toEqual([]);
  });
});
