// crm-integration-sdk/sync: an initial load and a nightly sync that never duplicates, over a
// write-ahead journal (README.md, "Loading and syncing data"). The SQLite journal loads
// node:sqlite when a run opens it, so this entry imports in any runtime.

export { CrmSync, type CrmSyncOptions, type SyncResolveOptions } from './crm-sync';
export { MAX_GENERATION_SLICES, type SyncGeneration } from './generation';
export type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalClaim,
  SyncJournalClaimRequest,
  SyncJournalClaims,
  SyncJournalEntry,
  SyncJournalErrorReason,
  SyncJournalFencedIntent,
  SyncJournalGenerationEnd,
  SyncJournalGenerationState,
  SyncJournalGenerationStatus,
  SyncJournalGenerations,
  SyncJournalInFlight,
  SyncJournalKey,
  SyncJournalLock,
  SyncJournalLockHolder,
  SyncJournalLockOptions,
  SyncJournalPace,
  SyncJournalRemovalClaim,
  SyncJournalRun,
  SyncJournalSliceList,
  SyncJournalState,
  SyncJournalTakeover,
  SyncType,
} from './journal';
export { SYNC_HISTORY_KEPT } from './journal';
export { SyncJournalError } from './journal-error';
export { MAX_SYNC_KEY_BYTES } from './keys';
export { type MemoryJournalOptions, memoryJournal } from './memory-journal';
export type { SyncResolution } from './resolve-many';
export type { SyncSentFields } from './sent';
export { SQLITE_JOURNAL_APPLICATION_ID, type SqliteJournalOptions, sqliteJournal } from './sqlite-journal';
export type {
  SyncAccountRecord,
  SyncActivityData,
  SyncActivityRecord,
  SyncContactRecord,
  SyncCounts,
  SyncFailure,
  SyncFieldChange,
  SyncGenerationReport,
  SyncHistoryFailure,
  SyncHistoryOptions,
  SyncHistoryRun,
  SyncHistoryState,
  SyncInDoubt,
  SyncList,
  SyncMaxRemoved,
  SyncOpportunityRecord,
  SyncPlan,
  SyncPlanAction,
  SyncPlanEntry,
  SyncPlanOptions,
  SyncProgress,
  SyncRefusedRemoval,
  SyncReport,
  SyncRunOptions,
  SyncSkipped,
  SyncSource,
} from './types';
