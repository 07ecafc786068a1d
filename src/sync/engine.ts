import { createRunOf } from './create-run';
import { decideBatch } from './decide';
import { KINDS } from './kinds';
import { drain, outcomesWritten } from './other-runs';
import { BATCH, batchesOf, readBatch, SourceFailure, sizeOf } from './read';
import { generationEnd, removed } from './remove';
import { type EngineSettings, Run } from './run';
import { Sender } from './sender';
import { sentOf } from './sent';
import { settle, settleLate } from './settle-run';
import type { PlanTally } from './tally';
import type { SyncInDoubt, SyncList, SyncPlan, SyncPlanOptions, SyncReport, SyncRunOptions, SyncSource } from './types';

/**
 * One run (or plan) over a source: settles the records in doubt, then reads each list as a
 * stream, parents first, deciding each record against its journal entry, and sends what must be
 * sent through the {@link Sender}; a create's intent is written at its send gate, as it goes (gate.ts).
 *
 * The engine only puts the steps of a record in their order; each step is a module: read
 * (read.ts), decide (decide.ts), send (create.ts, create-run.ts, update.ts, sender.ts, gate.ts),
 * settle (settle-run.ts, settle.ts), remove (remove.ts), and the waits on other runs of a shared
 * journal (other-runs.ts), all over the run's state (run.ts).
 */
export class Engine {
  readonly #run: Run;

  /** `plan`: false for a run; for a plan, where its entries go (`onEntry`), or true to keep them. */
  constructor(settings: EngineSettings, options: SyncRunOptions, plan: boolean | Pick<SyncPlanOptions, 'onEntry'>) {
    this.#run = new Run(settings, options, plan, createRunOf);
  }

  async run(source: SyncSource): Promise<SyncReport> {
    const run = this.#run;
    const { signal } = run.options;
    const onAbort = () => run.fail(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await settle(run, await run.settings.journal.pending(run.settings.tenant), run.options.inDoubt ?? 'report');
      await this.#lists(source);
      await settleLate(run, 'activities');
      if (run.settings.generation && !run.plan) await generationEnd(run, run.settings.generation);
    } catch (error) {
      run.fail(error instanceof SourceFailure ? error.error : error);
    }
    run.sender.stop();
    await run.sender.idle();
    await outcomesWritten(run);
    run.committer.end();
    signal?.removeEventListener('abort', onAbort);
    // The outcomes and removed intents of the requests answered, whatever stopped the run.
    await run.committer.flush();
    if (run.fatal) throw run.fatal.error;
    const inDoubt: SyncInDoubt[] = (await run.settings.journal.pending(run.settings.tenant)).map((e) =>
      e.requestId === undefined
        ? { type: e.type, key: e.key, sent: sentOf(e) }
        : { type: e.type, key: e.key, requestId: e.requestId, sent: sentOf(e) },
    );
    const report = run.tally.report(run.settings.runId, inDoubt, run.refusedRemovals);
    return run.settings.generation ? { ...report, generation: run.settings.generation.report() } : report;
  }

  async plan(source: SyncSource): Promise<SyncPlan> {
    const run = this.#run;
    const plan = run.plan as PlanTally;
    try {
      await this.#lists(source);
      await plan.handedOut();
    } catch (error) {
      throw error instanceof SourceFailure ? error.error : error;
    }
    return { entries: plan.entries, counts: plan.counts, refusedRemovals: run.refusedRemovals };
  }

  async #lists(source: SyncSource): Promise<void> {
    const run = this.#run;
    for (const kind of KINDS) {
      const list = source[kind.type] as SyncList<unknown> | undefined;
      if (list === undefined || list === null) continue;
      if (run.stopping()) return;
      const seen = run.ids.keysOf(kind.type);
      run.tally.begin(kind.type, sizeOf(list));
      for await (const batch of batchesOf(list, run.options.signal)) {
        if (run.stopping()) return;
        await decideBatch(run, kind, await readBatch(run, kind, batch, seen));
        if (!run.plan) await run.sender.room(BATCH);
        else await run.plan.handedOut();
      }
      if (run.stopping()) return;
      // The list was read to its end: it is complete, and may remove (a generation's, at its end).
      if (run.settings.generation) run.settings.generation.listRead(kind.type, run.unusableKeys.get(kind.type) ?? 0);
      else if (run.options.removed === 'deactivate') await removed(run, kind, seen);
      await drain(run);
      seen.done();
      if (run.stopping()) return;
      await run.committer.flush();
      // Contacts left in doubt are looked for before their opportunities go, which then need not wait.
      if (kind.type === 'contacts' && !run.plan) await settleLate(run, 'contacts');
      run.tally.progress(kind.type);
    }
  }
}
