import { afterEach, expect, test } from 'vitest';
import type { SyncJournal, SyncJournalEntry } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { Committer } from '../../src/sync/sender';

const intent: SyncJournalEntry = {
  type: 'accounts',
  key: 'C-1',
  state: 'sending',
  crmId: undefined,
  hash: 'h',
  data: '{}',
  attemptedAt: undefined,
  requestId: undefined,
  runId: 'run_1',
} as SyncJournalEntry;

const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', record);
  unhandled.length = 0;
});

/** A journal whose claims' commits fail, as they do once Postgres is gone. */
function journalLosingItsDatabase(): SyncJournal {
  const journal = memoryJournal();
  return Object.assign(Object.create(journal) as SyncJournal, {
    claims: {
      leaseMs: 30_000,
      claim: async () => [],
      held: async () => new Map(),
      commit: async () => {
        throw new Error('Connection terminated unexpectedly');
      },
    },
  });
}

test('a claimed create released after its database was lost fails the next flush, and is no unhandled rejection when none comes', async () => {
  process.on('unhandledRejection', record);
  const committer = new Committer(journalLosingItsDatabase(), 'tenant_1', 'run_1');
  committer.release(intent, 1);
  // A run that stops on another error never flushes again: give the rejection time to be seen.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(unhandled).toEqual([]);
  await expect(committer.flush()).rejects.toThrow('Connection terminated unexpectedly');
});
