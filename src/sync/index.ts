// crm-integration-sdk/sync: an initial load and a nightly sync that never duplicates, over a
// write-ahead journal (README.md, "Loading and syncing data"). The SQLite journal loads
// node:sqlite when a run opens it, so this entry imports in any runtime.
export type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalEntry,
  SyncJournalErrorReason,
  SyncJournalKey,
  SyncJournalLock,
  SyncJournalState,
  SyncType,
} from './journal';
export { SyncJournalError } from './journal-error';
export { memoryJournal } from './memory-journal';
export { sqliteJournal } from './sqlite-journal';
