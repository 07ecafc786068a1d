import type { CrmError } from '../core/errors';
import type { AccountCreateInput } from '../schemas/account';
import type { ActivityRelatedToType, ActivityType } from '../schemas/activity';
import type { ContactCreateInput } from '../schemas/contact';
import type { OpportunityCreateInput } from '../schemas/opportunity';
import type { SyncType } from './journal';

/**
 * One list of a source: an array, a generator, or any other `Iterable` or `AsyncIterable`. The
 * sync reads it once, as a stream, and keeps each record's key but never its data.
 */
export type SyncList<R> = Iterable<R> | AsyncIterable<R>;

/** An account of the source: its key in your system, and what `accounts.create()` takes. */
export interface SyncAccountRecord {
  /** The record's id in your system: a non-empty string, unique among the source's accounts. */
  readonly key: string;
  /** The account, as `accounts.create()` takes it. */
  readonly data: AccountCreateInput;
}

/** A contact of the source: its account by your key (`accountKey`), or by CRM id in `data.accountId`. */
export interface SyncContactRecord {
  /** The record's id in your system: a non-empty string, unique among the source's contacts. */
  readonly key: string;
  /** The key of its account in the source's `accounts`; the sync sends that account's CRM id. */
  readonly accountKey?: string | undefined;
  /** The contact, as `contacts.create()` takes it. */
  readonly data: ContactCreateInput;
}

/** An opportunity of the source: its account and contact by your keys, or by CRM id in `data`. */
export interface SyncOpportunityRecord {
  /** The record's id in your system: a non-empty string, unique among the source's opportunities. */
  readonly key: string;
  /** The key of its account in the source's `accounts` (else give `data.accountId`). */
  readonly accountKey?: string | undefined;
  /** The key of its contact in the source's `contacts`, if it has one. */
  readonly contactKey?: string | undefined;
  /** The opportunity, as `opportunities.create()` takes it; `accountId` only without `accountKey`. */
  readonly data: Omit<OpportunityCreateInput, 'accountId'> & { readonly accountId?: string | undefined };
}

/** What an activity of the source holds: `activities.create()`'s input, its opportunity given by key or id. */
export interface SyncActivityData {
  /** The kind of activity. */
  readonly type: ActivityType;
  /** Its subject: 1 to 255 characters. */
  readonly subject: string;
  /** The id of its owner. */
  readonly ownerId?: string | undefined;
  /** Free text, up to 2,000 characters. */
  readonly description?: string | undefined;
  /**
   * When it happened. Without one, the sync sends the time of its first attempt, so that an
   * activity whose create answer was lost can be found again.
   */
  readonly activityDate?: Date | string | undefined;
  /** Its opportunity's CRM id, only without `opportunityKey`. */
  readonly opportunityId?: string | undefined;
  /** What it relates to, as `activities.create()` takes it, only without `opportunityKey`. */
  readonly relatedToType?: ActivityRelatedToType | undefined;
  /** The id of what it relates to, with `relatedToType`. */
  readonly relatedToId?: string | undefined;
}

/** An activity of the source: its opportunity by your key (`opportunityKey`), or by CRM id in `data`. */
export interface SyncActivityRecord {
  /** The record's id in your system: a non-empty string, unique among the source's activities. */
  readonly key: string;
  /** The key of its opportunity in the source's `opportunities`. */
  readonly opportunityKey?: string | undefined;
  /** The activity. The API cannot update one: a changed activity is skipped. */
  readonly data: SyncActivityData;
}

/**
 * What to sync: up to four lists, synced parents first (accounts, contacts, opportunities,
 * activities). A list that is not given is left alone, and removes nothing.
 */
export interface SyncSource {
  /** The accounts. */
  readonly accounts?: SyncList<SyncAccountRecord> | undefined;
  /** The contacts. */
  readonly contacts?: SyncList<SyncContactRecord> | undefined;
  /** The opportunities. */
  readonly opportunities?: SyncList<SyncOpportunityRecord> | undefined;
  /** The activities. */
  readonly activities?: SyncList<SyncActivityRecord> | undefined;
}

/** How often records were created, updated, left unchanged and deactivated. */
export interface SyncCounts {
  /** Records created in the CRM, or found there after a lost answer. */
  readonly created: number;
  /** Records updated (PUT with the fields that changed). */
  readonly updated: number;
  /** Records whose data had not changed since they were last synced: nothing sent. */
  readonly unchanged: number;
  /** Accounts and contacts set to `status: 'inactive'` because their complete list no longer holds them. */
  readonly deactivated: number;
}

/** A record the run could not sync: a bad record (nothing of it sent), or a refused request. */
export interface SyncFailure {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /**
   * Why: a `CrmValidationError` for a bad record (schema, empty or repeated key, unknown parent),
   * or the request's error, whose `sideEffects` is `'none'`: nothing was done in the CRM. A bad
   * record's error has its message and issues but no stack (the engine's frames tell nothing of
   * the record), and the records that fail alike share one error object, so that a source whose
   * every record fails keeps some 100 bytes per record, not an error each.
   */
  readonly error: CrmError;
}

/**
 * A record whose create may have been done, or not: its answer was lost, or the process that sent
 * it died. It is never sent again blindly. Contacts and activities are looked for at each run;
 * accounts and opportunities, which the API cannot list, stay in doubt until
 * `sync.resolve()` or a run with `inDoubt: 'recreate'`.
 */
export interface SyncInDoubt {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /** The request id of the answer that left it in doubt, when it carried one (give it to the CRM's support). */
  readonly requestId?: string | undefined;
}

/** A record the run left for later, and why. */
export interface SyncSkipped {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /**
   * Why: an activity that changed (the API cannot update one), a child whose parent failed or is
   * in doubt (it goes once the parent is known), or an opportunity or activity its complete list
   * no longer holds (the API cannot remove one).
   */
  readonly reason: string;
}

/** What `sync.run()` did. */
export interface SyncReport extends SyncCounts {
  /** This run's id, also written in the journal beside what it wrote. */
  readonly runId: string;
  /** Records that failed; their journal entries are as before (a bad record's are untouched). */
  readonly failed: readonly SyncFailure[];
  /** Every record in doubt after the run, this run's and earlier ones'. */
  readonly inDoubt: readonly SyncInDoubt[];
  /** Records left for later. */
  readonly skipped: readonly SyncSkipped[];
  /** The counts of each list. */
  readonly byType: Readonly<Record<SyncType, SyncCounts>>;
}

/**
 * Where a run stands, given to `onProgress` at most 4 times a second; a list's end is told then
 * too, or, when it came too soon after the call before, by the run's one last call.
 */
export interface SyncProgress {
  /** The list being synced. */
  readonly type: SyncType;
  /** Records of that list decided and done. */
  readonly done: number;
  /** Of those, created. */
  readonly created: number;
  /** Of those, updated. */
  readonly updated: number;
  /** Of those, unchanged. */
  readonly unchanged: number;
  /** Of those, failed. */
  readonly failed: number;
  /** Of those, in doubt. */
  readonly inDoubt: number;
  /** Records done per second, over the last seconds. */
  readonly perSecond: number;
  /**
   * Seconds until the list is done at that pace (which, with `throttle: 'auto'`, is the server's):
   * known when the list's size is (an array, or anything with a `length` or `size`), else undefined.
   */
  readonly etaSeconds: number | undefined;
}

/** Options of `sync.run()`. */
export interface SyncRunOptions {
  /**
   * Stops the run: no request is started after it aborts, those in flight are answered and
   * written down, and `run()` rejects with the signal's reason. A call not yet sent (waiting for
   * its `apiKey` function, a `maxConcurrency` slot, its turn at the pace, a retry) is abandoned,
   * so `run()` settles within the longest request `timeout` in flight, its lock released. A list
   * cut short removes nothing.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Called with where the run stands, at most 4 times a second, and at most once more at the end
   * of the run, to tell where it ended (see {@link SyncProgress}).
   */
  readonly onProgress?: ((progress: SyncProgress) => void) | undefined;
  /** Requests in flight at most. Default 8. The client's `throttle` paces them. */
  readonly concurrency?: number | undefined;
  /**
   * What to do with records the journal knows that their complete list no longer holds:
   * `'keep'` (the default) leaves them; `'deactivate'` sets accounts and contacts to
   * `status: 'inactive'` and reports opportunities and activities in `skipped`.
   */
  readonly removed?: 'keep' | 'deactivate' | undefined;
  /**
   * What to do with accounts and opportunities in doubt: `'report'` (the default) lists them
   * until `sync.resolve()` settles them; `'recreate'` creates them again in this run, accepting
   * that one may then exist twice.
   */
  readonly inDoubt?: 'report' | 'recreate' | undefined;
}

/** Options of `sync.plan()`. */
export interface SyncPlanOptions {
  /** As in {@link SyncRunOptions.removed}. */
  readonly removed?: 'keep' | 'deactivate' | undefined;
}

/**
 * What a run would do to a record:
 * - `create`, `update` (with `changes`), `unchanged`;
 * - `skip`: an activity that changed, which the API cannot update, or an opportunity or activity
 *   its complete list no longer holds (with `removed: 'deactivate'`);
 * - `deactivate`: an account or contact its complete list no longer holds;
 * - `blocked`: a record in doubt, or a child of one that is in doubt, failed or invalid;
 * - `invalid`: a bad record (schema, empty or repeated key, unknown parent).
 */
export type SyncPlanAction = 'create' | 'update' | 'unchanged' | 'skip' | 'deactivate' | 'blocked' | 'invalid';

/** A field that changed: its value as last synced, and in the source now. */
export interface SyncFieldChange {
  /** As last synced (undefined when it was not sent then). */
  readonly from: unknown;
  /** In the source now. */
  readonly to: unknown;
}

/** One record of a plan. */
export interface SyncPlanEntry {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /** What a run would do. */
  readonly action: SyncPlanAction;
  /** For `update` and a changed activity's `skip`: each changed field. */
  readonly changes?: Readonly<Record<string, SyncFieldChange>> | undefined;
  /**
   * For `invalid`, `blocked` and `skip`: why, in the words a run would use (a run's `failed`
   * error message, or its `skipped` reason).
   */
  readonly reason?: string | undefined;
}

/** What `sync.plan()` found: an entry per record, and how many of each action. */
export interface SyncPlan {
  /** One per record of the source (and per removed record), in the order the run would go. */
  readonly entries: readonly SyncPlanEntry[];
  /** How many entries have each action. */
  readonly counts: Readonly<Record<SyncPlanAction, number>>;
}
