import { memoryJournal } from '../../src/sync/memory-journal';
import { describeSyncJournal } from './journal-conformance';

// The same journal again is the same storage: memory lives as long as the object.
describeSyncJournal('memoryJournal()', () => {
  const journal = memoryJournal();
  return { journal, reopen: () => journal };
});
