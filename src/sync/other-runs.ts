import { decide } from './decide';
import type { SyncJournalClaim, SyncType } from './journal';
import type { Kind } from './kinds';
import { IN_DOUBT } from './parent-ids';
import type { Decided, Run } from './run';
import type { Committer } from './sender';

// With a shared journal (a fleet of workers on one tenant), a record may be another run's: a
// parent it is creating, a create whose claim it holds. Each step meets that in its own way (the
// read step waits for a parent, the decide and send steps defer a record), and all of them wait
// and look again the same way, so that waiting lives here once; with it the drain that ends a
// list, which is where the deferred records are decided again.

/**
 * With a shared journal: waits for other runs' claims on `keys` to end (each commits its
 * outcome, or its lease runs out), bounded by the run's signal.
 */
export async function othersDone(run: Run, type: SyncType, keys: readonly string[]): Promise<void> {
  const claims = run.committer.claims;
  if (!claims || run.plan) return;
  const look = looks(claims.leaseMs);
  while (!run.stopping()) {
    const held = await claims.held(run.settings.tenant, run.settings.runId, type, keys);
    if (held.size === 0) return;
    await run.pause(look());
  }
}

/**
 * How long a run waits before each new look at keys other runs hold: 20 ms for the first ten
 * looks, then 100 ms (a tenth of a short lease). Their creates end within a request or two: at
 * a list's end, overlapping workers wait on each other's last creates, and a look every 100 ms
 * left a worker idle some 50 ms past them at every list, and the fleet's last run as long past
 * the last create (W8). A wait that lasts (a stalled worker, up to its lease) is looked at
 * every 100 ms; a look is one index read of all the keys waited for.
 */
function looks(leaseMs: number): () => number {
  const most = Math.min(100, leaseMs / 10);
  let looked = 0;
  return () => (looked++ < 10 ? Math.min(20, most) : most);
}

/**
 * Waits until every job pushed is answered and every record deferred (Run.deferred) is decided
 * again. Those whose other run is done are decided as the journal now holds them (a create
 * whose claim comes back held again is deferred again); the others are looked at again, each
 * look one index read of all of them.
 */
export async function drain(run: Run): Promise<void> {
  for (;;) {
    await run.sender.idle();
    await outcomesWritten(run);
    if (run.deferred.length === 0 || run.stopping()) return;
    const deferred = run.deferred;
    run.deferred = [];
    try {
      await afterOthers(run, deferred);
    } catch (error) {
      run.fail(error);
    }
  }
}

/** Resolves once every outcome being written (Run.outcomes) is written, or has failed the run. */
export async function outcomesWritten(run: Run): Promise<void> {
  while (run.outcomes.size > 0) await Promise.all(run.outcomes);
}

/** Records other runs were creating: each decided again from what the journal holds once its run is done. */
async function afterOthers(run: Run, deferred: readonly { readonly kind: Kind; readonly d: Decided }[]): Promise<void> {
  const claims = run.committer.claims as NonNullable<Committer['claims']>;
  const byType = new Map<SyncType, { kind: Kind; d: Decided }[]>();
  for (const item of deferred) {
    const group = byType.get(item.kind.type) ?? [];
    byType.set(item.kind.type, group);
    group.push(item);
  }
  for (const [type, group] of byType) {
    for (let i = 0; i < group.length; i += 1000) {
      let waiting = group.slice(i, i + 1000);
      const look = looks(claims.leaseMs);
      while (waiting.length > 0 && !run.stopping()) {
        const held = await claims.held(
          run.settings.tenant,
          run.settings.runId,
          type,
          waiting.map((item) => item.d.key),
        );
        const done = waiting.filter((item) => !held.has(item.d.key));
        waiting = waiting.filter((item) => held.has(item.d.key));
        if (done.length > 0) {
          const entries = await run.settings.journal.get(
            run.settings.tenant,
            type,
            done.map((item) => item.d.key),
          );
          for (const { kind, d } of done) {
            const entry = entries.get(d.key);
            if (entry === undefined || entry.state === 'sending') {
              // Gone (its create was refused), or left 'sending' by a run that ended: the claim decides.
              const { value, hash, json } = d.canonical;
              run.create(kind, d.key, value, { hash, data: json, attemptedAt: entry?.attemptedAt }, false);
            } else {
              decide(run, kind, d, entry);
            }
          }
        }
        if (waiting.length > 0) await run.pause(look());
      }
    }
  }
}

/** A create another run holds or has done: its outcome is counted here as the journal holds it. */
export function elsewhere(
  run: Run,
  kind: Kind,
  d: Decided,
  claim: Exclude<SyncJournalClaim, { outcome: 'claimed' }>,
): void {
  if (claim.outcome === 'held') {
    run.deferred.push({ kind, d });
    return;
  }
  const { entry } = claim;
  if (entry.state === 'sending' || entry.state === 'inDoubt') {
    run.ids.remember(kind.type, d.key, IN_DOUBT);
    run.tally.count(kind.type, 'inDoubt');
    if (kind.type === 'contacts' || kind.type === 'activities') run.newlyInDoubt[kind.type]++;
    return;
  }
  decide(run, kind, d, entry);
}
