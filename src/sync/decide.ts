import type * as z from 'zod/mini';
import { CrmValidationError, type CrmValidationIssue } from '../core/errors';
import { issuesOf } from '../internal/endpoint/issues';
import { type Canonical, canonical, changedFields } from './canonical';
import { invalid, invalidRecord } from './invalid';
import type { SyncJournalEntry } from './journal';
import { type Kind, kindOf } from './kinds';
import { FAILED, IN_DOUBT, PLANNED } from './parent-ids';
import type { Decided, Run } from './run';
import { inDoubtReason } from './settle';
import { sendUpdate } from './update';

// The decide step of a run or a plan: what becomes of each record read, against the journal's
// entry for it (create, update, unchanged, skip, blocked, invalid). A run acts on its decision
// and a plan only lists it, so both go through here: what a plan shows is what a run would do.

/** A record the read step let through: its key usable and new to its list, its data an object. */
export interface ReadRecord {
  readonly key: string;
  readonly record: Record<string, unknown>;
  readonly data: Record<string, unknown>;
}

/**
 * Decides the records a batch let through: their references resolved to the parents' CRM ids
 * (a parent that failed or is in doubt blocks them), their data put in canonical form, and
 * each decided against its journal entry, read in one call for the batch.
 */
export async function decideBatch(run: Run, kind: Kind, ready: readonly ReadRecord[]): Promise<void> {
  const { type } = kind;
  const decided: Decided[] = [];
  for (const { key, record, data } of ready) {
    const body: Record<string, unknown> = { ...data };
    let blockedBy: string | undefined;
    let unknown: CrmValidationError | undefined;
    for (const ref of kind.references) {
      const parentKey = record[ref.keyField] as string | undefined;
      if (parentKey === undefined) continue;
      const id = run.ids.of(ref.parent).get(parentKey);
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
      run.invalid(type, key, unknown);
      run.ids.remember(type, key, FAILED);
      continue;
    }
    if (blockedBy !== undefined) {
      if (run.plan) run.plan.add(type, key, 'blocked', { reason: blockedBy });
      else run.tally.skip(type, key, blockedBy);
      run.ids.remember(type, key, FAILED);
      continue;
    }
    let form: Canonical;
    try {
      form = canonical(body);
    } catch (error) {
      run.invalid(
        type,
        key,
        error instanceof CrmValidationError
          ? error
          : invalid('data', `Not JSON: ${error instanceof Error ? error.message : String(error)}`),
      );
      run.ids.remember(type, key, FAILED);
      continue;
    }
    decided.push({ key, record, canonical: form });
  }
  if (decided.length === 0) return;

  const entries = await run.settings.journal.get(
    run.settings.tenant,
    type,
    decided.map((d) => d.key),
  );
  for (const d of decided) decide(run, kind, d, entries.get(d.key));
}

/**
 * A record's schema issues, or undefined when it is valid. Checked through the schema's
 * Standard Schema `validate()`, which hands zod's issues over as they are: `safeParse()` wraps
 * them in a ZodError, an Error whose stack V8 captures for each bad record, and a source whose
 * every record failed its schema peaked some 290 MiB higher for it (bench/failed-memory.mjs).
 */
function check(kind: Kind, value: Record<string, unknown>): CrmValidationError | undefined {
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

/**
 * Decides one record against its journal entry: created, updated, unchanged, skipped (the API
 * cannot update it), left in doubt, deferred (another run is creating it) or invalid.
 */
export function decide(run: Run, kind: Kind, d: Decided, entry: SyncJournalEntry | undefined): void {
  const { type } = kind;
  const { key, canonical: form } = d;
  if (entry?.state === 'sending' && run.committer.claims && !run.plan) {
    // Another run may be creating it: its outcome, once known, decides (a claim that ended, in doubt).
    run.deferred.push({ kind, d });
    return;
  }
  if (entry && (entry.state === 'sending' || entry.state === 'inDoubt')) {
    // Settled at the start of the run where it could be: what is left stays in doubt.
    if (run.plan) run.plan.add(type, key, 'blocked', { reason: inDoubtReason(kind, entry) });
    else run.tally.count(type, 'inDoubt');
    run.ids.remember(type, key, IN_DOUBT);
    return;
  }
  if (!entry) {
    const issue = check(kind, form.value);
    if (issue) {
      run.invalid(type, key, issue);
      run.ids.remember(type, key, FAILED);
      return;
    }
    if (run.plan) {
      run.plan.add(type, key, 'create');
      if (type !== 'activities') run.ids.of(type).set(key, PLANNED);
      return;
    }
    run.create(kind, key, form.value, { hash: form.hash, data: form.json, attemptedAt: undefined }, false);
    return;
  }
  const crmId = entry.crmId as string;
  if (type !== 'activities') run.ids.of(type).set(key, crmId);
  if (entry.hash === form.hash && entry.state === 'synced') {
    if (run.plan) run.plan.add(type, key, 'unchanged');
    else if (!run.settled.has(`${type}\u0000${key}`)) run.tally.count(type, 'unchanged');
    return;
  }
  const changes = changedFields(entry.data, form.value);
  if (!kind.update) {
    const reason = `changed (${Object.keys(changes).join(', ') || 'no field'}): the API cannot update an ${kind.noun}`;
    if (run.plan) run.plan.add(type, key, 'skip', { changes, reason });
    else run.tally.skip(type, key, reason);
    return;
  }
  const issue = check(kind, form.value);
  if (issue) {
    run.invalid(type, key, issue);
    return;
  }
  const body: Record<string, unknown> = {};
  for (const [field, change] of Object.entries(changes)) body[field] = change.to;
  // A record back in its list after it was deactivated is active again, unless it says otherwise.
  if (entry.state === 'deactivated' && body.status === undefined) {
    body.status = form.value.status ?? 'active';
  }
  if (run.plan) {
    run.plan.add(type, key, Object.keys(body).length > 0 ? 'update' : 'unchanged', { changes });
    return;
  }
  const synced: SyncJournalEntry = {
    ...entry,
    state: 'synced',
    hash: form.hash,
    data: form.json,
    runId: run.settings.runId,
  };
  if (Object.keys(body).length === 0) {
    // Only fields gone from the source: the API cannot clear them, so nothing is sent.
    run.committer.put(synced);
    run.tally.count(type, 'unchanged');
    return;
  }
  sendUpdate(run, kind, key, crmId, body, synced);
}
