import { CrmApiError, CrmError } from '../core/errors';
import type { RequestOptions } from '../options';
import { sendGated } from './gate';
import type { SyncJournalClaim, SyncJournalEntry, SyncType } from './journal';
import type { Kind } from './kinds';
import type { Committer } from './sender';
import { stampedDate } from './settle';

/** What a record to create brings from its decision: its canonical form, and a lost attempt's time. */
export interface CreateFrom {
  readonly hash: string;
  readonly data: string;
  readonly attemptedAt: number | undefined;
}

/**
 * The run's part in the send step of a create (create-run.ts): what the create needs of it, and
 * where its outcome goes. The run keeps its state (run.ts); this step only sends and settles.
 */
export interface CreateRun {
  readonly committer: Committer;
  readonly runId: string;
  readonly signal: AbortSignal | undefined;
  /** The client, told to sendGated so that a client without send gates has its intent first. */
  readonly client: unknown;
  now(): number;
  /** Sends `kind`'s create of `body` with `options`, as every call of the run is sent. */
  send(kind: Kind, body: Record<string, unknown>, options: RequestOptions): Promise<{ readonly id: string }>;
  /** Another run's record (a shared journal's claim): the run decides it again (other-runs.ts). */
  elsewhere(
    kind: Kind,
    key: string,
    value: Record<string, unknown>,
    from: CreateFrom,
    claim: Exclude<SyncJournalClaim, { outcome: 'claimed' }>,
  ): void;
  /** The run stops on `error` (the journal failed). */
  fail(error: unknown): void;
  /** The record failed with nothing done. */
  failed(type: SyncType, key: string, error: unknown): void;
  /** The record is in doubt: it may have been created. */
  inDoubt(type: SyncType, key: string): void;
  /** Its claim ended before its answer was written: the run that took it over settles it. */
  lostClaim(type: SyncType, key: string): void;
  created(type: SyncType, key: string, id: string): void;
  /** An outcome committed to a shared journal while the slot sends its next create. */
  later(written: Promise<void>): void;
}

/**
 * The job of one create: its intent written at its send gate (gate.ts), its answer written after
 * it. On an answer that may have acted (a lost answer, a 5xx, a bug after the request went),
 * the record is in doubt; on one that says nothing was done, it failed and its intent goes.
 */
export function createJob(
  run: CreateRun,
  kind: Kind,
  key: string,
  value: Record<string, unknown>,
  from: CreateFrom,
  resend: boolean,
): () => Promise<void> {
  const { type } = kind;
  let body = value;
  let attemptedAt = from.attemptedAt;
  if (type === 'activities' && value.activityDate === undefined) {
    // Sent so that the activity can be found again if its answer is lost: not part of the hash.
    attemptedAt ??= run.now();
    body = { ...value, activityDate: stampedDate(attemptedAt) };
  }
  const intent: SyncJournalEntry = {
    type,
    key,
    state: 'sending',
    crmId: undefined,
    hash: from.hash,
    data: from.data,
    attemptedAt,
    requestId: undefined,
    runId: run.runId,
  };
  return async () => {
    const gated = await sendGated(
      run.committer,
      intent,
      resend,
      run.signal,
      (options) => run.send(kind, body, options),
      run.client,
    );
    if (gated.at === 'elsewhere') return run.elsewhere(kind, key, value, from, gated.claim);
    if (gated.at === 'journal') return run.fail(gated.error);
    if (gated.at === 'lost') return run.lostClaim(type, key);
    if (gated.at === 'unsent') return run.failed(type, key, gated.error);
    // With a shared journal, an outcome is committed only while this run's claim holds.
    const { fence, answer } = gated;
    const record = async (change: { put: SyncJournalEntry } | { remove: SyncJournalEntry }): Promise<boolean> => {
      if (fence === undefined) {
        if ('put' in change) run.committer.put(change.put, true);
        else run.committer.remove(change.remove);
        return true;
      }
      const change_ = 'put' in change ? { put: [change.put] } : { remove: [change.remove] };
      if (await run.committer.commit(change_, fence)) return true;
      run.lostClaim(type, key);
      return false;
    };
    const outcome = async (): Promise<void> => {
      if ('error' in answer) {
        const { error } = answer;
        try {
          // A bug (not a CrmError) may have come after the request went: in doubt too.
          if (error instanceof CrmError && error.sideEffects === 'none') {
            if (await record({ remove: intent })) run.failed(type, key, error);
            return;
          }
          const requestId = error instanceof CrmApiError ? error.requestId : undefined;
          if (!(await record({ put: { ...intent, state: 'inDoubt', requestId } }))) return;
        } catch (journal) {
          run.fail(journal);
          return;
        }
        run.inDoubt(type, key);
        return;
      }
      const { created } = answer;
      try {
        if (!(await record({ put: { ...intent, state: 'synced', crmId: created.id } }))) return;
      } catch (journal) {
        // The answer could not be written: the record is 'sending' in the journal, in doubt for the next run.
        run.fail(journal);
        return;
      }
      run.created(type, key, created.id);
    };
    // Buffered by the committer: written at once.
    if (fence === undefined) return await outcome();
    // A round trip to the shared journal: written while this slot sends its next create.
    run.later(outcome().catch((error: unknown) => run.fail(error)));
  };
}
