import type { CrmError } from '../core/errors';
import { Failures } from './failures';
import type { SyncType } from './journal';
import type {
  SyncCounts,
  SyncInDoubt,
  SyncPlanAction,
  SyncPlanEntry,
  SyncProgress,
  SyncRefusedRemoval,
  SyncReport,
  SyncSkipped,
} from './types';

interface TypeTally {
  created: number;
  updated: number;
  unchanged: number;
  deactivated: number;
  failed: number;
  inDoubt: number;
  done: number;
  /** The list's size, when it tells it. */
  total: number | undefined;
  startedAt: number;
}

const PROGRESS_EVERY_MS = 250;

/**
 * What a run did, counted as it goes, and its progress reports: at most 4 a second (a call at
 * least 250 ms after the one before, by the injected clock), and one last call at the end of the
 * run when the state a list ended with could not be told in time.
 */
export class Tally {
  readonly #types = new Map<SyncType, TypeTally>();
  readonly #failed = new Failures();
  readonly skipped: SyncSkipped[] = [];
  readonly #onProgress: ((progress: SyncProgress) => void) | undefined;
  readonly #now: () => number;
  #reportedAt = Number.NEGATIVE_INFINITY;
  /** A list that ended too soon after the last call to be told: told by the run's last call, unless a later call comes first. */
  #untold: SyncType | undefined;
  /** What `onProgress` threw: the run stops with it (a record's outcome is never blamed for it). */
  failure: { error: unknown } | undefined;

  constructor(onProgress: ((progress: SyncProgress) => void) | undefined, now: () => number) {
    this.#onProgress = onProgress;
    this.#now = now;
  }

  of(type: SyncType): TypeTally {
    let tally = this.#types.get(type);
    if (!tally) {
      tally = {
        created: 0,
        updated: 0,
        unchanged: 0,
        deactivated: 0,
        failed: 0,
        inDoubt: 0,
        done: 0,
        total: undefined,
        startedAt: this.#now(),
      };
      this.#types.set(type, tally);
    }
    return tally;
  }

  begin(type: SyncType, total: number | undefined): void {
    const tally = this.of(type);
    tally.total = total;
    tally.startedAt = this.#now();
  }

  count(type: SyncType, outcome: 'created' | 'updated' | 'unchanged' | 'deactivated' | 'inDoubt'): void {
    const tally = this.of(type);
    tally[outcome]++;
    if (outcome !== 'deactivated') this.#done(type, tally);
  }

  fail(type: SyncType, key: string, error: CrmError): void {
    this.#failed.add(type, key, error);
    const tally = this.of(type);
    tally.failed++;
    this.#done(type, tally);
  }

  skip(type: SyncType, key: string, reason: string, counted = true): void {
    this.skipped.push({ type, key, reason });
    if (counted) this.#done(type, this.of(type));
  }

  #done(type: SyncType, tally: TypeTally): void {
    tally.done++;
    if (this.#onProgress && this.#now() - this.#reportedAt >= PROGRESS_EVERY_MS) this.#report(type);
  }

  /**
   * The end of `type`'s list: reported now if the pace allows, else by the run's last call
   * (`report()`), unless a later call tells a later state first.
   */
  progress(type: SyncType): void {
    if (!this.#onProgress) return;
    if (this.#now() - this.#reportedAt >= PROGRESS_EVERY_MS) this.#report(type);
    else this.#untold = type;
  }

  #report(type: SyncType): void {
    const now = this.#now();
    this.#reportedAt = now;
    this.#untold = undefined;
    const t = this.of(type);
    const seconds = (now - t.startedAt) / 1000;
    const perSecond = seconds > 0 ? t.done / seconds : 0;
    if (this.failure) return;
    try {
      this.#call({
        type,
        done: t.done,
        created: t.created,
        updated: t.updated,
        unchanged: t.unchanged,
        failed: t.failed,
        inDoubt: t.inDoubt,
        perSecond,
        etaSeconds:
          t.total === undefined ? undefined : perSecond > 0 ? Math.max(0, t.total - t.done) / perSecond : undefined,
      });
    } catch (error) {
      this.failure = { error };
    }
  }

  #call(progress: SyncProgress): void {
    (this.#onProgress as (progress: SyncProgress) => void)(progress);
  }

  report(runId: string, inDoubt: readonly SyncInDoubt[], refusedRemovals: readonly SyncRefusedRemoval[]): SyncReport {
    if (this.#untold !== undefined) {
      this.#report(this.#untold);
      // As any call's: an onProgress that throws fails the run (whose journal is written by now).
      if (this.failure) throw this.failure.error;
    }
    const byType = {} as Record<SyncType, SyncCounts>;
    const sum = { created: 0, updated: 0, unchanged: 0, deactivated: 0 };
    for (const type of ['accounts', 'contacts', 'opportunities', 'activities'] as const) {
      const t = this.#types.get(type);
      const counts = {
        created: t?.created ?? 0,
        updated: t?.updated ?? 0,
        unchanged: t?.unchanged ?? 0,
        deactivated: t?.deactivated ?? 0,
      };
      byType[type] = counts;
      sum.created += counts.created;
      sum.updated += counts.updated;
      sum.unchanged += counts.unchanged;
      sum.deactivated += counts.deactivated;
    }
    return { runId, ...sum, failed: this.#failed.list(), inDoubt, skipped: this.skipped, byType, refusedRemovals };
  }
}

/** A plan's counts, and its entries: kept, or handed out (`onEntry`) as they are decided. */
export class PlanTally {
  readonly entries: SyncPlanEntry[] = [];
  readonly #onEntry: ((entry: SyncPlanEntry) => void | Promise<void>) | undefined;
  /** What `onEntry` returned that has not settled yet: the plan waits for it before it reads on. */
  #pending: Promise<unknown>[] = [];
  /** What `onEntry` threw, or a promise of it rejected with: the plan rejects with the first. */
  #failure: { error: unknown } | undefined;
  readonly counts: Record<SyncPlanAction, number> = {
    create: 0,
    update: 0,
    unchanged: 0,
    skip: 0,
    deactivate: 0,
    blocked: 0,
    invalid: 0,
  };

  constructor(onEntry?: (entry: SyncPlanEntry) => void | Promise<void>) {
    this.#onEntry = onEntry;
  }

  add(
    type: SyncType,
    key: string,
    action: SyncPlanAction,
    { changes, reason }: Pick<SyncPlanEntry, 'changes' | 'reason'> = {},
  ): void {
    this.counts[action]++;
    // Without the fields it has no value for: an entry as JSON (crm sync plan) names only what it says.
    const entry: SyncPlanEntry = {
      type,
      key,
      action,
      ...(changes && { changes }),
      ...(reason !== undefined && { reason }),
    };
    if (!this.#onEntry) {
      this.entries.push(entry);
      return;
    }
    if (this.#failure) return;
    try {
      const returned: unknown = this.#onEntry(entry);
      if (returned !== null && typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
        // Caught at once: a rejection met before the plan waits is its failure, never an unhandled one.
        this.#pending.push(
          Promise.resolve(returned).catch((error: unknown) => {
            this.#failure ??= { error };
          }),
        );
      }
    } catch (error) {
      this.#failure ??= { error };
    }
  }

  /** Resolves once what `onEntry` returned has settled; rejects with what it threw, if it did. */
  async handedOut(): Promise<void> {
    while (this.#pending.length > 0) {
      const pending = this.#pending;
      this.#pending = [];
      await Promise.all(pending);
    }
    if (this.#failure) throw this.#failure.error;
  }
}
