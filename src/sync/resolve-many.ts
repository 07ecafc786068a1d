import { CrmValidationError, type CrmValidationIssue } from '../core/errors';
import type { SyncJournal, SyncJournalChange, SyncJournalEntry, SyncType } from './journal';
import { keyProblem } from './keys';
import { SYNC_TYPES } from './kinds';

/** One record to settle with `sync.resolve([...])`: as the arguments of `sync.resolve(type, key, crmId)`. */
export interface SyncResolution {
  /** Its list. */
  readonly type: SyncType;
  /** Its key. */
  readonly key: string;
  /** The id the CRM holds it by, or null: it is not in the CRM, and the next run creates it. */
  readonly crmId: string | null;
}

/** The most refusals one error lists: a file of 100,000 wrong rows does not make a message of 100,000 lines. */
const MOST_REFUSALS = 100;

/** The keys of `records`, by type. */
function byTypeOf(records: readonly SyncResolution[]): Map<SyncType, string[]> {
  const byType = new Map<SyncType, string[]>();
  for (const { type, key } of records) {
    const keys = byType.get(type) ?? [];
    byType.set(type, keys);
    keys.push(key);
  }
  return byType;
}

/** The journal's entry of a record settled by hand to the CRM record `crmId`. */
export function settledEntry(
  type: SyncType,
  key: string,
  crmId: string,
  entry: SyncJournalEntry | undefined,
  runId: string,
): SyncJournalEntry {
  return {
    type,
    key,
    state: 'synced',
    crmId,
    // Unknown content: an empty hash matches nothing, so the next run sends every field.
    hash: entry?.hash ?? '',
    data: entry?.data ?? '{}',
    attemptedAt: entry?.attemptedAt,
    requestId: undefined,
    runId,
  };
}

/** Why `crmId` cannot be given to `key`: the journal maps it to another key of the type. */
export async function adoptionProblem(
  journal: SyncJournal,
  tenant: string,
  type: SyncType,
  key: string,
  crmId: string,
): Promise<string | undefined> {
  const holder = (await keysOfIds(journal, tenant, type, new Set([crmId]))).get(crmId);
  return holder === undefined || holder === key ? undefined : alreadyHeld(type, crmId, holder);
}

/** Why `key` cannot be settled now: a live run of a shared journal claims it, and may be creating it. */
export async function claimProblem(
  journal: SyncJournal,
  tenant: string,
  runId: string,
  type: SyncType,
  key: string,
): Promise<string | undefined> {
  if (journal.claims === undefined) return undefined;
  const held = await journal.claims.held(tenant, runId, type, [key]);
  return held.has(key) ? beingCreated(type, key) : undefined;
}

function beingCreated(type: SyncType, key: string): string {
  return `${type} ${shown(key)} is being created by a live run (its claim holds): settle it once that run is done`;
}

function alreadyHeld(type: SyncType, crmId: string, holder: string): string {
  return `${type} id ${shown(crmId)} is already ${shown(holder)}'s in the journal: it is never given to a second key`;
}

/** The entries the journal holds of `records`' keys, by type and key, read 1,000 keys at a time. */
async function entriesOf(
  journal: SyncJournal,
  tenant: string,
  records: readonly SyncResolution[],
): Promise<Map<string, SyncJournalEntry>> {
  const held = new Map<string, SyncJournalEntry>();
  for (const [type, keys] of byTypeOf(records)) {
    for (let i = 0; i < keys.length; i += 1000) {
      for (const [key, entry] of await journal.get(tenant, type, keys.slice(i, i + 1000))) {
        held.set(JSON.stringify([type, key]), entry);
      }
    }
  }
  return held;
}

/** The keys the journal maps each CRM id of `ids` to, for one type: one pass over its entries. */
async function keysOfIds(
  journal: SyncJournal,
  tenant: string,
  type: SyncType,
  ids: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const page = await journal.list(tenant, type, after, 1000);
    if (page.length === 0) return keys;
    after = page[page.length - 1]?.key;
    for (const entry of page) {
      if (entry.crmId !== undefined && ids.has(entry.crmId) && !keys.has(entry.crmId)) keys.set(entry.crmId, entry.key);
    }
  }
}

const shown = (key: string): string => JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);

/** The shape of each record, checked before the journal is read: the first fault of each, by index. */
export function checkResolutions(records: unknown): asserts records is readonly SyncResolution[] {
  if (!Array.isArray(records)) {
    throw new CrmValidationError([
      { field: 'records', path: ['records'], message: 'An array of { type, key, crmId }' },
    ]);
  }
  const issues: CrmValidationIssue[] = [];
  records.forEach((record: unknown, i) => {
    const at = (field: string, message: string) => issues.push({ field: `[${i}].${field}`, path: [i, field], message });
    if (record === null || typeof record !== 'object') {
      issues.push({ field: `[${i}]`, path: [i], message: 'A { type, key, crmId } object' });
      return;
    }
    const { type, key, crmId } = record as Record<string, unknown>;
    if (!SYNC_TYPES.includes(type as SyncType)) at('type', "'accounts', 'contacts', 'opportunities' or 'activities'");
    const problem = keyProblem(key);
    if (problem !== undefined) at('key', `A key: ${problem}`);
    if (crmId !== null && (typeof crmId !== 'string' || crmId === '')) {
      at('crmId', 'The CRM id found (a non-empty string), or null when the record is not in the CRM');
    }
  });
  if (issues.length) throw refusal(issues);
}

function refusal(issues: readonly CrmValidationIssue[]): CrmValidationError {
  const listed = issues.slice(0, MOST_REFUSALS);
  const more = issues.length - listed.length;
  return new CrmValidationError(
    more > 0 ? [...listed, { field: '', path: [], message: `and ${more} more refused` }] : listed,
    'Nothing settled',
  );
}

/**
 * Settles `records` in one journal change, or none of them: every record is checked against the
 * journal first, and any refusal rejects with a `CrmValidationError` whose issues name each
 * refused record by its index (`path: [index, field]`), having written nothing. Refused:
 * - a record given twice, or a CRM id given to two keys of one type;
 * - a CRM id the journal already maps to another key of the type (never adopted, even with force:
 *   both keys would then be one CRM record, and the removal of one would deactivate the other);
 * - a record that is not in doubt: one the journal does not hold, or holds as synced or
 *   deactivated under another id or settled absent; unless `force`. A record the journal already
 *   holds under that same id is accepted and left as it is (a file of the ids the journal maps,
 *   given back, settles nothing twice).
 *
 * Called under the tenant's lock (a journal of one process), so that no run writes in between.
 */
export async function resolveMany(
  journal: SyncJournal,
  tenant: string,
  runId: string,
  records: readonly SyncResolution[],
  force: boolean,
): Promise<void> {
  const issues: CrmValidationIssue[] = [];
  const refuse = (i: number, field: string, message: string) =>
    issues.push({ field: `[${i}].${field}`, path: [i, field], message });
  const held = await entriesOf(journal, tenant, records);
  const seen = new Map<string, number>();
  const idsGiven = new Map<string, number>();
  const idsByType = new Map<SyncType, Set<string>>();
  records.forEach(({ type, key, crmId }, i) => {
    const id = JSON.stringify([type, key]);
    const first = seen.get(id);
    if (first !== undefined) refuse(i, 'key', `${type} ${shown(key)} is given twice (first at ${first})`);
    else seen.set(id, i);
    if (crmId === null) return;
    const idOf = JSON.stringify([type, crmId]);
    const other = idsGiven.get(idOf);
    if (other !== undefined && records[other]?.key !== key) {
      refuse(
        i,
        'crmId',
        `${type} id ${shown(crmId)} is given to two keys (first at ${other}): one CRM record is one key`,
      );
    } else idsGiven.set(idOf, i);
    const ids = idsByType.get(type) ?? new Set<string>();
    idsByType.set(type, ids);
    ids.add(crmId);
  });
  const mappedTo = new Map<string, string>();
  for (const [type, ids] of idsByType) {
    for (const [crmId, key] of await keysOfIds(journal, tenant, type, ids))
      mappedTo.set(JSON.stringify([type, crmId]), key);
  }
  // A shared journal takes no lock: a key under another run's live claim is being created now.
  const claimed = new Set<string>();
  if (journal.claims) {
    for (const [type, keys] of byTypeOf(records)) {
      for (let i = 0; i < keys.length; i += 1000) {
        const held = await journal.claims.held(tenant, runId, type, keys.slice(i, i + 1000));
        for (const key of held.keys()) claimed.add(JSON.stringify([type, key]));
      }
    }
  }
  const put: SyncJournalEntry[] = [];
  const remove: { type: SyncType; key: string }[] = [];
  records.forEach(({ type, key, crmId }, i) => {
    const entry = held.get(JSON.stringify([type, key]));
    const inDoubt = entry?.state === 'sending' || entry?.state === 'inDoubt';
    if (claimed.has(JSON.stringify([type, key]))) {
      refuse(i, 'key', beingCreated(type, key));
      return;
    }
    if (crmId !== null) {
      const holder = mappedTo.get(JSON.stringify([type, crmId]));
      if (holder !== undefined && holder !== key) {
        refuse(i, 'crmId', alreadyHeld(type, crmId, holder));
        return;
      }
      // The journal holds it so already: nothing to settle.
      if (entry?.crmId === crmId) return;
    }
    if (!inDoubt && !force) {
      const state = entry === undefined ? 'not in the journal' : `${entry.state} as ${shown(String(entry.crmId))}`;
      refuse(
        i,
        'crmId',
        `${type} ${shown(key)} is ${state}, not in doubt: ${
          entry === undefined
            ? 'no run sent it'
            : crmId === null
              ? 'settled absent, the next run would create it a second time'
              : 'settled, it would be mapped to another CRM record'
        }; force (crm sync resolve --force) does it anyway`,
      );
      return;
    }
    if (crmId === null) {
      if (entry !== undefined) remove.push({ type, key });
      return;
    }
    put.push(settledEntry(type, key, crmId, entry, runId));
  });
  if (issues.length) throw refusal(issues);
  const change: SyncJournalChange = { put, remove };
  if (put.length || remove.length) await journal.write(tenant, change);
}
