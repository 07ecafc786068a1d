import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { memoryJournal } from '../../src/sync/memory-journal';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import type { SyncProgress } from '../../src/sync/types';
import { erpSource, syncHarness } from '../support/sync';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sync-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A journal that logs its writes into `log`, beside the requests the fake logs there too. */
function logged(journal: SyncJournal, log: string[]): SyncJournal {
  return {
    open: () => journal.open(),
    lock: (t, r) => journal.lock(t, r),
    get: (t, type, keys) => journal.get(t, type, keys),
    list: (t, type, after, limit) => journal.list(t, type, after, limit),
    pending: (t) => journal.pending(t),
    write: async (t, change) => {
      await journal.write(t, change);
      for (const e of change.put ?? []) log.push(`${e.state} ${e.key}`);
    },
    close: () => journal.close(),
  };
}

describe('write-ahead', () => {
  test("each create's intent is durable before its request is sent, and several intents share one write", async () => {
    const log: string[] = [];
    const writes: number[] = [];
    const base = memoryJournal();
    const journal = logged(base, log);
    const counting: SyncJournal = {
      ...journal,
      write: async (t, change) => {
        writes.push(change.put?.filter((e) => e.state === 'sending').length ?? 0);
        await journal.write(t, change);
      },
    };
    const { sync, fake } = await syncHarness({ journal: counting });
    const handle = fake.handle.bind(fake);
    fake.handle = async (request: Request) => {
      const body = (await request
        .clone()
        .json()
        .catch(() => ({}))) as { name?: string };
      log.push(`request ${body.name}`);
      return handle(request);
    };
    await sync.run(
      { accounts: Array.from({ length: 20 }, (_, i) => ({ key: `A${i}`, data: { name: `A${i}` } })) },
      { concurrency: 4 },
    );

    for (let i = 0; i < 20; i++) {
      expect(log.indexOf(`sending A${i}`), `A${i}`).toBeGreaterThanOrEqual(0);
      expect(log.indexOf(`sending A${i}`)).toBeLessThan(log.indexOf(`request A${i}`));
      expect(log.indexOf(`request A${i}`)).toBeLessThan(log.indexOf(`synced A${i}`));
    }
    // The intents of the creates that reached their send gates together shared a write: fewer than 20.
    const groups = writes.filter((n) => n > 0);
    expect(groups.reduce((a, b) => a + b, 0)).toBe(20);
    expect(groups.length).toBeLessThan(20);
    expect(Math.max(...groups)).toBeLessThanOrEqual(4);
  });

  test('never more requests in flight than the concurrency', async () => {
    const { sync, fake } = await syncHarness({ fake: { latencyMs: 5 } });
    let inFlight = 0;
    let most = 0;
    const handle = fake.handle.bind(fake);
    fake.handle = async (request: Request) => {
      most = Math.max(most, ++inFlight);
      try {
        return await handle(request);
      } finally {
        inFlight--;
      }
    };
    await sync.run(erpSource(10), { concurrency: 3 });
    expect(most).toBe(3);
  });
});

describe('stopping', () => {
  test('an aborted signal rejects with its reason after the requests in flight answered; the journal holds no intent', async () => {
    const { sync, fake, journal } = await syncHarness({ fake: { latencyMs: 5 } });
    const controller = new AbortController();
    let answered = 0;
    const handle = fake.handle.bind(fake);
    fake.handle = async (request: Request) => {
      const response = await handle(request);
      if (++answered === 10) controller.abort(new Error('stop the job'));
      return response;
    };
    await expect(sync.run(erpSource(20), { signal: controller.signal, concurrency: 4 })).rejects.toThrow(
      'stop the job',
    );

    expect(await journal.pending(fake.tenantId)).toEqual([]);
    // Every record the fake stored is mapped: nothing in flight was lost.
    const mapped = (await journal.list(fake.tenantId, 'accounts', undefined, 1000)).length;
    expect(mapped).toBe(fake.store.accounts.size);
    expect(fake.store.accounts.size).toBeGreaterThanOrEqual(10);
    expect(fake.store.accounts.size).toBeLessThan(20);
  });

  test('a signal aborted before the run sends nothing', async () => {
    const { sync, sent } = await syncHarness();
    await expect(sync.run(erpSource(1), { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(sent()).toEqual([]);
  });

  test('a journal that cannot be written rejects the run, and nothing is sent without its intent', async () => {
    const base = memoryJournal();
    const journal: SyncJournal = { ...bind(base), write: () => Promise.reject(new Error('disk full')) };
    const { sync, sent } = await syncHarness({ journal });
    await expect(sync.run(erpSource(2))).rejects.toThrow('disk full');
    expect(sent()).toEqual([]);
  });
});

function bind(journal: SyncJournal): SyncJournal {
  return {
    open: () => journal.open(),
    lock: (t, r) => journal.lock(t, r),
    get: (t, type, keys) => journal.get(t, type, keys),
    list: (t, type, after, limit) => journal.list(t, type, after, limit),
    pending: (t) => journal.pending(t),
    write: (t, change) => journal.write(t, change),
    close: () => journal.close(),
  };
}

describe('progress', () => {
  test('onProgress is called at most 4 times a second, and its last call tells where the run ended', async () => {
    const { sync } = await syncHarness();
    const seen: (SyncProgress & { at: number })[] = [];
    await sync.run(erpSource(20), { onProgress: (p) => seen.push({ ...p, at: Date.now() }) });

    expect(seen.at(-1)).toMatchObject({
      type: 'activities',
      done: 40,
      created: 40,
      failed: 0,
      inDoubt: 0,
      etaSeconds: 0,
    });
    // Within any second, at most 4 calls, and the run's last call (test/sync/progress.test.ts).
    for (const p of seen) {
      const within = seen.filter((q) => q.at >= p.at && q.at < p.at + 1000).length;
      expect(within).toBeLessThanOrEqual(4 + 1);
    }
  });
});

describe('on a SQLite journal', () => {
  test('a corrupt journal is refused with a clear error before anything is sent', async () => {
    const path = join(dir, 'corrupt.db');
    writeFileSync(path, 'this is no database '.repeat(100));
    const { fake, crm, sent } = await syncHarness();
    const sync = new CrmSync(crm, { journal: sqliteJournal(path) });

    const error = await sync.run(erpSource(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'corrupt', message: expect.stringContaining('corrupt') });
    expect(sent()).toEqual([]);
    expect(fake.store.accounts.size).toBe(0);
  });

  test('a journal written by a newer version is refused, naming it, before anything is sent', async () => {
    const path = join(dir, 'newer.db');
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(path);
    // A newer version marks its journals as this one does (SQLITE_JOURNAL_APPLICATION_ID).
    db.exec('PRAGMA application_id = 0x43524D4A; PRAGMA user_version = 9');
    db.close();
    const { crm, sent } = await syncHarness();
    const sync = new CrmSync(crm, { journal: sqliteJournal(path) });

    await expect(sync.run(erpSource(1))).rejects.toMatchObject({
      reason: 'newer-version',
      message: expect.stringMatching(/newer version/),
    });
    await expect(sync.plan(erpSource(1))).rejects.toMatchObject({ reason: 'newer-version' });
    expect(sent()).toEqual([]);
  });

  test('one file serves two tenants, each keyed apart; no credential is in it', async () => {
    const path = join(dir, 'shared.db');
    const { fake, crm } = await syncHarness({ fake: { seed: { tenants: [{ id: 'acme' }, { id: 'globex' }] } } });
    const acme = new CrmSync(crm.withTenant('acme', { apiKey: 'fake-api-key-acme' }), { journal: sqliteJournal(path) });
    const globex = new CrmSync(crm.withTenant('globex', { apiKey: 'fake-api-key-globex' }), {
      journal: sqliteJournal(path),
    });
    const a = await acme.run({ accounts: [{ key: 'X', data: { name: 'Acme X' } }] });
    const g = await globex.run({ accounts: [{ key: 'X', data: { name: 'Globex X' } }] });

    expect([a.created, g.created]).toEqual([1, 1]);
    const acmeId = await acme.idOf('accounts', 'X');
    const globexId = await globex.idOf('accounts', 'X');
    expect(acmeId).not.toBe(globexId);
    expect(fake.store.accounts.get(String(acmeId))).toMatchObject({ tenantId: 'acme', name: 'Acme X' });
    expect(fake.store.accounts.get(String(globexId))).toMatchObject({ tenantId: 'globex', name: 'Globex X' });
    const bytes = ['', '-wal']
      .map((suffix) => {
        try {
          return readFileSync(path + suffix).toString('latin1');
        } catch {
          return '';
        }
      })
      .join('');
    expect(bytes).not.toContain('fake-api-key');
    expect(bytes).toContain('globex');
  });

  test('a crm client without a tenant is refused', () => {
    const crm = new CrmClient({ baseUrl: 'https://crm.example', apiKey: 'k', tenantId: 'x' });
    expect(() => new CrmSync({ ...crm, tenantId: undefined } as never, { journal: memoryJournal() })).toThrow(/tenant/);
  });
});

describe('hostile sources and callbacks', () => {
  test('an aborted run does not wait for a list whose source hangs', async () => {
    const { sync } = await syncHarness();
    const controller = new AbortController();
    async function* hangs() {
      yield { key: 'A0', data: { name: 'First' } };
      await new Promise(() => {});
    }
    const run = sync.run({ accounts: hangs() }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('nightly window over')), 50);
    await expect(run).rejects.toThrow('nightly window over');
  });

  test('a list that hands out one object again and again is read record by record', async () => {
    const { sync, fake } = await syncHarness();
    function* reused() {
      const row = { key: '', data: { name: '' } };
      for (let i = 0; i < 3; i++) {
        row.key = `A${i}`;
        row.data.name = `Account ${i}`;
        yield row;
      }
    }
    const report = await sync.run({ accounts: reused() });
    expect(report.created).toBe(3);
    expect([...fake.store.accounts.values()].map((a) => a.name).sort()).toEqual([
      'Account 0',
      'Account 1',
      'Account 2',
    ]);
  });

  test('an onProgress that throws stops the run with its error, and no created record is taken for in doubt', async () => {
    const { sync, fake, journal } = await syncHarness();
    const error = await sync
      .run(erpSource(2), {
        onProgress: () => {
          throw new Error('progress bar broke');
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'progress bar broke' });
    expect(await journal.pending(fake.tenantId)).toEqual([]);
    const mapped = await journal.list(fake.tenantId, 'accounts', undefined, 10);
    expect(mapped.length).toBe(fake.store.accounts.size);
  });
});
