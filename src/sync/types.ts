import type { CrmError } from '../core/errors';
import type { AccountCreateInput } from '../schemas/account';
import type { ActivityRelatedToType, ActivityType } from '../schemas/activity';
import type { ContactCreateInput } from '../schemas/contact';
import type { OpportunityCreateInput } from '../schemas/opportunity';
import type { SyncGeneration } from './generation';
import type { SyncJournalTakeover, SyncType } from './journal';
import type { SyncSentFields } from './sent';

/**
 * One list of a source: an array, a generator, or any other `Iterable` or `AsyncIterable`. The
 * sync reads it once, as a stream, and keeps each record's key but never its data.
 */
export type SyncList<R> = Iterable<R> | AsyncIterable<R>;

/** An account of the source: its key in your system, and what `accounts.create()` takes. */
export interface SyncAccountRecord {
  /**
   * The record's id in your system: a non-empty string of well-formed text, at most 1,024 bytes
   * of UTF-8 (`MAX_SYNC_KEY_BYTES`), unique among the source's accounts.
   */
  readonly key: string;
  /** The account, as `accounts.create()` takes it. */
  readonly data: AccountCreateInput;
}

/** A contact of the source: its account by your key (`accountKey`), or by CRM id in `data.accountId`. */
export interface SyncContactRecord {
  /** The record's id in your system, unique among the source's contacts (the rules of {@link SyncAccountRecord.key}). */
  readonly key: string;
  /** The key of its account in the source's `accounts` (a key by the same rules); the sync sends that account's CRM id. */
  readonly accountKey?: string | undefined;
  /** The contact, as `contacts.create()` takes it. */
  readonly data: ContactCreateInput;
}

/** An opportunity of the source: its account and contact by your keys, or by CRM id in `data`. */
export interface SyncOpportunityRecord {
  /** The record's id in your system, unique among the source's opportunities (the rules of {@link SyncAccountRecord.key}). */
  readonly key: string;
  /** The key of its account in the source's `accounts`, a key by the same rules (else give `data.accountId`). */
  readonly accountKey?: string | undefined;
  /** The key of its contact in the source's `contacts`, if it has one (a key by the same rules). */
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
  /** The record's id in your system, unique among the source's activities (the rules of {@link SyncAccountRecord.key}). */
  readonly key: string;
  /** The key of its opportunity in the source's `opportunities` (a key by the same rules). */
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
   * Why: a `CrmValidationError` for a bad record (schema, a key that is empty, repeated, not
   * well-formed or over `MAX_SYNC_KEY_BYTES`, unknown parent),
   * or the request's error, whose `sideEffects` is `'none'`: nothing was done in the CRM. A bad
   * record's error has its message and issues but no stack (the engine's frames tell nothing of
   * the record), and the records that fail alike share one error object, so that a source whose
   * every record fails keeps some 100 bytes per record, not an error each.
   */
  readonly error: CrmError;
}

/**
 * A record whose create may have been done, or not: its answer was lost, or the process that sent
 * it died. It is never sent again blindly. Contacts and an opportunity's activities are looked for
 * at each run, and adopted only when no other key holds the match and no more CRM records match
 * than records in doubt look for them (README.md, "In doubt"); else they stay in doubt until
 * `sync.resolve()`. Accounts, opportunities and the activities of an account or a contact, which
 * the API cannot list, stay in doubt until `sync.resolve()` or a run with `inDoubt: 'recreate'`.
 */
export interface SyncInDoubt {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /** The request id of the answer that left it in doubt, when it carried one (give it to the CRM's support). */
  readonly requestId?: string | undefined;
  /**
   * The identifying fields of the body that was sent, to search the CRM by: an account's `name`;
   * an opportunity's `name`, `accountId` and `amount`; a contact's `email`, `firstName` and
   * `lastName`; an activity's `subject`, `type`, `activityDate` (the one the sync stamped, when
   * the source gave none) and what it relates to (`opportunityId`, or `relatedToType` and
   * `relatedToId`). A field the body did not hold is left out. Never the rest of the data, and
   * never a credential.
   */
  readonly sent: SyncSentFields;
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

/**
 * The most records of one type a run may remove (`removed: 'deactivate'`): a count (`50`), or a
 * share of the records of that type the journal holds as synced (`'5%'`, from `'0%'` to
 * `'100%'`). See {@link SyncRunOptions.maxRemoved}.
 */
export type SyncMaxRemoved = number | `${number}%`;

/**
 * A type whose removals a run did not send, or a plan says a run would not send (with
 * `removed: 'deactivate'`): none of that type's removals is sent, and the rest of the run goes on.
 * - `reason: 'limit'`: more records would be removed than `limit` ({@link SyncRunOptions.maxRemoved});
 *   give a higher `maxRemoved` (`crm sync apply --max-removed`) if that is meant.
 * - `reason: 'incomplete'`: `unusableKeys` records of the list had a key that could not be read
 *   (missing, empty, not a string, not well-formed, too long: each is in `failed`), so the list
 *   cannot tell which records it no longer holds; `maxRemoved` does not allow it: fix the keys.
 */
export interface SyncRefusedRemoval {
  /** The list. */
  readonly type: SyncType;
  /**
   * The records its list no longer holds that a run would remove: accounts and contacts it would
   * set inactive; opportunities and activities (which the API cannot remove) it would list in
   * `skipped`.
   */
  readonly wouldDeactivate: number;
  /** The records of that type the journal holds as synced, not counting those this run created. */
  readonly synced: number;
  /**
   * The most the run could remove: `maxRemoved` as a count (a share of `synced` rounded down),
   * or by default the greater of 10 and 10 % of `synced`.
   */
  readonly limit: number;
  /** Why: over the limit, or a list made incomplete by unusable keys. */
  readonly reason: 'limit' | 'incomplete';
  /** The records of the list whose key could not be read (0 for `'limit'`). */
  readonly unusableKeys: number;
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
  /** The types whose removals were not sent, and why (empty when none was refused). */
  readonly refusedRemovals: readonly SyncRefusedRemoval[];
  /**
   * Set when this run took over the tenant's lock from a run that no longer renewed it (its
   * process died or stalled past the lease): that run, and when it took the lock.
   */
  readonly lockTakenOver?: SyncJournalTakeover | undefined;
  /** Set for a run of a generation ({@link SyncRunOptions.generation}): where it left it. */
  readonly generation?: SyncGenerationReport | undefined;
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
   * With `removed: 'deactivate'`, the most records of one type the run may remove: a count
   * (`50`, a whole number from 0) or a share of that type's records the journal holds as synced
   * (`'5%'`). The run measures each type's removals before it sends any: past the limit, none of
   * that type's is sent, the rest of the run goes on, and the report lists the type in
   * `refusedRemovals`. By default, removals of more than 10 records **and** more than 10 % of
   * the synced ones are refused: a small tenant's nightly removals go through, an empty or cut
   * export never does. Give it to allow a large removal on purpose (`'100%'` allows any).
   */
  readonly maxRemoved?: SyncMaxRemoved | undefined;
  /**
   * What to do with the records in doubt that cannot be looked for (accounts, opportunities, and
   * activities of an account or a contact): `'report'` (the default) lists them until
   * `sync.resolve()` settles them; `'recreate'` creates them again in this run, accepting that
   * one may then exist twice. A contact or activity that more CRM records match than records in
   * doubt look for them is never created again: it stays in doubt.
   */
  readonly inDoubt?: 'report' | 'recreate' | undefined;
  /**
   * Joins this run to a **generation**: a named, complete pass over the tenant's source, split
   * into `slices` slices (numbered from 0) that a fleet's workers run on a shared journal
   * (`postgresJournal()`), each run given one of them as `slice`. The journal records the keys
   * each slice reads (one write a batch) and each slice that finishes with its lists read to
   * their end (a slice retried or run twice counts once; a run that fails or is aborted does not
   * finish its slice). When the last slice finishes, and the runs pass `removed: 'deactivate'`,
   * the records the journal holds that **no** slice read are removed as one run removes them,
   * under the same `maxRemoved` guard, once, by one run (a claim): the run that completed the
   * generation, whose report counts them (`deactivated`, `refusedRemovals`; the other slices'
   * count none), or, when that run stopped, the next run of the generation, which waits for a
   * removal under way to end, or for its claim's lease to lapse to take it over. A slice run after its generation completed syncs its records and removes
   * nothing. With `removed: 'keep'` a generation removes nothing. A generation that has not
   * completed 7 days after its first slice joined expires without removing anything, and a newer
   * generation of the tenant (another id, started later) supersedes an open older one.
   * `crm sync status` lists the open generations and the slices each is missing.
   *
   * Needs a journal that keeps generations (`postgresJournal()`): with `memoryJournal()`,
   * `sqliteJournal()` or a journal without `generations`, the run is refused
   * with a `CrmValidationError` (field `generation`), nothing sent; their runs of a tenant are
   * exclusive, so one run over the whole source removes with `removed: 'deactivate'` alone.
   * An id the journal holds with another `slices` count is refused the same way.
   *
   * @example
   * ```ts
   * await sync.run(slice, { removed: 'deactivate', generation: { id: '2026-12-03', slices: 12, slice: 7 } });
   * ```
   */
  readonly generation?: SyncGeneration | undefined;
}

/**
 * Where a run left its generation (see {@link SyncRunOptions.generation}):
 * - `'open'`: slices are missing (`missingSlices`), nothing removed yet;
 * - `'completed'`: this run completed it (or took over its lapsed removal) and did its removal:
 *   the report's `deactivated` and `refusedRemovals` are the generation's;
 * - `'complete'`: it was already complete (another run did its removal), or completed with
 *   `removed: 'keep'`: this run removed nothing;
 * - `'superseded'`, `'expired'`: a newer generation started, or it outlived its age: nothing removed.
 */
export interface SyncGenerationReport {
  /** The generation's id. */
  readonly id: string;
  /** This run's slice. */
  readonly slice: number;
  /** Where it stands. */
  readonly state: 'open' | 'completed' | 'complete' | 'superseded' | 'expired';
  /** The slices not finished yet, ascending (with `'open'`). */
  readonly missingSlices: readonly number[];
}

/** Options of `sync.plan()`. */
export interface SyncPlanOptions {
  /** As in {@link SyncRunOptions.removed}. */
  readonly removed?: 'keep' | 'deactivate' | undefined;
  /** As in {@link SyncRunOptions.maxRemoved}: the plan shows what a run would refuse. */
  readonly maxRemoved?: SyncMaxRemoved | undefined;
  /**
   * Called with each entry as soon as it is decided, in the order of {@link SyncPlan.entries}:
   * the plan then keeps none of them (its `entries` is empty), and holds a batch of records at a
   * time whatever the size of the source. Its `counts` (and whatever else sums up the whole
   * plan) come when `plan()` resolves. When it returns a promise, the plan reads no further
   * batch of records (500) until it settles, so that a slow writer holds back the reading, not
   * the memory; the rest of the batch's entries may be handed out meanwhile. What it throws, or
   * a promise it returns rejects with, rejects `plan()`.
   *
   * @example
   * ```ts
   * import { once } from 'node:events';
   * import { createWriteStream } from 'node:fs';
   *
   * const out = createWriteStream('plan.ndjson');
   * const { counts } = await sync.plan(source, {
   *   onEntry: (entry) => {
   *     if (!out.write(`${JSON.stringify(entry)}\n`)) return once(out, 'drain').then(() => {});
   *   },
   * });
   * ```
   */
  readonly onEntry?: ((entry: SyncPlanEntry) => void | Promise<void>) | undefined;
}

/**
 * What a run would do to a record:
 * - `create`, `update` (with `changes`), `unchanged`;
 * - `skip`: an activity that changed, which the API cannot update, or an opportunity or activity
 *   its complete list no longer holds (with `removed: 'deactivate'`);
 * - `deactivate`: an account or contact its complete list no longer holds;
 * - `blocked`: a record in doubt, or a child of one that is in doubt, failed or invalid;
 * - `invalid`: a bad record (schema, a key that is empty, repeated, not well-formed or too long,
 *   unknown parent).
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
  /**
   * One per record of the source (and per removed record), in the order the run would go; empty
   * when {@link SyncPlanOptions.onEntry} was given, which had each of them instead.
   */
  readonly entries: readonly SyncPlanEntry[];
  /** How many entries have each action (`deactivate` entries of a refused type included). */
  readonly counts: Readonly<Record<SyncPlanAction, number>>;
  /** The types whose removals a run would not send, and why (their entries are still listed). */
  readonly refusedRemovals: readonly SyncRefusedRemoval[];
}

/**
 * Where a run of the history stands:
 * - `'live'`: it has not ended, and its process still shows it is alive (it holds the tenant's
 *   lock, renewed within its lease; with a shared journal, it recorded its progress within a lease);
 * - `'finished'`: `run()` returned its report;
 * - `'stopped'`: `run()` rejected (its signal aborted, a journal or source failed);
 * - `'did-not-end'`: it never recorded an end, and its process no longer shows it is alive: it was
 *   killed (or its host lost), and what it had in flight is in doubt.
 */
export type SyncHistoryState = 'live' | 'finished' | 'stopped' | 'did-not-end';

/** A failure of a run, as its history keeps it (the first 100 of a run). */
export interface SyncHistoryFailure {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /** The error's message. */
  readonly reason: string;
  /** The request id of the answer, when it carried one. */
  readonly requestId?: string | undefined;
}

/**
 * A run in the journal's history (`sync.history()`, `crm sync status`), whoever started it:
 * its start, its end, and its counts, as last recorded (at its end, or, for a live run or one that
 * did not end, its progress: recorded every third of a lease, 10 s at most).
 */
export interface SyncHistoryRun {
  /** The run's id, as its report gives it. */
  readonly runId: string;
  /** Where it stands. */
  readonly state: SyncHistoryState;
  /** When it started (its host's clock). */
  readonly startedAt: Date;
  /** When it ended; undefined for a live run and for one that did not end. */
  readonly finishedAt: Date | undefined;
  /** When it was last recorded: its end, or its last progress. */
  readonly recordedAt: Date;
  /** Records decided so far (of every list). */
  readonly done: number;
  /** Records created. */
  readonly created: number;
  /** Records updated. */
  readonly updated: number;
  /** Records unchanged. */
  readonly unchanged: number;
  /** Records set inactive. */
  readonly deactivated: number;
  /** Records failed. */
  readonly failed: number;
  /** Records in doubt at its end (this run's and earlier ones'), or made so by it as it went. */
  readonly inDoubt: number;
  /** Records left for later. */
  readonly skipped: number;
  /** Types whose removals it refused. */
  readonly refusedRemovals: number;
  /** Its failures, the first 100. */
  readonly failures: readonly SyncHistoryFailure[];
  /** The run whose lock it took over (that run's process had stopped renewing it). */
  readonly lockTakenOver?: string | undefined;
  /** For a `'stopped'` run: the name of the error it stopped with (`AbortError`, `SyncJournalError`). */
  readonly stoppedBy?: string | undefined;
}

/** Options of `sync.history()`. */
export interface SyncHistoryOptions {
  /** How many runs, the latest started first: 1 to 1,000 (default 20). */
  readonly limit?: number | undefined;
}
