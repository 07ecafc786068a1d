// crm-integration-sdk/sync: an initial load and a nightly sync that never duplicates, over a
// write-ahead journal (README.md, "Loading and syncing data"). The SQLite journal loads
// node:sqlite when a run opens it, so this entry imports in any runtime.

export { CrmSync, type CrmSyncOptions, type SyncResolveOptions } from './crm-sync';
export type {
  SyncJournal,
  SyncJournalChange,
  SyncJournalClaim,
  SyncJournalClaimRequest,
  SyncJournalClaims,
  SyncJournalEntry,
  SyncJournalErrorReason,
  SyncJournalKey,
  SyncJournalLock,
  SyncJournalRun,
  SyncJournalState,
  SyncType,
} from './journal';
export { SyncJournalError } from './journal-error';
export { memoryJournal } from './memory-journal';
export { sqliteJournal } from './sqlite-journal';
export type {
  SyncAccountRecord,
  SyncActivityData,
  SyncActivityRecord,
  SyncContactRecord,
  SyncCounts,
  SyncFailure,
  SyncFieldChange,
  SyncInDoubt,
  SyncList,
  SyncOpportunityRecord,
  SyncPlan,
  SyncPlanAction,
  SyncPlanEntry,
  SyncPlanOptions,
  SyncProgress,
  SyncReport,
  SyncRunOptions,
  SyncSkipped,
  SyncSource,
} from './types';
