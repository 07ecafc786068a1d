import { CrmError } from '../core/errors';
import type { CreateRun } from './create';
import { decideBatch } from './decide';
import type { GenerationRun } from './generation-run';
import type { SyncJournalEntry } from './journal';
import { KINDS, type Kind, kindOf } from './kinds';
import { drain, elsewhere, outcomesWritten } from './other-runs';
import { IN_DOUBT } from './parent-ids';
import { BATCH, batchesOf, readBatch, SourceFailure, sizeOf } from './read';
import { eachRemoved, refusalOf, type SyncRead } from './remove';
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
    this.#run = new Run(settings, options, plan, (run) => this.#createRun(run));
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
      if (this.#run.settings.generation && !this.#run.plan) await this.#generationEnd(this.#run.settings.generation);
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
      else if (this.#run.options.removed === 'deactivate') await this.#removed(kind, seen);
      await drain(this.#run);
      seen.done();
      if (this.#run.stopping()) return;
      await this.#run.committer.flush();
      // Contacts left in doubt are looked for before their opportunities go, which then need not wait.
      if (kind.type === 'contacts' && !this.#run.plan) await settleLate(this.#run, 'contacts');
      this.#run.tally.progress(kind.type);
    }
  }

  /** The run's part in its creates (create.ts): what they need of it, and where their outcomes go. */
  #createRun(run: Run): CreateRun {
    return {
      committer: run.committer,
      runId: run.settings.runId,
      signal: run.options.signal,
      client: run.settings.crm,
      now: () => run.settings.now(),
      send: (kind, body, options) => run.call((o) => kind.create(run.settings.crm, body, o), options),
      elsewhere: (kind, key, value, from, claim) =>
        elsewhere(run, kind, { key, record: {}, canonical: { value, hash: from.hash, json: from.data } }, claim),
      fail: (error) => run.fail(error),
      failed: (type, key, error) => run.failed(type, key, error),
      inDoubt: (type, key) => {
        run.ids.remember(type, key, IN_DOUBT);
        run.tally.count(type, 'inDoubt');
        if (type === 'contacts' || type === 'activities') run.newlyInDoubt[type]++;
      },
      lostClaim: (type, key) => {
        run.ids.remember(type, key, IN_DOUBT);
        run.tally.skip(
          type,
          key,
          'its claim ended before its answer came (this run stalled past the lease): the run that took it over settles it',
        );
      },
      created: (type, key, id) => {
        if (type !== 'activities') run.ids.of(type).set(key, id);
        run.tally.count(type, 'created');
      },
      later: (outcome) => {
        const written: Promise<void> = outcome.finally(() => run.outcomes.delete(written));
        run.outcomes.add(written);
      },
    };
  }

  /**
   * Accounts and contacts the journal holds but their complete list does not: deactivated, or
   * reported. Measured first, sent after (remove.ts): past the limit, or after a record whose key
   * could not be read, none of the type's removals is sent, and the refusal is reported.
   */
  async #removed(
    kind: Kind,
    seen: SyncRead,
    unusableKeys = this.#run.unusableKeys.get(kind.type) ?? 0,
    generation = false,
  ): Promise<void> {
    const { type } = kind;
    const { journal, tenant } = this.#run.settings;
    // This run's creates written first, so that the journal's synced records less them are the
    // ones there before the run, as its plan counted them.
    if (!this.#run.plan) {
      await drain(this.#run);
      await this.#run.committer.flush();
    }
    if (this.#run.stopping()) return;
    let wouldDeactivate = 0;
    const [action, why] = kind.deactivates
      ? (['deactivate', {}] as const)
      : (['skip', { reason: removedReason(kind) }] as const);
    const synced = await eachRemoved(journal, tenant, type, seen, (removed) => {
      wouldDeactivate += removed.length;
      // A plan lists them all, refused or not: its counts say what the list no longer holds.
      for (const entry of removed) this.#run.plan?.add(type, entry.key, action, why);
      return !this.#run.stopping();
    });
    if (this.#run.stopping()) return;
    // A run's own creates are not of the records there before it (its plan counted without them);
    // a generation's were all there before its removal.
    const created = this.#run.plan || generation ? 0 : this.#run.tally.of(type).created;
    const counted = { wouldDeactivate, synced: Math.max(wouldDeactivate, synced - created), unusableKeys };
    const refusal = refusalOf(type, counted, this.#run.options.maxRemoved);
    if (refusal) this.#run.refusedRemovals.push(refusal);
    if (refusal || this.#run.plan || wouldDeactivate === 0) return;
    await eachRemoved(journal, tenant, type, seen, async (removed) => {
      for (const entry of removed) {
        if (this.#run.stopping()) return false;
        if (kind.deactivates) this.#deactivate(kind, entry);
        else this.#run.tally.skip(type, entry.key, removedReason(kind), false);
      }
      await this.#run.sender.room(BATCH);
      return true;
    });
  }

  /**
   * The end of a generation's slice: every outcome written, the slice finished; when that
   * completes the generation (or its removal's claim lapsed), the records the journal holds that
   * no slice read are removed as one run's complete lists remove them, under the same guard, and
   * the removal is marked done once every one is answered and written. A run that stops first
   * gives the claim up: the next run of the generation does the removal.
   */
  async #generationEnd(generation: GenerationRun): Promise<void> {
    await drain(this.#run);
    await this.#run.committer.flush();
    if (this.#run.stopping()) return;
    const end = await generation.finish({
      // A removal's claim has the lease of a create's: looked at four times a lease, 1 s at most.
      everyMs: Math.min(1000, (this.#run.settings.journal.claims?.leaseMs ?? 4000) / 4),
      pause: (ms) => this.#run.pause(ms),
      stopping: () => this.#run.stopping(),
    });
    if (!end) return;
    const { claim } = end;
    try {
      for (const { type, unusableKeys } of end.lists) {
        if (this.#run.stopping()) break;
        const unread = { unread: (keys: readonly string[]) => generation.unread(type, keys, claim.fence) };
        await this.#removed(kindOf(type), unread, unusableKeys, true);
        await drain(this.#run);
        await this.#run.committer.flush();
      }
    } catch (error) {
      await claim.release().catch(() => {});
      throw error;
    }
    if (this.#run.stopping()) await claim.release().catch(() => {});
    else await claim.done();
  }

  #deactivate(kind: Kind, entry: SyncJournalEntry): void {
    const update = kind.update as NonNullable<Kind['update']>;
    this.#run.sender.push({
      run: async () => {
        try {
          await this.#run.call((options) =>
            update(this.#run.settings.crm, entry.crmId as string, { status: 'inactive' }, options),
          );
          this.#run.committer.put({ ...entry, state: 'deactivated', runId: this.#run.settings.runId });
          this.#run.tally.count(kind.type, 'deactivated');
        } catch (error) {
          if (error instanceof CrmError) this.#run.tally.fail(kind.type, entry.key, error);
          else this.#run.fail(error);
        }
      },
    });
  }
}

/** Why a removed opportunity or activity is only reported. */
const removedReason = ({ noun }: Kind): string => `removed from its list: the API cannot remove an ${noun}`;
