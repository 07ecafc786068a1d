import { access } from 'node:fs/promises';
import {
  type SyncJournalEntry,
  type SyncJournalLockHolder,
  type SyncJournalRun,
  type SyncSentFields,
  sqliteJournal,
} from '../../sync';
import { sentOf } from '../../sync/sent';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import type { SyncContext } from './context';
import { sentText, valueText } from './render';

/** How many runs of each tenant status shows. */
const LAST_RUNS = 5;

interface RunFailure {
  readonly type: string;
  readonly key: string;
  readonly reason?: string;
  readonly requestId?: string;
}

/** A run of the log as status shows it: its summary (written by `crm sync apply`) read back. */
function runOf(run: SyncJournalRun): Record<string, unknown> & { failed: RunFailure[] } {
  let summary: Record<string, unknown> = {};
  try {
    summary = JSON.parse(run.summary) as Record<string, unknown>;
  } catch {
    // A summary another tool wrote: its id and time still say when it ran.
  }
  const failed = Array.isArray(summary.failed) ? (summary.failed as RunFailure[]) : [];
  return { ...summary, runId: run.runId, finishedAt: new Date(run.finishedAt).toISOString(), failed };
}

/**
 * A tenant's run lock as status shows it. Its ages are this clock's now less the holder's stamps:
 * for a person to read (a holder's clock may be off), never what decides a takeover (the next run
 * watches the lock's renewals on its own clock for the lease).
 */
interface LockStatus {
  readonly runId: string;
  readonly takenAt: string;
  readonly ageSeconds: number;
  readonly renewedAt: string | undefined;
  readonly renewedSecondsAgo: number | undefined;
  readonly leaseSeconds: number | undefined;
}

const secondsSince = (at: number, now: number): number => Math.max(0, Math.round((now - at) / 1000));

function lockOf(holder: SyncJournalLockHolder | undefined, now: number): LockStatus | null {
  if (!holder) return null;
  const { runId, takenAt, renewedAt, leaseMs } = holder;
  return {
    runId,
    takenAt: new Date(takenAt).toISOString(),
    ageSeconds: secondsSince(takenAt, now),
    renewedAt: renewedAt === undefined ? undefined : new Date(renewedAt).toISOString(),
    renewedSecondsAgo: renewedAt === undefined ? undefined : secondsSince(renewedAt, now),
    leaseSeconds: leaseMs === undefined ? undefined : leaseMs / 1000,
  };
}

/** A duration for a person: `1 h 2 min`, `3 min 4 s`, `5 s`. */
function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h ? `${h} h ${m} min` : m ? `${m} min ${s} s` : `${s} s`;
}

function lockText(lock: LockStatus): string {
  const renewed = lock.renewedSecondsAgo === undefined ? '' : `, last renewed ${duration(lock.renewedSecondsAgo)} ago`;
  const lease =
    lock.leaseSeconds === undefined
      ? ''
      : `; a lock not renewed for ${duration(lock.leaseSeconds)} is taken over by the next run`;
  return `  locked by run ${valueText(lock.runId)} for ${duration(lock.ageSeconds)} (since ${lock.takenAt}${renewed})${lease}`;
}

/** One tenant of the journal: its run lock, its last runs, its records in doubt, and the last run's failures. */
interface TenantStatus {
  readonly tenant: string;
  readonly lock: LockStatus | null;
  readonly runs: ReturnType<typeof runOf>[];
  readonly inDoubt: { type: string; key: string; state: string; requestId?: string; sent: SyncSentFields }[];
  readonly failed: RunFailure[];
}

const inDoubtOf = (entry: SyncJournalEntry) => ({
  type: entry.type,
  key: entry.key,
  // 'sending': its process died before the answer was written.
  state: entry.state,
  ...(entry.requestId ? { requestId: entry.requestId } : {}),
  // What was sent, to search the CRM by: the identifying fields only.
  sent: sentOf(entry),
});

const n = (value: unknown) => (typeof value === 'number' ? value : 0);

/** A run's takeover of a dead run's lock, as its summary keeps it. */
const tookOver = (taken: unknown): string => {
  const runId = (taken as { runId?: unknown } | undefined)?.runId;
  return typeof runId === 'string' ? `; took over the lock of run ${valueText(runId)}` : '';
};

function tenantText({ tenant, lock, runs, inDoubt, failed }: TenantStatus): string {
  const lines = [`tenant ${valueText(tenant)}`];
  if (lock) lines.push(lockText(lock));
  lines.push(runs.length ? '  last runs:' : '  no run recorded');
  for (const run of runs) {
    lines.push(
      `    ${run.finishedAt}  ${run.runId}  ${n(run.created)} created, ${n(run.updated)} updated, ${n(run.unchanged)} unchanged, ${n(run.deactivated)} deactivated, ${run.failed.length} failed, ${n(run.inDoubt)} in doubt, ${n(run.skipped)} skipped${tookOver(run.lockTakenOver)}`,
    );
  }
  lines.push(
    inDoubt.length
      ? `  in doubt (${inDoubt.length}): find each in the CRM by what was sent, then crm sync resolve (--match <export.csv> settles many at once)`
      : '  nothing in doubt',
  );
  for (const entry of inDoubt) {
    const why = entry.state === 'sending' ? 'its process stopped before the answer' : 'its answer was lost';
    lines.push(
      `    ${entry.type} ${valueText(entry.key)}${sentText(entry.sent)}${entry.requestId ? ` (request ${valueText(entry.requestId)})` : ''}: ${why}`,
    );
  }
  if (failed.length) lines.push(`  failed in the last run (${failed.length}):`);
  for (const failure of failed) {
    lines.push(
      `    ${failure.type} ${valueText(failure.key)}${failure.requestId ? ` (request ${valueText(failure.requestId)})` : ''}: ${valueText(failure.reason ?? '', 400)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `crm sync status`: the journal's tenants, each with its run lock when one is held (its run and
 * age), its last runs and their counts, every record in doubt with its request id, and every
 * record the last run failed with its reason. Reads the journal only: nothing is sent, and no
 * credential is needed.
 */
export async function runStatus({ io, values, journalPath }: SyncContext): Promise<number> {
  try {
    await access(journalPath);
  } catch {
    throw new UsageError(`No journal at ${journalPath}: crm sync apply makes one`, 'crm sync status --help');
  }
  // Read only, as its help says: a user who may read the journal but not write it reads it, and
  // no -wal or -shm file of this user's is left for the next apply to trip on.
  const journal = sqliteJournal(journalPath, { readOnly: true });
  try {
    await journal.open();
    const asText = io.stdout.isTTY === true && values.json !== true;
    for (const tenant of (await journal.tenants?.()) ?? []) {
      const runs = ((await journal.runs?.(tenant, LAST_RUNS)) ?? []).map(runOf);
      const status: TenantStatus = {
        tenant,
        lock: lockOf(await journal.lockHolder?.(tenant), Date.now()),
        runs,
        inDoubt: (await journal.pending(tenant)).map(inDoubtOf),
        failed: runs[0]?.failed ?? [],
      };
      await write(io.stdout, asText ? tenantText(status) : `${jsonText(status)}\n`);
    }
  } finally {
    await journal.close();
  }
  return EXIT.ok;
}
