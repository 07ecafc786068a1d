import { afterEach, expect, test, vi } from 'vitest';
import { SyncJournalError } from '../../src/sync/journal-error';
import { memoryJournal } from '../../src/sync/memory-journal';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import type { SyncAccountRecord } from '../../src/sync/types';
import { erpSource, syncHarness } from '../support/sync';

/* A run and its tenant's lock (SyncJournal.lock): what the run does when it takes one over, waits on one, or loses its own. */

afterEach(() => {
  vi.restoreAllMocks();
});

test("a run that takes over a dead run's lock says whose it was in its report", async () => {
  const journal = memoryJournal({ leaseMs: 200 });
  const { sync, fake } = await syncHarness({ journal });
  await journal.lock(fake.tenantId, 'run_killed');
  // Its process dies: the lock is renewed no more.
  await journal.close();

  const report = await sync.run({ accounts: erpSource(2).accounts });

  expect(report.lockTakenOver).toMatchObject({ runId: 'run_killed' });
  expect(report.created).toBe(2);
});

test('a run waiting on a lock its holder no longer renews stops at its signal, having sent nothing', async () => {
  const journal = memoryJournal();
  const { sync, fake, sent } = await syncHarness({ journal });
  await journal.lock(fake.tenantId, 'run_killed');
  await journal.close();
  const controller = new AbortController();
  const reason = new Error('the job was cancelled');

  // The default lease (30 s) outlasts this wait, which the signal ends.
  const running = sync.run({ accounts: erpSource(2).accounts }, { signal: controller.signal });
  setTimeout(() => controller.abort(reason), 10);

  await expect(running).rejects.toBe(reason);
  expect(sent()).toEqual([]);
});

test('a run that loses its lock mid-run (it stalled past its lease, and another run took it over) stops: nothing more is sent or written', async () => {
  const journal = memoryJournal({ leaseMs: 1000 });
  const { sync, fake, sent } = await syncHarness({ journal });
  const accounts = erpSource(10).accounts;
  let resume: () => void = () => {};
  const paused = new Promise<void>((resolve) => {
    resume = resolve;
  });
  let reached: () => void = () => {};
  const atPause = new Promise<void>((resolve) => {
    reached = resolve;
  });
  async function* stalling(): AsyncGenerator<SyncAccountRecord> {
    yield* accounts.slice(0, 5);
    reached();
    await paused;
    yield* accounts.slice(5);
  }
  const running = sync.run({ accounts: stalling() }, { concurrency: 1 }).catch((error: unknown) => error);
  await atPause;
  // The run's process stalls past its lease, as another run's clock sees it, and that run takes over.
  const monotonic = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + 3000);
  const other = await journal.lock(fake.tenantId, 'run_other');
  vi.restoreAllMocks();
  const before = sent().length;
  resume();

  const outcome = await running;

  expect(outcome).toBeInstanceOf(SyncJournalError);
  expect(outcome).toMatchObject({ reason: 'locked', message: expect.stringMatching(/lost the tenant's lock/) });
  // The first five were read before the stall: those in flight then were answered, none sent after.
  expect(sent().length).toBe(0);
  expect(before).toBeLessThanOrEqual(5);
  expect((await journal.get(fake.tenantId, 'accounts', ['A5', 'A6', 'A9'])).size).toBe(0);
  // The new holder's lock is untouched by the run's end.
  expect(journal.lockHolder?.(fake.tenantId)).toMatchObject({ runId: 'run_other' });
  await other.release();
});

test('a lease that is not a whole number of milliseconds from 100 to an hour is refused when the journal is made', () => {
  for (const leaseMs of [50, 1.5, 3_600_001, Number.NaN, '1000']) {
    expect(() => memoryJournal({ leaseMs: leaseMs as number })).toThrow(
      new TypeError(`memoryJournal(): leaseMs must be an integer from 100 to 3,600,000, got ${String(leaseMs)}.`),
    );
  }
  expect(() => sqliteJournal('unused.db', { leaseMs: 0 })).toThrow(/sqliteJournal\(\): leaseMs must be an integer/);
});
