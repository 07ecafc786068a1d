import type { CrmClient } from 'crm-integration-sdk';
import type * as z from 'zod/mini';
import {
  CrmAuthenticationError,
  CrmError,
  CrmPermissionDeniedError,
  CrmValidationError,
  type CrmValidationIssue,
} from '../core/errors';
import { unsentOnly } from '../internal/call/unsent';
import { issuesOf } from '../internal/endpoint/issues';
import type { RequestOptions } from '../options';
import { type Canonical, canonical, changedFields } from './canonical';
import { type CreateFrom, type CreateRun, createJob } from './create';
import type { GenerationRun } from './generation-run';
import { invalid, invalidRecord, SharedErrors } from './invalid';
import type { SyncJournal, SyncJournalClaim, SyncJournalEntry, SyncType } from './journal';
import { keyProblem } from './keys';
import { KINDS, type Kind, kindOf } from './kinds';
import { FAILED, IN_DOUBT, ParentIds, PLANNED, type Seen } from './parent-ids';
import { BATCH, batchesOf, SourceFailure, sizeOf } from './read';
import { eachRemoved, refusalOf, type SyncRead } from './remove';
import { Committer, Sender } from './sender';
import { sentOf } from './sent';
import { inDoubtReason, lookFor } from './settle';
import { SOURCE_FAULT } from './source-fault';
import { PlanTally, Tally } from './tally';
import type {
  SyncInDoubt,
  SyncList,
  SyncPlan,
  SyncPlanOptions,
  SyncRefusedRemoval,
  SyncReport,
  SyncRunOptions,
  SyncSource,
} from './types';

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

interface Decided {
  readonly key: string;
  readonly record: Record<string, unknown>;
  readonly canonical: Canonical;
}

/**
 * One run (or plan) over a source: settles the records in doubt, then reads each list as a
 * stream, parents first, deciding each record against its journal entry, and sends what must be
 * sent through the {@link Sender}; a create's intent is written at its send gate, as it goes (gate.ts).
 */
export class Engine {
  readonly #s: EngineSettings;
  readonly #options: SyncRunOptions;
  readonly #plan: PlanTally | undefined;
  readonly #tally: Tally;
  readonly #committer: Committer;
  readonly #sender: Sender;
  readonly #ids = new ParentIds();
  #firstCall = true;
  #fatal: { error: unknown } | undefined;
  /** Contacts and activities this run left in doubt: looked for again after their list. */
  readonly #newlyInDoubt = { contacts: 0, activities: 0 };
  /** Records settled at the start of this run (adopted or created again): not counted again by their list. */
  readonly #settled = new Set<string>();
  /**
   * With a shared journal: records another run was creating when this one met them. They hold no
   * slot of the sender: the run goes on with the records that are free, and decides these again
   * once it has sent the rest of their list (#drain), when the other run is most likely done.
   */
  #deferred: { readonly kind: Kind; readonly d: Decided }[] = [];
  /**
   * With a shared journal: the fenced commits of creates answered, each with what follows it
   * (the count, the id for the children). They hold no slot either: a slot's next create goes
   * while the last one's outcome is written. Each settles (never rejects) before its list ends.
   */
  readonly #outcomes = new Set<Promise<void>>();
  /** Records of each list whose key could not be read: such a list cannot tell what it no longer holds. */
  readonly #unusableKeys = new Map<SyncType, number>();
  /** The types whose removals were not sent (or would not be), and why. */
  readonly #refusedRemovals: SyncRefusedRemoval[] = [];
  /**
   * The options of every call of the run: the run's signal, which abandons a call not yet sent
   * (waiting for its key, a slot, its turn) and lets one on the wire end with its answer or its
   * timeout, so that an abort leaves in doubt only what may have been done (call/unsent.ts).
   */
  readonly #request: RequestOptions | undefined;
  /** The errors of bad records, by message. */
  readonly #errors = new SharedErrors();
  readonly #creates: CreateRun;

  /** `plan`: false for a run; for a plan, where its entries go (`onEntry`), or true to keep them. */
  constructor(settings: EngineSettings, options: SyncRunOptions, plan: boolean | Pick<SyncPlanOptions, 'onEntry'>) {
    this.#s = settings;
    this.#options = options;
    // A signal of the run's own to mark: the caller's may stop other calls of theirs.
    // Without one, no options: a call with none skips their check.
    this.#request = options.signal ? { signal: unsentOnly(AbortSignal.any([options.signal])) } : undefined;
    this.#plan = plan ? new PlanTally(plan === true ? undefined : plan.onEntry) : undefined;
    this.#tally = new Tally(options.onProgress, settings.now);
    this.#committer = new Committer(settings.journal, settings.tenant, settings.runId);
    this.#sender = new Sender(options.concurrency ?? 8);
    this.#creates = this.#createRun();
  }

  async run(source: SyncSource): Promise<SyncReport> {
    const { signal } = this.#options;
    const onAbort = () => this.#fail(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await this.#settle(await this.#s.journal.pending(this.#s.tenant), this.#options.inDoubt ?? 'report');
      await this.#lists(source);
      await this.#settleLate('activities');
      if (this.#s.generation && !this.#plan) await this.#generationEnd(this.#s.generation);
    } catch (error) {
      this.#fail(error instanceof SourceFailure ? error.error : error);
    }
    this.#sender.stop();
    await this.#sender.idle();
    await this.#outcomesWritten();
    signal?.removeEventListener('abort', onAbort);
    // The outcomes and removed intents of the requests answered, whatever stopped the run.
    await this.#committer.flush();
    if (this.#fatal) throw this.#fatal.error;
    const inDoubt: SyncInDoubt[] = (await this.#s.journal.pending(this.#s.tenant)).map((e) =>
      e.requestId === undefined
        ? { type: e.type, key: e.key, sent: sentOf(e) }
        : { type: e.type, key: e.key, requestId: e.requestId, sent: sentOf(e) },
    );
    const report = this.#tally.report(this.#s.runId, inDoubt, this.#refusedRemovals);
    return this.#s.generation ? { ...report, generation: this.#s.generation.report() } : report;
  }

  async plan(source: SyncSource): Promise<SyncPlan> {
    const plan = this.#plan as PlanTally;
    try {
      await this.#lists(source);
      await plan.handedOut();
    } catch (error) {
      throw error instanceof SourceFailure ? error.error : error;
    }
    return { entries: plan.entries, counts: plan.counts, refusedRemovals: this.#refusedRemovals };
  }

  #fail(error: unknown): void {
    this.#fatal ??= { error };
    this.#sender.stop();
  }

  #stopping(): boolean {
    if (this.#options.signal?.aborted) this.#fail(this.#options.signal.reason);
    if (this.#tally.failure) this.#fail(this.#tally.failure.error);
    return this.#fatal !== undefined;
  }

  /** Looks again for the records of `type` this run left in doubt, after the settle delay. */
  async #settleLate(type: 'contacts' | 'activities'): Promise<void> {
    if (this.#newlyInDoubt[type] === 0 || this.#stopping()) return;
    this.#newlyInDoubt[type] = 0;
    await this.#pause(this.#s.settleMs);
    if (this.#stopping()) return;
    const pending = await this.#s.journal.pending(this.#s.tenant);
    await this.#settle(
      pending.filter((e) => e.type === type),
      'report',
    );
  }

  #pause(ms: number): Promise<void> {
    const signal = this.#options.signal;
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

  async #lists(source: SyncSource): Promise<void> {
    for (const kind of KINDS) {
      const list = source[kind.type] as SyncList<unknown> | undefined;
      if (list === undefined || list === null) continue;
      if (this.#stopping()) return;
      const seen = this.#ids.keysOf(kind.type);
      this.#tally.begin(kind.type, sizeOf(list));
      for await (const batch of batchesOf(list, this.#options.signal)) {
        if (this.#stopping()) return;
        await this.#batch(kind, batch, seen);
        if (!this.#plan) await this.#sender.room(BATCH);
        else await this.#plan.handedOut();
      }
      if (this.#stopping()) return;
      // The list was read to its end: it is complete, and may remove (a generation's, at its end).
      if (this.#s.generation) this.#s.generation.listRead(kind.type, this.#unusableKeys.get(kind.type) ?? 0);
      else if (this.#options.removed === 'deactivate') await this.#removed(kind, seen);
      await this.#drain();
      seen.done();
      if (this.#stopping()) return;
      await this.#committer.flush();
      // Contacts left in doubt are looked for before their opportunities go, which then need not wait.
      if (kind.type === 'contacts' && !this.#plan) await this.#settleLate('contacts');
      this.#tally.progress(kind.type);
    }
  }

  async #batch(kind: Kind, batch: unknown[], seen: Seen): Promise<void> {
    const { type } = kind;
    const ready: { key: string; record: Record<string, unknown>; data: Record<string, unknown> }[] = [];
    const wanted = new Map<SyncType, Set<string>>();
    const keysRead: string[] = [];
    for (const raw of batch) {
      const record = (raw ?? {}) as Record<string, unknown>;
      const key = record.key;
      const unusable = keyProblem(key);
      if (unusable !== undefined || typeof key !== 'string') {
        this.#unusableKeys.set(type, (this.#unusableKeys.get(type) ?? 0) + 1);
        const message =
          typeof key === 'string' && key !== ''
            ? `Not usable: a key must be ${unusable}`
            : 'Required: a non-empty string, unique in its list';
        this.#invalid(type, typeof key === 'string' ? key : String(key ?? ''), invalid('key', message));
        continue;
      }
      if (seen.has(key)) {
        this.#invalid(
          type,
          key,
          invalid('key', `Repeated: another ${kind.noun} of this run has key ${JSON.stringify(key)}`),
        );
        continue;
      }
      seen.add(key);
      keysRead.push(key);
      const fault = (record as { [SOURCE_FAULT]?: { field: string; message: string } })[SOURCE_FAULT];
      if (fault) {
        this.#invalid(type, key, invalid(fault.field, fault.message));
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      const data = record.data;
      if (data === null || typeof data !== 'object' || Array.isArray(data)) {
        this.#invalid(type, key, invalid('data', `Required: the ${kind.noun}'s fields, an object`));
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      let both: string | undefined;
      for (const ref of kind.references) {
        const parentKey = record[ref.keyField];
        if (parentKey === undefined) continue;
        const unusableParent = keyProblem(parentKey);
        if (unusableParent !== undefined || typeof parentKey !== 'string') {
          both = `${ref.keyField}: ${unusableParent}`;
          break;
        }
        const direct = ref.direct.find((field) => (data as Record<string, unknown>)[field] !== undefined);
        if (direct !== undefined) {
          both = `${ref.keyField} and data.${direct} both give the ${ref.parent} reference: give one`;
          break;
        }
        const parentIds = this.#ids.of(ref.parent);
        if (!parentIds.has(parentKey)) {
          const keys = wanted.get(ref.parent) ?? new Set<string>();
          wanted.set(ref.parent, keys);
          keys.add(parentKey);
        }
      }
      if (both !== undefined) {
        this.#invalid(type, key, invalid(both.split(':')[0] as string, both));
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      ready.push({ key, record, data: data as Record<string, unknown> });
    }

    // A generation's slice: the keys the batch gave, in one write, before any is sent.
    if (this.#s.generation && !this.#plan) await this.#s.generation.read(type, keysRead);

    // Parents this run has not met: what the journal holds of them, once other runs' creates of them end.
    for (const [parent, keys] of wanted) {
      const ids = this.#ids.of(parent);
      const all = [...keys];
      for (let i = 0; i < all.length; i += 1000) {
        await this.#othersDone(parent, all.slice(i, i + 1000));
        const found = await this.#s.journal.get(this.#s.tenant, parent, all.slice(i, i + 1000));
        for (const [k, entry] of found) {
          ids.set(k, entry.state === 'synced' || entry.state === 'deactivated' ? (entry.crmId as string) : IN_DOUBT);
        }
      }
    }

    const decided: Decided[] = [];
    for (const { key, record, data } of ready) {
      const body: Record<string, unknown> = { ...data };
      let blockedBy: string | undefined;
      let unknown: CrmValidationError | undefined;
      for (const ref of kind.references) {
        const parentKey = record[ref.keyField] as string | undefined;
        if (parentKey === undefined) continue;
        const id = this.#ids.of(ref.parent).get(parentKey);
        if (id === undefined) {
          unknown = invalid(
            ref.keyField,
            `No ${kindOf(ref.parent).noun} has key ${JSON.stringify(parentKey)}, in this run or the journal`,
          );
          break;
        }
        if (typeof id !== 'string') {
          blockedBy = `its ${kindOf(ref.parent).noun} ${JSON.stringify(parentKey)} ${id.blocked === 'failed' ? 'failed' : 'is in doubt'}: it goes once that is known`;
          break;
        }
        body[ref.idField] = id === PLANNED ? `(${ref.parent}:${parentKey})` : id;
      }
      if (unknown) {
        this.#invalid(type, key, unknown);
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      if (blockedBy !== undefined) {
        if (this.#plan) this.#plan.add(type, key, 'blocked', { reason: blockedBy });
        else this.#tally.skip(type, key, blockedBy);
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      let form: Canonical;
      try {
        form = canonical(body);
      } catch (error) {
        this.#invalid(
          type,
          key,
          error instanceof CrmValidationError
            ? error
            : invalid('data', `Not JSON: ${error instanceof Error ? error.message : String(error)}`),
        );
        this.#ids.remember(type, key, FAILED);
        continue;
      }
      decided.push({ key, record, canonical: form });
    }
    if (decided.length === 0) return;

    const entries = await this.#s.journal.get(
      this.#s.tenant,
      type,
      decided.map((d) => d.key),
    );
    for (const d of decided) this.#decide(kind, d, entries.get(d.key));
  }

  #invalid(type: SyncType, key: string, error: CrmError): void {
    if (this.#plan) this.#plan.add(type, key, 'invalid', { reason: error.message });
    else this.#tally.fail(type, key, this.#errors.of(error));
  }

  /**
   * A record's schema issues, or undefined when it is valid. Checked through the schema's
   * Standard Schema `validate()`, which hands zod's issues over as they are: `safeParse()` wraps
   * them in a ZodError, an Error whose stack V8 captures for each bad record, and a source whose
   * every record failed its schema peaked some 290 MiB higher for it (bench/failed-memory.mjs).
   */
  #check(kind: Kind, value: Record<string, unknown>): CrmValidationError | undefined {
    const result = kind.schema['~standard'].validate(value);
    // The sync's schemas have no asynchronous check: validate() answers at once.
    if (result instanceof Promise) throw new TypeError(`The ${kind.noun} schema answered asynchronously`);
    if (!result.issues) return undefined;
    // zod's validate() gives its own issues (code, keys), as a ZodError would hold them.
    const issues: CrmValidationIssue[] = issuesOf(result as { issues: readonly z.core.$ZodIssue[] }).map((issue) => ({
      ...issue,
      field: issue.field ? `data.${issue.field}` : 'data',
      path: ['data', ...issue.path],
    }));
    return invalidRecord(issues);
  }

  #decide(kind: Kind, d: Decided, entry: SyncJournalEntry | undefined): void {
    const { type } = kind;
    const { key, canonical: form } = d;
    if (entry?.state === 'sending' && this.#committer.claims && !this.#plan) {
      // Another run may be creating it: its outcome, once known, decides (a claim that ended, in doubt).
      this.#deferred.push({ kind, d });
      return;
    }
    if (entry && (entry.state === 'sending' || entry.state === 'inDoubt')) {
      // Settled at the start of the run where it could be: what is left stays in doubt.
      if (this.#plan) this.#plan.add(type, key, 'blocked', { reason: inDoubtReason(kind, entry) });
      else this.#tally.count(type, 'inDoubt');
      this.#ids.remember(type, key, IN_DOUBT);
      return;
    }
    if (!entry) {
      const issue = this.#check(kind, form.value);
      if (issue) {
        this.#invalid(type, key, issue);
        this.#ids.remember(type, key, FAILED);
        return;
      }
      if (this.#plan) {
        this.#plan.add(type, key, 'create');
        if (type !== 'activities') this.#ids.of(type).set(key, PLANNED);
        return;
      }
      this.#create(kind, key, form.value, { hash: form.hash, data: form.json, attemptedAt: undefined }, false);
      return;
    }
    const crmId = entry.crmId as string;
    if (type !== 'activities') this.#ids.of(type).set(key, crmId);
    if (entry.hash === form.hash && entry.state === 'synced') {
      if (this.#plan) this.#plan.add(type, key, 'unchanged');
      else if (!this.#settled.has(`${type}\u0000${key}`)) this.#tally.count(type, 'unchanged');
      return;
    }
    const changes = changedFields(entry.data, form.value);
    if (!kind.update) {
      const reason = `changed (${Object.keys(changes).join(', ') || 'no field'}): the API cannot update an ${kind.noun}`;
      if (this.#plan) this.#plan.add(type, key, 'skip', { changes, reason });
      else this.#tally.skip(type, key, reason);
      return;
    }
    const issue = this.#check(kind, form.value);
    if (issue) {
      this.#invalid(type, key, issue);
      return;
    }
    const body: Record<string, unknown> = {};
    for (const [field, change] of Object.entries(changes)) body[field] = change.to;
    // A record back in its list after it was deactivated is active again, unless it says otherwise.
    if (entry.state === 'deactivated' && body.status === undefined) {
      body.status = form.value.status ?? 'active';
    }
    if (this.#plan) {
      this.#plan.add(type, key, Object.keys(body).length > 0 ? 'update' : 'unchanged', { changes });
      return;
    }
    const synced: SyncJournalEntry = {
      ...entry,
      state: 'synced',
      hash: form.hash,
      data: form.json,
      runId: this.#s.runId,
    };
    if (Object.keys(body).length === 0) {
      // Only fields gone from the source: the API cannot clear them, so nothing is sent.
      this.#committer.put(synced);
      this.#tally.count(type, 'unchanged');
      return;
    }
    this.#sender.push({
      run: async () => {
        try {
          await this.#call((options) =>
            (kind.update as NonNullable<Kind['update']>)(this.#s.crm, crmId, body, options),
          );
          this.#committer.put(synced);
          this.#tally.count(type, 'updated');
        } catch (error) {
          this.#failed(type, key, error);
        }
      },
    });
  }

  /**
   * With a shared journal: waits for other runs' claims on `keys` to end (each commits its
   * outcome, or its lease runs out), bounded by the run's signal.
   */
  async #othersDone(type: SyncType, keys: readonly string[]): Promise<void> {
    const claims = this.#committer.claims;
    if (!claims || this.#plan) return;
    const look = this.#looks(claims.leaseMs);
    while (!this.#stopping()) {
      const held = await claims.held(this.#s.tenant, this.#s.runId, type, keys);
      if (held.size === 0) return;
      await this.#pause(look());
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
  #looks(leaseMs: number): () => number {
    const most = Math.min(100, leaseMs / 10);
    let looks = 0;
    return () => (looks++ < 10 ? Math.min(20, most) : most);
  }

  /**
   * Waits until every job pushed is answered and every record deferred (#deferred) is decided
   * again. Those whose other run is done are decided as the journal now holds them (a create
   * whose claim comes back held again is deferred again); the others are looked at again, each
   * look one index read of all of them.
   */
  async #drain(): Promise<void> {
    for (;;) {
      await this.#sender.idle();
      await this.#outcomesWritten();
      if (this.#deferred.length === 0 || this.#stopping()) return;
      const deferred = this.#deferred;
      this.#deferred = [];
      try {
        await this.#afterOthers(deferred);
      } catch (error) {
        this.#fail(error);
      }
    }
  }

  /** Resolves once every outcome being written (#outcomes) is written, or has failed the run. */
  async #outcomesWritten(): Promise<void> {
    while (this.#outcomes.size > 0) await Promise.all(this.#outcomes);
  }

  /** Records other runs were creating: each decided again from what the journal holds once its run is done. */
  async #afterOthers(deferred: readonly { readonly kind: Kind; readonly d: Decided }[]): Promise<void> {
    const claims = this.#committer.claims as NonNullable<Committer['claims']>;
    const byType = new Map<SyncType, { kind: Kind; d: Decided }[]>();
    for (const item of deferred) {
      const group = byType.get(item.kind.type) ?? [];
      byType.set(item.kind.type, group);
      group.push(item);
    }
    for (const [type, group] of byType) {
      for (let i = 0; i < group.length; i += 1000) {
        let waiting = group.slice(i, i + 1000);
        const look = this.#looks(claims.leaseMs);
        while (waiting.length > 0 && !this.#stopping()) {
          const held = await claims.held(
            this.#s.tenant,
            this.#s.runId,
            type,
            waiting.map((item) => item.d.key),
          );
          const done = waiting.filter((item) => !held.has(item.d.key));
          waiting = waiting.filter((item) => held.has(item.d.key));
          if (done.length > 0) {
            const entries = await this.#s.journal.get(
              this.#s.tenant,
              type,
              done.map((item) => item.d.key),
            );
            for (const { kind, d } of done) {
              const entry = entries.get(d.key);
              if (entry === undefined || entry.state === 'sending') {
                // Gone (its create was refused), or left 'sending' by a run that ended: the claim decides.
                const { value, hash, json } = d.canonical;
                this.#create(kind, d.key, value, { hash, data: json, attemptedAt: entry?.attemptedAt }, false);
              } else {
                this.#decide(kind, d, entry);
              }
            }
          }
          if (waiting.length > 0) await this.#pause(look());
        }
      }
    }
  }

  /** A create another run holds or has done: its outcome is counted here as the journal holds it. */
  #elsewhere(kind: Kind, d: Decided, claim: Exclude<SyncJournalClaim, { outcome: 'claimed' }>): void {
    if (claim.outcome === 'held') {
      this.#deferred.push({ kind, d });
      return;
    }
    const { entry } = claim;
    if (entry.state === 'sending' || entry.state === 'inDoubt') {
      this.#ids.remember(kind.type, d.key, IN_DOUBT);
      this.#tally.count(kind.type, 'inDoubt');
      if (kind.type === 'contacts' || kind.type === 'activities') this.#newlyInDoubt[kind.type]++;
      return;
    }
    this.#decide(kind, d, entry);
  }

  /** Sends a create, its intent written at its send gate (create.ts). */
  #create(kind: Kind, key: string, value: Record<string, unknown>, from: CreateFrom, resend: boolean): void {
    this.#sender.push({ run: createJob(this.#creates, kind, key, value, from, resend) });
  }

  /** The run's part in its creates (create.ts): what they need of it, and where their outcomes go. */
  #createRun(): CreateRun {
    return {
      committer: this.#committer,
      runId: this.#s.runId,
      signal: this.#options.signal,
      client: this.#s.crm,
      now: () => this.#s.now(),
      send: (kind, body, options) => this.#call((o) => kind.create(this.#s.crm, body, o), options),
      elsewhere: (kind, key, value, from, claim) =>
        this.#elsewhere(kind, { key, record: {}, canonical: { value, hash: from.hash, json: from.data } }, claim),
      fail: (error) => this.#fail(error),
      failed: (type, key, error) => this.#failed(type, key, error),
      inDoubt: (type, key) => {
        this.#ids.remember(type, key, IN_DOUBT);
        this.#tally.count(type, 'inDoubt');
        if (type === 'contacts' || type === 'activities') this.#newlyInDoubt[type]++;
      },
      lostClaim: (type, key) => {
        this.#ids.remember(type, key, IN_DOUBT);
        this.#tally.skip(
          type,
          key,
          'its claim ended before its answer came (this run stalled past the lease): the run that took it over settles it',
        );
      },
      created: (type, key, id) => {
        if (type !== 'activities') this.#ids.of(type).set(key, id);
        this.#tally.count(type, 'created');
      },
      later: (outcome) => {
        const written: Promise<void> = outcome.finally(() => this.#outcomes.delete(written));
        this.#outcomes.add(written);
      },
    };
  }

  #failed(type: SyncType, key: string, error: unknown): void {
    this.#ids.remember(type, key, FAILED);
    if (error instanceof CrmError) this.#tally.fail(type, key, error);
    else this.#fail(error);
  }

  /**
   * A call of the run, sent with the run's request options (its signal): the run's first,
   * refused 401 or 403, stops the run (the credential is wrong for all).
   */
  async #call<T>(
    send: (options: RequestOptions | undefined) => Promise<T>,
    options: RequestOptions | undefined = this.#request,
  ): Promise<T> {
    const first = this.#firstCall;
    this.#firstCall = false;
    try {
      return await send(options);
    } catch (error) {
      if (first && (error instanceof CrmAuthenticationError || error instanceof CrmPermissionDeniedError)) {
        this.#fail(error);
      }
      throw error;
    }
  }

  /**
   * Accounts and contacts the journal holds but their complete list does not: deactivated, or
   * reported. Measured first, sent after (remove.ts): past the limit, or after a record whose key
   * could not be read, none of the type's removals is sent, and the refusal is reported.
   */
  async #removed(
    kind: Kind,
    seen: SyncRead,
    unusableKeys = this.#unusableKeys.get(kind.type) ?? 0,
    generation = false,
  ): Promise<void> {
    const { type } = kind;
    const { journal, tenant } = this.#s;
    // This run's creates written first, so that the journal's synced records less them are the
    // ones there before the run, as its plan counted them.
    if (!this.#plan) {
      await this.#drain();
      await this.#committer.flush();
    }
    if (this.#stopping()) return;
    let wouldDeactivate = 0;
    const [action, why] = kind.deactivates
      ? (['deactivate', {}] as const)
      : (['skip', { reason: removedReason(kind) }] as const);
    const synced = await eachRemoved(journal, tenant, type, seen, (removed) => {
      wouldDeactivate += removed.length;
      // A plan lists them all, refused or not: its counts say what the list no longer holds.
      for (const entry of removed) this.#plan?.add(type, entry.key, action, why);
      return !this.#stopping();
    });
    if (this.#stopping()) return;
    // A run's own creates are not of the records there before it (its plan counted without them);
    // a generation's were all there before its removal.
    const created = this.#plan || generation ? 0 : this.#tally.of(type).created;
    const counted = { wouldDeactivate, synced: Math.max(wouldDeactivate, synced - created), unusableKeys };
    const refusal = refusalOf(type, counted, this.#options.maxRemoved);
    if (refusal) this.#refusedRemovals.push(refusal);
    if (refusal || this.#plan || wouldDeactivate === 0) return;
    await eachRemoved(journal, tenant, type, seen, async (removed) => {
      for (const entry of removed) {
        if (this.#stopping()) return false;
        if (kind.deactivates) this.#deactivate(kind, entry);
        else this.#tally.skip(type, entry.key, removedReason(kind), false);
      }
      await this.#sender.room(BATCH);
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
    await this.#drain();
    await this.#committer.flush();
    if (this.#stopping()) return;
    const end = await generation.finish({
      // A removal's claim has the lease of a create's: looked at four times a lease, 1 s at most.
      everyMs: Math.min(1000, (this.#s.journal.claims?.leaseMs ?? 4000) / 4),
      pause: (ms) => this.#pause(ms),
      stopping: () => this.#stopping(),
    });
    if (!end) return;
    const { claim } = end;
    try {
      for (const { type, unusableKeys } of end.lists) {
        if (this.#stopping()) break;
        const unread = { unread: (keys: readonly string[]) => generation.unread(type, keys, claim.fence) };
        await this.#removed(kindOf(type), unread, unusableKeys, true);
        await this.#drain();
        await this.#committer.flush();
      }
    } catch (error) {
      await claim.release().catch(() => {});
      throw error;
    }
    if (this.#stopping()) await claim.release().catch(() => {});
    else await claim.done();
  }

  #deactivate(kind: Kind, entry: SyncJournalEntry): void {
    const update = kind.update as NonNullable<Kind['update']>;
    this.#sender.push({
      run: async () => {
        try {
          await this.#call((options) => update(this.#s.crm, entry.crmId as string, { status: 'inactive' }, options));
          this.#committer.put({ ...entry, state: 'deactivated', runId: this.#s.runId });
          this.#tally.count(kind.type, 'deactivated');
        } catch (error) {
          if (error instanceof CrmError) this.#tally.fail(kind.type, entry.key, error);
          else this.#fail(error);
        }
      },
    });
  }

  /**
   * Settles records in doubt, as settle.ts looks for them: found, adopted; looked for and not
   * found, created again from what was sent. One that cannot be looked for is created again
   * with `inDoubt: 'recreate'`; one whose look-up failed, or that more CRM records match than
   * keys look for them, stays in doubt.
   */
  async #settle(pending: readonly SyncJournalEntry[], mode: 'report' | 'recreate'): Promise<void> {
    if (pending.length === 0) return;
    const found = await lookFor(pending, {
      crm: this.#s.crm,
      journal: this.#s.journal,
      tenant: this.#s.tenant,
      signal: this.#options.signal,
      call: (send) => this.#call(send),
      stopping: () => this.#stopping(),
      fail: (error) => this.#fail(error),
    });
    if (this.#stopping()) return;
    for (const entry of pending) {
      const kind = kindOf(entry.type);
      this.#settled.add(`${entry.type}\u0000${entry.key}`);
      const outcome = found.get(entry);
      if (typeof outcome === 'object') {
        this.#committer.put({
          ...entry,
          state: 'synced',
          crmId: outcome.id,
          requestId: undefined,
          runId: this.#s.runId,
        });
        this.#ids.remember(entry.type, entry.key, outcome.id);
        this.#tally.count(entry.type, 'created');
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
      this.#create(
        kind,
        entry.key,
        value,
        { hash: entry.hash, data: entry.data, attemptedAt: entry.attemptedAt },
        true,
      );
    }
    await this.#drain();
    await this.#committer.flush();
  }
}

/** Why a removed opportunity or activity is only reported. */
const removedReason = ({ noun }: Kind): string => `removed from its list: the API cannot remove an ${noun}`;
