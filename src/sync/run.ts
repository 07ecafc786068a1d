import type { CrmClient } from 'crm-integration-sdk';
import { CrmAuthenticationError, CrmError, CrmPermissionDeniedError } from '../core/errors';
import { unsentOnly } from '../internal/call/unsent';
import type { RequestOptions } from '../options';
import type { Canonical } from './canonical';
import { type CreateFrom, type CreateRun, createJob } from './create';
import type { GenerationRun } from './generation-run';
import { SharedErrors } from './invalid';
import type { SyncJournal, SyncType } from './journal';
import type { Kind } from './kinds';
import { FAILED, ParentIds } from './parent-ids';
import { Committer, Sender } from './sender';
import { PlanTally, Tally } from './tally';
import type { SyncPlanOptions, SyncRefusedRemoval, SyncRunOptions } from './types';

// What the steps of a run (read, decide, send, settle, remove) share: each step is a module of
// its own, and every one of them reads and writes the same counts, ids and queues, and stops on
// the same failure. The run's state lives here, below them all, so that no step imports another
// to reach it and the engine only puts the steps in order.

/** The settings of one run or plan, resolved. */
export interface EngineSettings {
  readonly crm: CrmClient;
  readonly journal: SyncJournal;
  readonly tenant: string;
  readonly runId: string;
  readonly settleMs: number;
  readonly now: () => number;
  /** The generation the run joined (generation-run.ts): its lists remove at its end, not each at its own. */
  readonly generation?: GenerationRun | undefined;
}

/** A record read and put in canonical form, to be decided against its journal entry. */
export interface Decided {
  readonly key: string;
  readonly record: Record<string, unknown>;
  readonly canonical: Canonical;
}

/** The state of one run (or plan), and what every step does with it: fail, stop, wait, call. */
export class Run {
  readonly settings: EngineSettings;
  readonly options: SyncRunOptions;
  readonly plan: PlanTally | undefined;
  readonly tally: Tally;
  readonly committer: Committer;
  readonly sender: Sender;
  readonly ids = new ParentIds();
  #firstCall = true;
  #fatal: { error: unknown } | undefined;
  /** Contacts and activities this run left in doubt: looked for again after their list. */
  readonly newlyInDoubt = { contacts: 0, activities: 0 };
  /** Records settled at the start of this run (adopted or created again): not counted again by their list. */
  readonly settled = new Set<string>();
  /**
   * With a shared journal: records another run was creating when this one met them. They hold no
   * slot of the sender: the run goes on with the records that are free, and decides these again
   * once it has sent the rest of their list (drain), when the other run is most likely done.
   */
  deferred: { readonly kind: Kind; readonly d: Decided }[] = [];
  /**
   * With a shared journal: the fenced commits of creates answered, each with what follows it
   * (the count, the id for the children). They hold no slot either: a slot's next create goes
   * while the last one's outcome is written. Each settles (never rejects) before its list ends.
   */
  readonly outcomes = new Set<Promise<void>>();
  /** Records of each list whose key could not be read: such a list cannot tell what it no longer holds. */
  readonly unusableKeys = new Map<SyncType, number>();
  /** The types whose removals were not sent (or would not be), and why. */
  readonly refusedRemovals: SyncRefusedRemoval[] = [];
  /**
   * The options of every call of the run: the run's signal, which abandons a call not yet sent
   * (waiting for its key, a slot, its turn) and lets one on the wire end with its answer or its
   * timeout, so that an abort leaves in doubt only what may have been done (call/unsent.ts).
   */
  readonly #request: RequestOptions | undefined;
  /** The errors of bad records, by message. */
  readonly #errors = new SharedErrors();
  readonly #creates: CreateRun;

  /**
   * `plan`: false for a run; for a plan, where its entries go (`onEntry`), or true to keep them.
   * `creates`: the run's part in its creates (create.ts), wired to the steps above the run (create-run.ts).
   */
  constructor(
    settings: EngineSettings,
    options: SyncRunOptions,
    plan: boolean | Pick<SyncPlanOptions, 'onEntry'>,
    creates: (run: Run) => CreateRun,
  ) {
    this.settings = settings;
    this.options = options;
    // A signal of the run's own to mark: the caller's may stop other calls of theirs.
    // Without one, no options: a call with none skips their check.
    this.#request = options.signal ? { signal: unsentOnly(AbortSignal.any([options.signal])) } : undefined;
    this.plan = plan ? new PlanTally(plan === true ? undefined : plan.onEntry) : undefined;
    this.tally = new Tally(options.onProgress, settings.now);
    this.committer = new Committer(settings.journal, settings.tenant, settings.runId);
    this.sender = new Sender(options.concurrency ?? 8);
    this.#creates = creates(this);
  }

  /** What stopped the run, if anything has. */
  get fatal(): { error: unknown } | undefined {
    return this.#fatal;
  }

  fail(error: unknown): void {
    this.#fatal ??= { error };
    this.sender.stop();
  }

  stopping(): boolean {
    if (this.options.signal?.aborted) this.fail(this.options.signal.reason);
    if (this.tally.failure) this.fail(this.tally.failure.error);
    return this.#fatal !== undefined;
  }

  pause(ms: number): Promise<void> {
    const signal = this.options.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Sends a create, its intent written at its send gate (create.ts). */
  create(kind: Kind, key: string, value: Record<string, unknown>, from: CreateFrom, resend: boolean): void {
    this.sender.push({ run: createJob(this.#creates, kind, key, value, from, resend) });
  }

  failed(type: SyncType, key: string, error: unknown): void {
    this.ids.remember(type, key, FAILED);
    if (error instanceof CrmError) this.tally.fail(type, key, error);
    else this.fail(error);
  }

  invalid(type: SyncType, key: string, error: CrmError): void {
    if (this.plan) this.plan.add(type, key, 'invalid', { reason: error.message });
    else this.tally.fail(type, key, this.#errors.of(error));
  }

  /**
   * A call of the run, sent with the run's request options (its signal): the run's first,
   * refused 401 or 403, stops the run (the credential is wrong for all).
   */
  async call<T>(
    send: (options: RequestOptions | undefined) => Promise<T>,
    options: RequestOptions | undefined = this.#request,
  ): Promise<T> {
    const first = this.#firstCall;
    this.#firstCall = false;
    try {
      return await send(options);
    } catch (error) {
      if (first && (error instanceof CrmAuthenticationError || error instanceof CrmPermissionDeniedError)) {
        this.fail(error);
      }
      throw error;
    }
  }
}
