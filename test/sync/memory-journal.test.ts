import { expect, test } from 'vitest';
import { memoryJournal } from '../../src/sync/memory-journal';
import { describeSyncJournal } from './journal-conformance';

// The same journal again is the same storage: memory lives as long as the object.
describeSyncJournal('memoryJournal()', ({ leaseMs }) => {
  const journal = memoryJournal({ leaseMs });
  return { journal, reopen: () => journal };
});

test('memoryJournal() keeps a run log and lists its tenants, for crm sync status', () => {
  const journal = memoryJournal();
  journal.addRun?.('acme', { runId: 'run_1', startedAt: 1, finishedAt: 1, recordedAt: 1, summary: '{}' });
  expect(journal.runs?.('acme', 5)).toEqual([
    { runId: 'run_1', startedAt: 1, finishedAt: 1, recordedAt: 1, summary: '{}' },
  ]);
  expect(journal.tenants?.()).toEqual(['acme']);
});
