// A run's record in the journal's history: written by CrmSync.run() whoever calls it, at its start,
// as it goes and at its end, and read back as SyncHistoryRun (sync.history(), crm sync status).
import type { SyncJournal, SyncJournalRun, SyncType } from './journal';
import type { SyncHistoryFailure, SyncHistoryRun, SyncHistoryState, SyncProgress, SyncReport } from './types';

/** The lease a journal states nowhere (a lock journal's default): a record older is of a stopped run. */
const DEFAULT_LEASE_MS = 30_000;
/** Failures a run's record keeps, so that a run of many failures does not make a large record. */
const FAILURES_KEPT = 100;

/** What a record's summary holds, as JSON. Fields read back tolerantly: `crm sync apply` of 0.1 wrote `failed` as a list. */
interface Summary {
  done: number;
  created: number;
  updated: number;
  unchanged: number;
  deactivated: number;
  failed: number;
  inDoubt: number;
  skipped: number;
  refusedRemovals: number;
  failures: SyncHistoryFailure[];
  outcome?: 'finished' | 'stopped';
  lockTakenOver?: string;
  stoppedBy?: string;
}

const empty = (): Summary => ({
  done: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  deactivated: 0,
  failed: 0,
  inDoubt: 0,
  skipped: 0,
  refusedRemovals: 0,
  failures: [],
});

/** How often a run records its progress: every third of the lease by which a reader judges it alive, 10 s at most. */
const recordEvery = (journal: SyncJournal): number =>
  Math.max(100, Math.min(10_000, (journal.claims?.leaseMs ?? DEFAULT_LEASE_MS) / 3));

/**
 * Records one run in its journal's history. The start is written before the run sends anything
 * (a journal that cannot write it fails the run there); progress and the end are written as they
 * can be: a failure to record them never fails a run whose records are in the journal.
 */
export class RunRecorder {
  readonly #journal: SyncJournal;
  readonly #tenant: string;
  readonly #runId: string;
  readonly #startedAt: number;
  readonly #progress = new Map<SyncType, SyncProgress>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The record being written: one at a time, in order, the end last. */
  #writing: Promise<void> = Promise.resolve();
  #ended = false;

  constructor(journal: SyncJournal, tenant: string, runId: string) {
    this.#journal = journal;
    this.#tenant = tenant;
    this.#runId = runId;
    this.#startedAt = Date.now();
  }

  /** Writes the run's start, then its progress every {@link recordEvery}. */
  async start(): Promise<void> {
    if (!this.#journal.addRun) return;
    await this.#write(empty(), undefined);
    // Written at every tick, moved or not: a shared journal's reader judges a run alive by the
    // age of its record, so a run waiting on a slow list or server records that it is alive.
    this.#timer = setInterval(() => this.#queue(this.#sofar(), undefined), recordEvery(this.#journal));
    this.#timer.unref?.();
  }

  /** Takes a progress report (onProgress's), written with the next record. */
  readonly progress = (progress: SyncProgress): void => {
    this.#progress.set(progress.type, progress);
  };

  /** Writes the run's end: its report, or the error it stopped with (only its name: a message may hold anything). */
  async end(outcome: { readonly report: SyncReport } | { readonly error: unknown }): Promise<void> {
    if (!this.#journal.addRun || this.#ended) return;
    this.#ended = true;
    clearInterval(this.#timer);
    const summary: Summary =
      'report' in outcome
        ? { ...summaryOf(outcome.report), outcome: 'finished' }
        : {
            ...this.#sofar(),
            outcome: 'stopped',
            stoppedBy: outcome.error instanceof Error ? outcome.error.name.slice(0, 80) : typeof outcome.error,
          };
    this.#queue(summary, Date.now());
    await this.#writing;
  }

  #sofar(): Summary {
    const summary = empty();
    for (const p of this.#progress.values()) {
      summary.done += p.done;
      summary.created += p.created;
      summary.updated += p.updated;
      summary.unchanged += p.unchanged;
      summary.failed += p.failed;
      summary.inDoubt += p.inDoubt;
    }
    return summary;
  }

  #queue(summary: Summary, finishedAt: number | undefined): void {
    this.#writing = this.#writing.then(() => this.#write(summary, finishedAt)).catch(() => {});
  }

  async #write(summary: Summary, finishedAt: number | undefined): Promise<void> {
    const recordedAt = Date.now();
    const run: SyncJournalRun = {
      runId: this.#runId,
      startedAt: this.#startedAt,
      finishedAt,
      recordedAt,
      summary: JSON.stringify(summary),
    };
    await this.#journal.addRun?.(this.#tenant, run);
  }
}

function summaryOf(report: SyncReport): Summary {
  return {
    done: report.created + report.updated + report.unchanged + report.failed.length,
    created: report.created,
    updated: report.updated,
    unchanged: report.unchanged,
    deactivated: report.deactivated,
    failed: report.failed.length,
    inDoubt: report.inDoubt.length,
    skipped: report.skipped.length,
    refusedRemovals: report.refusedRemovals.length,
    failures: report.failed.slice(0, FAILURES_KEPT).map(({ type, key, error }) => {
      const requestId = (error as { requestId?: unknown }).requestId;
      return {
        type,
        key,
        reason: error.message.slice(0, 400),
        ...(typeof requestId === 'string' ? { requestId } : {}),
      };
    }),
    ...(report.lockTakenOver ? { lockTakenOver: report.lockTakenOver.runId } : {}),
  };
}

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? value
    : Array.isArray(value)
      ? value.length
      : 0;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A summary as written, by this version or an earlier one (whose `crm sync apply` kept `failed` as a list). */
function parsed(summary: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(summary);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    // A summary another tool wrote: the record's times still say when it ran.
    return {};
  }
}

function failuresOf(value: unknown): SyncHistoryFailure[] {
  if (!Array.isArray(value)) return [];
  const failures: SyncHistoryFailure[] = [];
  for (const item of value.slice(0, FAILURES_KEPT)) {
    const f = item as Record<string, unknown> | null;
    if (f === null || typeof f !== 'object' || typeof f.type !== 'string' || typeof f.key !== 'string') continue;
    const requestId = text(f.requestId);
    failures.push({
      type: f.type as SyncType,
      key: f.key,
      reason: text(f.reason) ?? '',
      ...(requestId !== undefined ? { requestId } : {}),
    });
  }
  return failures;
}

/**
 * Whether a run that has not ended is alive. With a lock journal, by the tenant's lock: its run,
 * renewed within its lease (by this clock and the holder's: shown, nothing is decided by it). With
 * a shared journal (no lock), by the age of its record against the claims' lease.
 */
type Liveness = (run: SyncJournalRun) => boolean;

async function livenessOf(journal: SyncJournal, tenant: string, now: number): Promise<Liveness> {
  if (journal.claims === undefined && journal.lockHolder) {
    const holder = await journal.lockHolder(tenant);
    return (run) =>
      holder !== undefined &&
      holder.runId === run.runId &&
      (holder.renewedAt === undefined || now - holder.renewedAt <= (holder.leaseMs ?? DEFAULT_LEASE_MS));
  }
  const lease = journal.claims?.leaseMs ?? DEFAULT_LEASE_MS;
  // A database's own clock when the journal gives it: hosts' wall clocks are never compared (STYLE.md 25).
  return (run) => (run.ageMs ?? now - run.recordedAt) <= lease;
}

/** A record of the journal as a {@link SyncHistoryRun}. */
function historyRunOf(run: SyncJournalRun, live: Liveness): SyncHistoryRun {
  const s = parsed(run.summary);
  const state: SyncHistoryState =
    run.finishedAt !== undefined
      ? s.outcome === 'stopped'
        ? 'stopped'
        : 'finished'
      : live(run)
        ? 'live'
        : 'did-not-end';
  const failures = failuresOf(Array.isArray(s.failed) ? s.failed : s.failures);
  const lockTakenOver = text(s.lockTakenOver) ?? text((s.lockTakenOver as { runId?: unknown } | undefined)?.runId);
  const stoppedBy = text(s.stoppedBy);
  return {
    runId: run.runId,
    state,
    startedAt: new Date(run.startedAt),
    finishedAt: run.finishedAt === undefined ? undefined : new Date(run.finishedAt),
    recordedAt: new Date(run.recordedAt),
    done: count(s.done),
    created: count(s.created),
    updated: count(s.updated),
    unchanged: count(s.unchanged),
    deactivated: count(s.deactivated),
    failed: count(s.failed),
    inDoubt: count(s.inDoubt),
    skipped: count(s.skipped),
    refusedRemovals: count(s.refusedRemovals),
    failures,
    ...(lockTakenOver !== undefined ? { lockTakenOver } : {}),
    ...(stoppedBy !== undefined ? { stoppedBy } : {}),
  };
}

/** The tenant's last `limit` runs, the latest started first, each with its state judged now. */
export async function readHistory(
  journal: SyncJournal,
  tenant: string,
  limit: number,
  now: number,
): Promise<SyncHistoryRun[]> {
  if (!journal.runs) return [];
  const runs = await journal.runs(tenant, limit);
  const live = await livenessOf(journal, tenant, now);
  return runs.map((run) => historyRunOf(run, live));
}
