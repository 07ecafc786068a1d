import type { CrmClient } from 'crm-integration-sdk';
import { CrmValidationError } from '../core/errors';
import { Engine } from './engine';
import { generationOf } from './generation';
import { GenerationRun } from './generation-run';
import { RunRecorder, readHistory } from './history';
import type { SyncJournal, SyncType } from './journal';
import { keyProblem } from './keys';
import { SYNC_TYPES } from './kinds';
import { REMEMBER_PACE_MS, recallPace } from './remembered-pace';
import { isMaxRemoved } from './remove';
import {
  adoptionProblem,
  checkResolutions,
  claimProblem,
  resolveMany,
  type SyncResolution,
  settledEntry,
} from './resolve-many';
import type { EngineSettings } from './run';
import type {
  SyncHistoryOptions,
  SyncHistoryRun,
  SyncPlan,
  SyncPlanOptions,
  SyncReport,
  SyncRunOptions,
  SyncSource,
} from './types';

/** Options of `new CrmSync()`. */
export interface CrmSyncOptions {
  /** Where the sync keeps what it synced: `sqliteJournal(path)` for a job, `memoryJournal()` for tests. */
  readonly journal: SyncJournal;
  /**
   * How long (ms) a run waits, at its end, before it looks again for the contacts and activities
   * it left in doubt, so that a create the server was still doing can be found. Default 2,000.
   */
  readonly settleMs?: number | undefined;
  /**
   * How long (ms) the journal remembers the rate `throttle: 'auto'` learned for the tenant's key,
   * after the run that last used it: the next run (a night later, in a new process) starts at
   * it rather than cold. For a client that paces alone (a store remembers the pace itself:
   * `redisStore()`'s `rememberMs`), with a journal that keeps paces (the SDK's do). The rate is
   * kept per key fingerprint (never the key) and base URL: a rotated key, or another base URL,
   * starts cold. A starting point, not a ceiling: the first refusal corrects it, and the pace
   * climbs past it after a quiet time. A whole number from 0 (nothing remembered) to a year.
   * Default: 7 days.
   */
  readonly rememberPaceMs?: number | undefined;
}

/** Options of `sync.resolve()`. */
export interface SyncResolveOptions {
  /**
   * Settle a record that is not in doubt as absent (`crmId` null): the journal forgets a record
   * it holds as synced or deactivated, and the next run creates it again, a second one unless the
   * CRM's is gone. Without it, that is refused. Default false.
   */
  readonly force?: boolean | undefined;
}

function rejectInput(field: string, message: string): never {
  throw new CrmValidationError([{ field, path: [field], message }]);
}

function checkRunOptions(options: SyncRunOptions): void {
  const { concurrency, removed, maxRemoved, inDoubt, onProgress, signal } = options;
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && concurrency >= 1 && concurrency <= 256)) {
    rejectInput('concurrency', 'A whole number from 1 to 256');
  }
  if (removed !== undefined && removed !== 'keep' && removed !== 'deactivate')
    rejectInput('removed', "'keep' or 'deactivate'");
  if (maxRemoved !== undefined && !isMaxRemoved(maxRemoved)) {
    rejectInput(
      'maxRemoved',
      "A count (a whole number from 0, such as 50) or a share from '0%' to '100%' (such as '5%')",
    );
  }
  if (inDoubt !== undefined && inDoubt !== 'report' && inDoubt !== 'recreate')
    rejectInput('inDoubt', "'report' or 'recreate'");
  if (onProgress !== undefined && typeof onProgress !== 'function') rejectInput('onProgress', 'A function');
  if (signal !== undefined && !(signal instanceof AbortSignal)) rejectInput('signal', 'An AbortSignal');
}

function checkSource(source: SyncSource): void {
  if (source === null || typeof source !== 'object')
    rejectInput('source', 'An object of lists: accounts, contacts, opportunities, activities');
  for (const [name, list] of Object.entries(source)) {
    if (!SYNC_TYPES.includes(name as SyncType)) {
      rejectInput(name, 'Unknown list: accounts, contacts, opportunities and activities are synced');
    }
    if (list === undefined) continue;
    // A string is iterable too, by characters: never what a list means.
    const iterable =
      typeof list !== 'string' &&
      list !== null &&
      (typeof (list as Iterable<unknown>)[Symbol.iterator] === 'function' ||
        typeof (list as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function');
    if (!iterable) rejectInput(name, 'An Iterable or AsyncIterable of { key, data } records');
  }
}

/**
 * Loads records of your system into the CRM, and keeps them in step on every later run, without
 * ever creating one twice: a write-ahead journal records each create before it is sent, so a
 * crash or a lost answer leaves a record *in doubt*, never duplicated (README.md, "Loading and
 * syncing data"). Each record is known by its key in your system; a re-run sends only what
 * changed.
 *
 * @example
 * ```ts
 * import { CrmSync, sqliteJournal } from 'crm-integration-sdk/sync';
 *
 * const sync = new CrmSync(crm, { journal: sqliteJournal('./acme.sync.db') });
 * const report = await sync.run({
 *   accounts: customers.map((c) => ({ key: c.erpId, data: { name: c.name, industry: c.sector } })),
 *   contacts: people.map((p) => ({ key: p.id, accountKey: p.customerId, data: { email: p.email, firstName: p.first } })),
 * });
 * console.log(report.created, report.updated, report.failed, report.inDoubt);
 * ```
 */
export class CrmSync {
  readonly #crm: CrmClient;
  readonly #journal: SyncJournal;
  readonly #tenant: string;
  readonly #settleMs: number;
  readonly #rememberPaceMs: number;

  /**
   * @param crm - The client to send through, with its tenant, pace (`throttle`) and retries.
   * @param options - The journal, and the settle delay.
   * Throws `CrmValidationError` when the client has no tenant or an option is invalid.
   */
  constructor(crm: CrmClient, options: CrmSyncOptions) {
    if (typeof crm?.tenantId !== 'string' || crm.tenantId === '') {
      rejectInput('crm', 'A CrmClient with a tenant: the journal keys every record by it');
    }
    const journal = options?.journal;
    if (!journal || typeof journal.write !== 'function' || typeof journal.pending !== 'function') {
      rejectInput('journal', 'A SyncJournal: sqliteJournal(path), memoryJournal(), or one of your own');
    }
    const settleMs = options.settleMs ?? 2000;
    if (!(Number.isFinite(settleMs) && settleMs >= 0 && settleMs <= 600_000)) {
      rejectInput('settleMs', 'Milliseconds from 0 to 600,000');
    }
    const rememberPaceMs = options.rememberPaceMs ?? REMEMBER_PACE_MS;
    if (!(Number.isSafeInteger(rememberPaceMs) && rememberPaceMs >= 0 && rememberPaceMs <= 365 * 24 * 3_600_000)) {
      rejectInput('rememberPaceMs', 'Milliseconds, a whole number from 0 to a year');
    }
    this.#crm = crm;
    this.#journal = journal;
    this.#tenant = crm.tenantId;
    this.#settleMs = settleMs;
    this.#rememberPaceMs = rememberPaceMs;
  }

  /**
   * Syncs `source` into the CRM: settles records left in doubt by earlier runs, then creates the
   * new records, updates the changed ones (with only their changed fields), leaves the unchanged
   * ones alone (sending nothing), and, with `removed: 'deactivate'`, deactivates the accounts and
   * contacts their complete list no longer holds, when there are not more of a type than
   * `maxRemoved` allows (else none of that type's, listed in `refusedRemovals`).
   *
   * Resolves to a {@link SyncReport}; a bad record or a refused request is a `failed` entry and
   * the run goes on. Rejects only when it cannot go on: the journal cannot be opened or written,
   * another live run holds the tenant's lock, or this run lost it (`SyncJournalError`
   * `'locked'`), the signal aborted, a list threw, or the run's first call was refused 401 or 403;
   * it rejects after the requests in flight have answered (a call not yet sent is abandoned), with
   * the journal consistent and the tenant's lock released. A lock left by a run that died is
   * taken over once it has gone unrenewed for its lease (the wait ends at the signal), and the
   * report says so (`lockTakenOver`).
   *
   * @example
   * ```ts
   * const report = await sync.run(source, { removed: 'deactivate', signal: AbortSignal.timeout(3_600_000) });
   * for (const { type, key, requestId } of report.inDoubt) console.warn('in doubt', type, key, requestId);
   * ```
   */
  async run(source: SyncSource, options: SyncRunOptions = {}): Promise<SyncReport> {
    checkRunOptions(options);
    checkSource(source);
    const generation = generationOf(this.#journal, options.generation);
    const shared = this.#journal.claims !== undefined;
    if (shared && options.removed === 'deactivate' && generation === undefined) {
      rejectInput(
        'removed',
        "'keep' with a shared journal (one with claims, such as the Postgres journal), or a generation: each worker's run is given a slice, never the complete source, so a key it does not hold may be in another's slice; join the slices into a generation ({ generation: { id, slices, slice } }), which removes once every slice has read its part",
      );
    }
    options.signal?.throwIfAborted();
    const opened = await this.#open();
    // Joined before the run is in the history or sends anything: a refused generation sends nothing.
    const settings: EngineSettings =
      generation && this.#journal.generations
        ? {
            ...opened,
            generation: await GenerationRun.join(
              this.#journal.generations,
              this.#tenant,
              opened.runId,
              generation,
              options.removed === 'deactivate',
            ),
          }
        : opened;
    // A shared journal's runs go at once, each key claimed as it is created; others are exclusive.
    const lock = shared
      ? undefined
      : await this.#journal.lock(this.#tenant, settings.runId, options.signal ? { signal: options.signal } : {});
    const recorder = new RunRecorder(this.#journal, this.#tenant, settings.runId);
    let keepPace: (() => Promise<void>) | undefined;
    try {
      // In the history before anything is sent, whoever runs it; its end once it has one.
      await recorder.start();
      // The pace the tenant's last run learned, where the client paces alone (issue 48).
      keepPace = await recallPace(this.#crm, this.#journal, this.#tenant, this.#rememberPaceMs);
      // A lock lost (this process stalled past its lease, and another run took it over) stops the run as its signal would.
      const signal =
        lock?.signal && options.signal
          ? AbortSignal.any([options.signal, lock.signal])
          : (lock?.signal ?? options.signal);
      const { onProgress } = options;
      const recording: SyncRunOptions = {
        ...options,
        ...(signal ? { signal } : {}),
        onProgress: (progress) => {
          recorder.progress(progress);
          onProgress?.(progress);
        },
      };
      const done = await new Engine(settings, recording, false).run(source);
      const report = lock?.takenOver ? { ...done, lockTakenOver: lock.takenOver } : done;
      await recorder.end({ report });
      return report;
    } catch (error) {
      await recorder.end({ error });
      throw error;
    } finally {
      await keepPace?.();
      await lock?.release();
    }
  }

  /**
   * What `run()` would do with `source`, sending no request at all: an entry per record with
   * its action (and, for an update, each changed field), and the count of each action. The
   * plan keeps its entries for you to read in `entries`; for a large source, give `onEntry` to
   * have each as it is decided instead, and the plan's memory stays bounded.
   *
   * @example
   * ```ts
   * const plan = await sync.plan(source, { removed: 'deactivate' });
   * console.log(plan.counts); // { create: 12, update: 3, unchanged: 9870, ... }
   *
   * // A million records: each entry as it is decided, the counts at the end.
   * const { counts } = await sync.plan(source, {
   *   onEntry: ({ type, key, action }) => {
   *     if (action !== 'unchanged') console.log(action, type, key);
   *   },
   * });
   * ```
   */
  async plan(source: SyncSource, options: SyncPlanOptions = {}): Promise<SyncPlan> {
    const { removed, maxRemoved, onEntry } = options;
    checkRunOptions({ removed, maxRemoved });
    if (onEntry !== undefined && typeof onEntry !== 'function') rejectInput('onEntry', 'A function');
    checkSource(source);
    const settings = await this.#open();
    return new Engine(settings, { removed, maxRemoved }, onEntry ? { onEntry } : true).plan(source);
  }

  /**
   * The CRM id the journal holds for the record of `type` with `key`, or undefined (never
   * synced, or in doubt).
   *
   * @example
   * ```ts
   * const accountId = await sync.idOf('accounts', 'ERP-1001');
   * ```
   */
  async idOf(type: SyncType, key: string): Promise<string | undefined> {
    checkKey(type, key);
    await this.#journal.open();
    const entry = (await this.#journal.get(this.#tenant, type, [key])).get(key);
    return entry && (entry.state === 'synced' || entry.state === 'deactivated') ? entry.crmId : undefined;
  }

  /**
   * Settles a record in doubt by hand, and resolves when the journal holds it: `crmId` is the
   * record you found in the CRM (the next run compares with what was sent), `null` says it is
   * not there (the next run creates it). Accounts and opportunities need this, since the API
   * cannot list them; it may also map any key to a record the CRM already holds. `null` for a
   * record that is synced (or deactivated), not in doubt, is refused with a `CrmValidationError`
   * naming its state, unless `{ force: true }`: the next run would create it a second time.
   *
   * @example
   * ```ts
   * for (const { type, key, sent } of report.inDoubt) {
   *   const found = await lookUpByHand(type, sent); // your CRM's UI, its support, an export
   *   await sync.resolve(type, key, found?.id ?? null);
   * }
   * ```
   */
  resolve(type: SyncType, key: string, crmId: string | null, options?: SyncResolveOptions): Promise<void>;
  /**
   * Settles many records in doubt at once, in one journal change: all of them, or, when any is
   * refused, none (rejecting with a `CrmValidationError` whose `issues` name each refused record
   * by its index in `records`: `path: [index, field]`). Refused: a record that is not in doubt
   * (one the journal does not hold, or holds as synced or deactivated; unless `{ force: true }`);
   * a CRM id the journal already maps to another key of the type, or one given to two keys (never,
   * even with force); a record given twice. A record the journal already holds under the very id
   * given is accepted and left as it is, so a file of the ids the journal maps may be given back.
   *
   * @example
   * ```ts
   * const report = await sync.run(source);
   * const found = await findInCrm(report.inDoubt); // by each record's `sent` fields
   * await sync.resolve(report.inDoubt.map(({ type, key }) => ({ type, key, crmId: found.get(key) ?? null })));
   * ```
   */
  resolve(records: readonly SyncResolution[], options?: SyncResolveOptions): Promise<void>;
  async resolve(
    first: SyncType | readonly SyncResolution[],
    second?: string | SyncResolveOptions,
    crmId?: string | null,
    options: SyncResolveOptions = {},
  ): Promise<void> {
    if (Array.isArray(first)) return this.#resolveMany(first, (second as SyncResolveOptions | undefined) ?? {});
    return this.#resolveOne(first as SyncType, second as string, crmId as string | null, options);
  }

  async #resolveMany(records: readonly SyncResolution[], options: SyncResolveOptions): Promise<void> {
    checkResolutions(records);
    const force = options?.force ?? false;
    if (typeof force !== 'boolean') rejectInput('force', 'true or false');
    const settings = await this.#open();
    // Under the tenant's lock, as one record is (see #resolveOne): no run writes between the checks and the change.
    const lock =
      this.#journal.claims === undefined ? await this.#journal.lock(this.#tenant, settings.runId) : undefined;
    try {
      await resolveMany(this.#journal, this.#tenant, settings.runId, records, force);
    } finally {
      await lock?.release();
    }
  }

  async #resolveOne(type: SyncType, key: string, crmId: string | null, options: SyncResolveOptions): Promise<void> {
    checkKey(type, key);
    if (crmId !== null && (typeof crmId !== 'string' || crmId === '')) {
      rejectInput('crmId', 'The CRM id found (a non-empty string), or null when the record is not in the CRM');
    }
    const force = options?.force ?? false;
    if (typeof force !== 'boolean') rejectInput('force', 'true or false');
    const settings = await this.#open();
    // As run(): a shared journal's runs take no lock, so it would keep none of them out; and the
    // Postgres journal's lock holds a pool client for as long as it is held, so that the reads
    // and the write below waited for a second one (a pool of one client, or as many resolves at
    // once as clients, never settled).
    const lock =
      this.#journal.claims === undefined ? await this.#journal.lock(this.#tenant, settings.runId) : undefined;
    try {
      const claimed = await claimProblem(this.#journal, this.#tenant, settings.runId, type, key);
      if (claimed !== undefined) rejectInput('key', claimed);
      const entry = (await this.#journal.get(this.#tenant, type, [key])).get(key);
      if (crmId === null) {
        if ((entry?.state === 'synced' || entry?.state === 'deactivated') && !force)
          refuseForgetting(type, key, entry.state);
        await this.#journal.write(this.#tenant, { remove: [{ type, key }] });
        return;
      }
      // As resolve(records): two keys on one CRM record, a later deactivation of one removes the other's.
      const problem = await adoptionProblem(this.#journal, this.#tenant, type, key, crmId);
      if (problem !== undefined) rejectInput('crmId', problem);
      await this.#journal.write(this.#tenant, { put: [settledEntry(type, key, crmId, entry, settings.runId)] });
    } finally {
      await lock?.release();
    }
  }

  /**
   * The tenant's runs in the journal's history, the latest started first, whoever started them
   * (`run()` in any process, `crm sync apply`): each with its start, its end, its counts, and
   * where it stands (`'live'`, `'finished'`, `'stopped'`, or `'did-not-end'` for a run that was
   * killed). A journal that keeps no history (one of your own without `addRun`) gives none.
   *
   * @param options - `limit`: how many runs, 1 to 1,000 (default 20).
   * @example
   * ```ts
   * const [last] = await sync.history({ limit: 1 });
   * if (last?.state === 'did-not-end') console.log(`run ${last.runId} was killed: see crm sync status`);
   * ```
   */
  async history(options: SyncHistoryOptions = {}): Promise<SyncHistoryRun[]> {
    const limit = options?.limit ?? 20;
    if (!(Number.isSafeInteger(limit) && limit >= 1 && limit <= 1000))
      rejectInput('limit', 'A whole number from 1 to 1,000');
    await this.#journal.open();
    return readHistory(this.#journal, this.#tenant, limit, Date.now());
  }

  async #open(): Promise<EngineSettings> {
    await this.#journal.open();
    return {
      crm: this.#crm,
      journal: this.#journal,
      tenant: this.#tenant,
      runId: `run_${globalThis.crypto.randomUUID()}`,
      settleMs: this.#settleMs,
      now: () => Date.now(),
    };
  }

  /** Shows the tenant, never the client's credentials. */
  toJSON(): { tenantId: string } {
    return { tenantId: this.#tenant };
  }
}

/** A record the CRM holds, by the journal: settled as absent, the next run would create a second one. */
function refuseForgetting(type: SyncType, key: string, state: 'synced' | 'deactivated'): never {
  const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
  rejectInput(
    'crmId',
    `${type} ${shown} is ${state}, not in doubt: the CRM holds it, and settled as absent it would be created again by the next run, a duplicate. Pass { force: true } (crm sync resolve --force) to forget it anyway`,
  );
}

function checkKey(type: SyncType, key: string): void {
  if (!SYNC_TYPES.includes(type)) rejectInput('type', "'accounts', 'contacts', 'opportunities' or 'activities'");
  const problem = keyProblem(key);
  if (problem !== undefined) rejectInput('key', `A key: ${problem}`);
}
