import type { SyncJournalErrorReason } from './journal';

/**
 * A journal refused to work: it was written by a newer version (`reason: 'newer-version'`), it
 * is corrupt (`'corrupt'`), it cannot be opened or written (`'unavailable'`), or another run holds
 * the tenant's lock (`'locked'`). A run that meets one rejects with it, having sent nothing whose
 * intent the journal does not hold.
 *
 * @example
 * ```ts
 * try { await sync.run(source); }
 * catch (error) { if (error instanceof SyncJournalError && error.reason === 'locked') console.error('another run is on'); }
 * ```
 */
export class SyncJournalError extends Error {
  /** Why the journal refused. */
  readonly reason: SyncJournalErrorReason;

  constructor(reason: SyncJournalErrorReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SyncJournalError';
    this.reason = reason;
  }
}
