// What `crm sync plan` writes, apart from the command that opens its sources and journal: the plan
// streams out as the engine decides it (never held whole), and how a line looks, which names it
// keeps and what --summary leaves out change together, not with the flags' parsing.
import type { CrmSync, SyncMaxRemoved, SyncPlan, SyncPlanEntry, SyncSource } from '../../sync';
import { jsonText, write } from '../output';
import type { SyncIo } from './context';
import { labelOf, ndjsonLine, planLine, planSummary, refusalText, SUMMARY_ENTRIES } from './render';

/**
 * The most record names a plan holds to show beside its creates. Each is dropped once its entry
 * is written (an invalid record's is kept), so a list's map holds about a batch of them, plus its
 * invalid records: this bounds it whatever a source does (past it, creates show their key alone).
 */
const LABELS = 100_000;

/** Keeps in `names` the name of each record read, by its key, for the plan's line of its create. */
export const rememberLabel =
  (names: Map<string, string>) =>
  (record: Record<string, unknown>): void => {
    const label = labelOf(record.data);
    // The first record of a key keeps it: a repeat of the key is invalid, and shows no name.
    if (label !== undefined && typeof record.key === 'string' && names.size < LABELS && !names.has(record.key)) {
      names.set(record.key, label);
    }
  };

/** Writes each entry of the plan as the engine decides it, then the counts: a million rows in bounded memory. */
export async function printPlan(
  io: SyncIo,
  sync: CrmSync,
  source: SyncSource,
  options: {
    readonly removed: 'keep' | 'deactivate' | undefined;
    readonly maxRemoved: SyncMaxRemoved | undefined;
    readonly summary: boolean;
  },
  asText: boolean,
  labels: ReadonlyMap<string, Map<string, string>>,
  redact: (value: unknown) => unknown,
): Promise<SyncPlan['counts']> {
  const { removed, maxRemoved, summary } = options;
  let lines = '';
  // --summary: the first few entries of each action, then only the counts.
  const shownOf = new Map<string, number>();
  const onEntry = (entry: SyncPlanEntry): Promise<void> | undefined => {
    if (summary) {
      const shown = shownOf.get(entry.action) ?? 0;
      if (shown >= SUMMARY_ENTRIES || entry.action === 'unchanged') {
        // Not shown: its name is dropped as a shown entry's is (an invalid repeat's is kept).
        if (entry.action !== 'invalid') labels.get(entry.type)?.delete(entry.key);
        return undefined;
      }
      shownOf.set(entry.action, shown + 1);
    }
    if (asText) {
      const names = labels.get(entry.type);
      const line = planLine(entry, names?.get(entry.key));
      // An invalid entry may be a repeat of a key whose first record is still being decided.
      if (entry.action !== 'invalid') names?.delete(entry.key);
      if (line !== undefined) lines += `${line}\n`;
    } else {
      lines += ndjsonLine(redact(entry));
    }
    if (lines.length <= 64 * 1024) return undefined;
    const text = lines;
    lines = '';
    // The plan reads on once stdout has taken it: a slow reader holds back the plan, not memory.
    return write(io.stdout, text);
  };
  const plan = await sync.plan(source, {
    ...(removed ? { removed } : {}),
    ...(maxRemoved !== undefined ? { maxRemoved } : {}),
    onEntry,
  });
  if (!asText) {
    const last = redact({ counts: plan.counts, refusedRemovals: plan.refusedRemovals });
    await write(io.stdout, `${lines}${jsonText(last)}\n`);
    return plan.counts;
  }
  if (summary) {
    for (const [action, shown] of shownOf) {
      const more = (plan.counts[action as keyof SyncPlan['counts']] ?? 0) - shown;
      if (more > 0) lines += `  … and ${more.toLocaleString('en-US')} more: ${action}\n`;
    }
  }
  for (const refusal of plan.refusedRemovals) {
    lines += `! ${refusal.type} removals: apply refuses them all: ${refusalText(refusal, maxRemoved !== undefined)}\n`;
  }
  await write(io.stdout, `${lines}${planSummary(plan.counts)}\n`);
  return plan.counts;
}
