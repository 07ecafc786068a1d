import type { SyncJournalEntry } from './journal';
import { kindOf } from './kinds';
import { drain } from './other-runs';
import type { Run } from './run';
import { lookFor } from './settle';

// The settle step of a run: the records in doubt looked for at the run's start, and again after
// the list that left them so, then adopted, created again or left in doubt. The look-ups and the
// rules that match are settle.ts, which the send step imports (create.ts stamps an activity's
// date by it); acting on what they found needs the run's state (run.ts, which imports the send
// step), so it lives here rather than in settle.ts, where it would close an import cycle.

/**
 * Settles records in doubt, as settle.ts looks for them: found, adopted; looked for and not
 * found, created again from what was sent. One that cannot be looked for is created again
 * with `inDoubt: 'recreate'`; one whose look-up failed, or that more CRM records match than
 * keys look for them, stays in doubt.
 */
export async function settle(
  run: Run,
  pending: readonly SyncJournalEntry[],
  mode: 'report' | 'recreate',
): Promise<void> {
  if (pending.length === 0) return;
  const found = await lookFor(pending, {
    crm: run.settings.crm,
    journal: run.settings.journal,
    tenant: run.settings.tenant,
    signal: run.options.signal,
    call: (send) => run.call(send),
    stopping: () => run.stopping(),
    fail: (error) => run.fail(error),
  });
  if (run.stopping()) return;
  for (const entry of pending) {
    const kind = kindOf(entry.type);
    run.settled.add(`${entry.type}\u0000${entry.key}`);
    const outcome = found.get(entry);
    if (typeof outcome === 'object') {
      run.committer.put({
        ...entry,
        state: 'synced',
        crmId: outcome.id,
        requestId: undefined,
        runId: run.settings.runId,
      });
      run.ids.remember(entry.type, entry.key, outcome.id);
      run.tally.count(entry.type, 'created');
      continue;
    }
    if (outcome === undefined || outcome === 'ambiguous' || (outcome === 'unsearchable' && mode === 'report')) {
      continue; // stays in doubt
    }
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(entry.data) as Record<string, unknown>;
    } catch {
      continue;
    }
    run.create(kind, entry.key, value, { hash: entry.hash, data: entry.data, attemptedAt: entry.attemptedAt }, true);
  }
  await drain(run);
  await run.committer.flush();
}

/** Looks again for the records of `type` this run left in doubt, after the settle delay. */
export async function settleLate(run: Run, type: 'contacts' | 'activities'): Promise<void> {
  if (run.newlyInDoubt[type] === 0 || run.stopping()) return;
  run.newlyInDoubt[type] = 0;
  await run.pause(run.settings.settleMs);
  if (run.stopping()) return;
  const pending = await run.settings.journal.pending(run.settings.tenant);
  await settle(
    run,
    pending.filter((e) => e.type === type),
    'report',
  );
}
