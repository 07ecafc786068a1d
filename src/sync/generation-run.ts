import { CrmValidationError } from '../core/errors';
import type { SyncGeneration } from './generation';
import type { SyncJournalGenerationEnd, SyncJournalGenerations, SyncJournalSliceList, SyncType } from './journal';
import type { SyncGenerationReport } from './types';

/**
 * One run's part in a generation (the journal's `SyncJournalGenerations`, journal.ts): joins it before the run reads
 * anything, records the keys each batch gives (one write a batch), and, once every list is read to
 * its end, finishes its slice. The run's remove step (remove.ts) does the removal the finish claims.
 */
export class GenerationRun {
  readonly #journal: SyncJournalGenerations;
  readonly #tenant: string;
  readonly #runId: string;
  readonly #generation: SyncGeneration;
  readonly #remove: boolean;
  /** The generation was open when the run joined: its reads count. */
  readonly #open: boolean;
  /** The lists read to their end, in the order read. */
  readonly #lists: SyncJournalSliceList[] = [];
  #report: SyncGenerationReport;

  private constructor(
    journal: SyncJournalGenerations,
    tenant: string,
    runId: string,
    generation: SyncGeneration,
    remove: boolean,
    state: SyncGenerationReport['state'],
  ) {
    this.#journal = journal;
    this.#tenant = tenant;
    this.#runId = runId;
    this.#generation = generation;
    this.#remove = remove;
    this.#open = state === 'open';
    this.#report = { id: generation.id, slice: generation.slice, state, missingSlices: [] };
  }

  /**
   * Joins `generation`; refuses (`CrmValidationError`, nothing sent) an id the journal holds
   * with another slice count: two passes under one name would mix their slices.
   */
  static async join(
    journal: SyncJournalGenerations,
    tenant: string,
    runId: string,
    generation: SyncGeneration,
    remove: boolean,
  ): Promise<GenerationRun> {
    const joined = await journal.join(tenant, generation.id, generation.slices);
    if (joined.slices !== generation.slices) {
      throw new CrmValidationError([
        {
          field: 'generation.slices',
          path: ['generation', 'slices'],
          message: `Generation ${JSON.stringify(generation.id)} has ${joined.slices} slices in the journal, not ${generation.slices}: give each pass its own id (a date), and every slice of one pass the same count`,
        },
      ]);
    }
    const state: SyncGenerationReport['state'] =
      joined.state === 'removing' || joined.state === 'done' ? 'complete' : joined.state;
    return new GenerationRun(journal, tenant, runId, generation, remove, state);
  }

  /** The keys a batch of `type` gave, recorded while the generation is open. */
  async read(type: SyncType, keys: readonly string[]): Promise<void> {
    if (!this.#open || keys.length === 0) return;
    await this.#journal.read(this.#tenant, this.#generation.id, type, keys);
  }

  /** The keys of `keys` no slice read, while the removal claim `fence` holds. */
  unread(type: SyncType, keys: readonly string[], fence: number): Promise<ReadonlySet<string>> {
    return this.#journal.unread(this.#tenant, this.#generation.id, type, keys, fence);
  }

  /** `type`'s list was read to its end. */
  listRead(type: SyncType, unusableKeys: number): void {
    this.#lists.push({ type, unusableKeys });
  }

  /**
   * Finishes the slice, the run's lists all read to their end; resolves to the removal this run
   * must do, when it claimed one. A generation that was not open when the run joined removes
   * nothing, unless it is complete and its removal's claim lapsed (its remover stopped).
   */
  async finish(wait: {
    readonly everyMs: number;
    pause(ms: number): Promise<void>;
    stopping(): boolean;
  }): Promise<Extract<SyncJournalGenerationEnd, { outcome: 'remove' }> | undefined> {
    if (this.#report.state === 'superseded' || this.#report.state === 'expired') return undefined;
    const ended = {
      id: this.#generation.id,
      slice: this.#generation.slice,
      remove: this.#remove,
      lists: this.#lists,
    };
    let end = await this.#journal.finish(this.#tenant, this.#runId, ended);
    // Another run holds the removal: this one waits for it to end, or for its claim to lapse (its
    // run died) to take it over, so that a queue's retry of the slice whose run died removing
    // does the removal rather than leave it to a run that may never come.
    while (this.#remove && end.outcome === 'closed' && end.state === 'removing' && !wait.stopping()) {
      await wait.pause(wait.everyMs);
      if (wait.stopping()) break;
      end = await this.#journal.finish(this.#tenant, this.#runId, ended);
    }
    switch (end.outcome) {
      case 'open':
        this.#report = { ...this.#report, state: 'open', missingSlices: end.missing };
        return undefined;
      case 'remove':
        this.#report = { ...this.#report, state: 'completed', missingSlices: [] };
        return end;
      default:
        this.#report = {
          ...this.#report,
          state: end.state === 'superseded' || end.state === 'expired' ? end.state : 'complete',
          missingSlices: [],
        };
        return undefined;
    }
  }

  /** What the report says of the generation. */
  report(): SyncGenerationReport {
    return this.#report;
  }
}
