import { access } from 'node:fs/promises';
import { type SyncJournalEntry, type SyncJournalRun, sqliteJournal } from '../../sync';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import type { SyncContext } from './context';
import { valueText } from './render';

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

/** One tenant of the journal: its last runs, its records in doubt, and the last run's failures. */
interface TenantStatus {
  readonly tenant: string;
  readonly runs: ReturnType<typeof runOf>[];
  readonly inDoubt: { type: string; key: string; state: string; requestId?: string }[];
  readonly failed: RunFailure[];
}

const inDoubtOf = (entry: SyncJournalEntry) => ({
  type: entry.type,
  key: entry.key,
  // 'sending': its process died before the answer was written.
  state: entry.state,
  ...(entry.requestId ? { requestId: entry.requestId } : {}),
});

const n = (value: unknown) => (typeof value === 'number' ? value : 0);

function tenantText({ tenant, runs, inDoubt, failed }: TenantStatus): string {
  const lines = [`tenant ${valueText(tenant)}`];
  lines.push(runs.length ? '  last runs:' : '  no run recorded');
  for (const run of runs) {
    lines.push(
      `    ${run.finishedAt}  ${run.runId}  ${n(run.created)} created, ${n(run.updated)} updated, ${n(run.unchanged)} unchanged, ${n(run.deactivated)} deactivated, ${run.failed.length} failed, ${n(run.inDoubt)} in doubt, ${n(run.skipped)} skipped`,
    );
  }
  lines.push(
    inDoubt.length
      ? `  in doubt (${inDoubt.length}): find each in the CRM, then crm sync resolve`
      : '  nothing in doubt',
  );
  for (const entry of inDoubt) {
    const why = entry.state === 'sending' ? 'its process stopped before the answer' : 'its answer was lost';
    lines.push(
      `    ${entry.type} ${valueText(entry.key)}${entry.requestId ? ` (request ${valueText(entry.requestId)})` : ''}: ${why}`,
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
 * `crm sync status`: the journal's tenants, each with its last runs and their counts, every record
 * in doubt with its request id, and every record the last run failed with its reason. Reads the
 * journal only: nothing is sent, and no credential is needed.
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
