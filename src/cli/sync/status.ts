import { access } from 'node:fs/promises';
import { redactor } from '../../internal/report/redaction';
import type {
  SyncHistoryFailure,
  SyncHistoryRun,
  SyncJournal,
  SyncJournalEntry,
  SyncJournalGenerationStatus,
  SyncJournalLockHolder,
  SyncSentFields,
} from '../../sync';
import { readHistory } from '../../sync/history';
import { sentOf } from '../../sync/sent';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import type { SyncContext } from './context';
import { openJournal } from './journal';
import { sentText, valueText } from './render';

/** How many runs of each tenant status shows. */
const LAST_RUNS = 5;
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

/** A run as status shows it: the history's, its times as ISO strings. */
type RunStatus = Omit<SyncHistoryRun, 'startedAt' | 'finishedAt' | 'recordedAt'> & {
  readonly startedAt: string;
  /** null for a live run and one that did not end: said in the JSON, where undefined would leave it out. */
  readonly finishedAt: string | null;
  readonly recordedAt: string;
};

const runOf = (run: SyncHistoryRun): RunStatus => ({
  ...run,
  startedAt: run.startedAt.toISOString(),
  finishedAt: run.finishedAt?.toISOString() ?? null,
  recordedAt: run.recordedAt.toISOString(),
});

interface RecordStatus {
  readonly type: string;
  readonly key: string;
  readonly state: string;
  readonly requestId?: string;
  /** For a record in flight: the live run creating it. */
  readonly runId?: string;
  /** The identifying fields of the body sent. */
  readonly sent: SyncSentFields;
}

/**
 * One tenant of the journal: its run lock, its last runs (a live one first), the records live runs
 * have in flight, its records in doubt, and the last ended run's failures.
 */
interface TenantStatus {
  readonly tenant: string;
  readonly lock: LockStatus | null;
  /** Its open generations (a shared journal's), latest first, each with the slices it is missing. */
  readonly generations: GenerationStatus[];
  readonly runs: RunStatus[];
  readonly inFlight: RecordStatus[];
  readonly inDoubt: RecordStatus[];
  readonly failed: SyncHistoryFailure[];
}

/** An open generation as status shows it. */
interface GenerationStatus {
  readonly id: string;
  readonly slices: number;
  /** `'open'`: slices missing; `'removing'`: complete, its removal not done yet. */
  readonly state: 'open' | 'removing';
  readonly startedAt: string;
  readonly missingSlices: readonly number[];
}

const generationOf = (g: SyncJournalGenerationStatus): GenerationStatus => ({
  id: g.id,
  slices: g.slices,
  state: g.state,
  startedAt: new Date(g.startedAt).toISOString(),
  missingSlices: g.missing,
});

/** Slices as a person reads them: `3, 7, 9-11`. */
function slicesText(slices: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < slices.length; ) {
    let j = i;
    while (j + 1 < slices.length && slices[j + 1] === (slices[j] as number) + 1) j++;
    parts.push(i === j ? String(slices[i]) : `${slices[i]}-${slices[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

function generationText(g: GenerationStatus): string {
  const head = `    ${valueText(g.id)} (${g.slices} slices, started ${g.startedAt})`;
  return g.state === 'open'
    ? `${head}: missing slices ${slicesText(g.missingSlices)}; nothing is removed until they finish`
    : `${head}: complete, its removal not done yet (a live run is doing it, or the next run of the generation takes it over)`;
}

const recordOf = (entry: SyncJournalEntry, runId?: string): RecordStatus => ({
  type: entry.type,
  key: entry.key,
  // 'sending': its process died before the answer was written (or, in flight, is waiting for it).
  state: entry.state,
  ...(entry.requestId ? { requestId: entry.requestId } : {}),
  // What was sent, to search the CRM by: the identifying fields only.
  sent: sentOf(entry),
  ...(runId !== undefined ? { runId } : {}),
});

const counts = (run: RunStatus) =>
  `${run.created} created, ${run.updated} updated, ${run.unchanged} unchanged, ${run.deactivated} deactivated, ${run.failed} failed, ${run.inDoubt} in doubt, ${run.skipped} skipped`;

function runText(run: RunStatus, now: number): string {
  const id = valueText(run.runId);
  const took = run.lockTakenOver ? `; took over the lock of run ${valueText(run.lockTakenOver)}` : '';
  const recorded = `last recorded ${duration(secondsSince(Date.parse(run.recordedAt), now))} ago`;
  switch (run.state) {
    case 'live':
      return `    ${run.startedAt}  ${id}  live, ${recorded}: ${run.done} done, ${counts(run)}${took}`;
    case 'did-not-end':
      return `    ${run.startedAt}  ${id}  did not end (its process stopped; ${recorded}): ${run.done} done, ${counts(run)}${took}`;
    case 'stopped':
      return `    ${run.startedAt}  ${id}  stopped at ${run.finishedAt}${run.stoppedBy ? ` (${valueText(run.stoppedBy)})` : ''}: ${counts(run)}${took}`;
    default:
      return `    ${run.startedAt}  ${id}  ended ${run.finishedAt}: ${counts(run)}${took}`;
  }
}

function tenantText({ tenant, lock, generations, runs, inFlight, inDoubt, failed }: TenantStatus, now: number): string {
  const lines = [`tenant ${valueText(tenant)}`];
  if (lock) lines.push(lockText(lock));
  if (generations.length) lines.push(`  open generations (${generations.length}):`);
  for (const g of generations) lines.push(generationText(g));
  lines.push(runs.length ? '  last runs (latest started first):' : '  no run recorded');
  for (const run of runs) lines.push(runText(run, now));
  if (inFlight.length) lines.push(`  in flight (${inFlight.length}): a live run is waiting for their answers`);
  for (const entry of inFlight) {
    lines.push(`    ${entry.type} ${valueText(entry.key)}${sentText(entry.sent)}: run ${valueText(entry.runId ?? '')}`);
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
  // The history keeps a run's first 100 failures: its count says how many there were.
  const count = runs.find((run) => run.finishedAt !== null)?.failed ?? failed.length;
  const shown = count > failed.length ? `, the first ${failed.length} shown` : '';
  if (failed.length) lines.push(`  failed in the last ended run (${count}${shown}):`);
  for (const failure of failed) {
    lines.push(
      `    ${failure.type} ${valueText(failure.key)}${failure.requestId ? ` (request ${valueText(failure.requestId)})` : ''}: ${valueText(failure.reason, 400)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One tenant's status: a `'sending'` entry of a live run (a lock journal's) or under a live claim (a shared one's) is in flight, not in doubt. */
async function tenantStatus(journal: SyncJournal, tenant: string, now: number): Promise<TenantStatus> {
  const history = await readHistory(journal, tenant, LAST_RUNS, now);
  const runs = history.map(runOf);
  const live = new Set(history.filter((run) => run.state === 'live').map((run) => run.runId));
  const inFlight: RecordStatus[] = [];
  const inDoubt: RecordStatus[] = [];
  for (const entry of await journal.pending(tenant)) {
    if (journal.claims === undefined && entry.state === 'sending' && live.has(entry.runId))
      inFlight.push(recordOf(entry, entry.runId));
    else inDoubt.push(recordOf(entry));
  }
  // A shared journal's pending() leaves out what live claims hold: those are in flight.
  for (const held of (await journal.inFlight?.(tenant)) ?? []) inFlight.push(recordOf(held.entry, held.runId));
  const lastEnded = history.find((run) => run.finishedAt !== undefined);
  return {
    tenant,
    lock: lockOf(await journal.lockHolder?.(tenant), now),
    generations: ((await journal.generations?.open(tenant)) ?? []).map(generationOf),
    runs,
    inFlight,
    inDoubt,
    failed: [...(lastEnded?.failures ?? [])],
  };
}

/**
 * `crm sync status`: the journal's tenants, each with its run lock when one is held (its run and
 * age), its last runs (live, ended, stopped, or killed: "did not end") and their counts, the
 * records live runs have in flight, every record in doubt with its request id, and every record
 * the last ended run failed with its reason. Reads the journal only: nothing is sent, and no
 * credential of the CRM is needed.
 */
export async function runStatus({ io, values, help, target }: SyncContext): Promise<number> {
  if (target.kind === 'sqlite') {
    try {
      await access(target.path);
    } catch {
      throw new UsageError(`No journal at ${target.path}: crm sync apply makes one`, 'crm sync status --help');
    }
  }
  // Read only, as its help says: a user who may read the journal but not write it reads it, and
  // no -wal or -shm file of this user's is left for the next apply to trip on.
  const { journal, close } = await openJournal(target, { readOnly: true, help });
  // Nothing the journal holds is a credential; the connection string's password is masked all the same.
  const redact = redactor(target.kind === 'postgres' ? target.secrets : []);
  try {
    await journal.open();
    const asText = io.stdout.isTTY === true && values.json !== true;
    for (const tenant of (await journal.tenants?.()) ?? []) {
      const now = Date.now();
      const status = await tenantStatus(journal, tenant, now);
      await write(io.stdout, redact(asText ? tenantText(status, now) : `${jsonText(status)}\n`));
    }
  } finally {
    await close();
  }
  return EXIT.ok;
}
