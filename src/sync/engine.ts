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
 */
export class Engine {
  readonly #run: Run;

  /** `plan`: false for a run; for a plan, where its entries go (`onEntry`), or true to keep them. */
  constructor(settings: EngineSettings, options: SyncRunOptions, plan: boolean | Pick<SyncPlanOptions, 'onEntry'>) {
    this.#run = new Run(settings, options, plan, createRunOf);
  }

  async run(source: SyncSource): Promise<SyncReport> {
    const { signal } = this.#run.options;
    const onAbort = () => this.#run.fail(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await settle(
        this.#run,
        await this.#run.settings.journal.pending(this.#run.settings.tenant),
        this.#run.options.inDoubt ?? 'report',
      );
      await this.#lists(source);
      await settleLate(this.#run, 'activities');
      if (this.#run.settings.generation && !this.#run.plan)
        await generationEnd(this.#run, this.#run.settings.generation);
    } catch (error) {
      this.#run.fail(error instanceof SourceFailure ? error.error : error);
    }
    this.#run.sender.stop();
    await this.#run.sender.idle();
    await outcomesWritten(this.#run);
    signal?.removeEventListener('abort', onAbort);
    // The outcomes and removed intents of the requests answered, whatever stopped the run.
    await this.#run.committer.flush();
    if (this.#run.fatal) throw this.#run.fatal.error;
    const inDoubt: SyncInDoubt[] = (await this.#run.settings.journal.pending(this.#run.settings.tenant)).map((e) =>
      e.requestId === undefined
        ? { type: e.type, key: e.key, sent: sentOf(e) }
        : { type: e.type, key: e.key, requestId: e.requestId, sent: sentOf(e) },
    );
    const report = this.#run.tally.report(this.#run.settings.runId, inDoubt, this.#run.refusedRemovals);
    return this.#run.settings.generation ? { ...report, generation: this.#run.settings.generation.report() } : report;
  }

  async plan(source: SyncSource): Promise<SyncPlan> {
    const plan = this.#run.plan as PlanTally;
    try {
      await this.#lists(source);
      await plan.handedOut();
    } catch (error) {
      throw error instanceof SourceFailure ? error.error : error;
    }
    return { entries: plan.entries, counts: plan.counts, refusedRemovals: this.#run.refusedRemovals };
  }

  async #lists(source: SyncSource): Promise<void> {
    for (const kind of KINDS) {
      const list = source[kind.type] as SyncList<unknown> | undefined;
      if (list === undefined || list === null) continue;
      if (this.#run.stopping()) return;
      const seen = this.#run.ids.keysOf(kind.type);
      this.#run.tally.begin(kind.type, sizeOf(list));
      for await (const batch of batchesOf(list, this.#run.options.signal)) {
        if (this.#run.stopping()) return;
        await decideBatch(this.#run, kind, await readBatch(this.#run, kind, batch, seen));
        if (!this.#run.plan) await this.#run.sender.room(BATCH);
        else await this.#run.plan.handedOut();
      }
      if (this.#run.stopping()) return;
      // The list was read to its end: it is complete, and may remove (a generation's, at its end).
      if (this.#run.settings.generation)
        this.#run.settings.generation.listRead(kind.type, this.#run.unusableKeys.get(kind.type) ?? 0);
      else if (this.#run.options.removed === 'deactivate') await removed(this.#run, kind, seen);
      await drain(this.#run);
      seen.done();
      if (this.#run.stopping()) return;
      await this.#run.committer.flush();
      // Contacts left in doubt are looked for before their opportunities go, which then need not wait.
      if (kind.type === 'contacts' && !this.#run.plan) await settleLate(this.#run, 'contacts');
      this.#run.tally.progress(kind.type);
    }
  }
}
