import type { CrmClient } from 'crm-integration-sdk';
import { CrmError } from '../core/errors';
import type { SyncJournal, SyncJournalEntry, SyncType } from './journal';
import type { Kind } from './kinds';

/*
 * Settling records in doubt (README.md, "In doubt"): the look-ups that find what a lost create
 * may have made, and the pure rules that match what was sent against what the CRM holds.
 */

/**
 * What looking for one record in doubt came to:
 * - `{ id }`: the CRM holds it as `id`: adopted;
 * - `'absent'`: looked for and not there: created again;
 * - `'ambiguous'`: more CRM records match than keys in doubt look for them, or a record another
 *   run is creating matches too: it stays in doubt, never guessed;
 * - `'unsearchable'`: the API cannot look for it (an account, an opportunity, an activity of an
 *   account or a contact): it stays in doubt, or is created again with `inDoubt: 'recreate'`.
 *
 * A record whose look-up failed is not in the map: it stays in doubt for the next run.
 */
export type Found = { readonly id: string } | 'absent' | 'ambiguous' | 'unsearchable';

/** A record in doubt as it is matched: where it is listed (`scope`) and the fields that were sent. */
export interface Seeker {
  /** The list it can be found in: `''` for the contact list, an opportunity's id for its activities. */
  readonly scope: string;
  /** The fields sent, as they are compared. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A CRM record a look-up met that matches some record in doubt. */
export interface Candidate {
  readonly id: string;
  /** As {@link Seeker.scope}. */
  readonly scope: string;
  readonly record: Readonly<Record<string, unknown>>;
}

/** Fields compared by their digits: servers store phone numbers in a format of their own. */
const PHONE_FIELDS: ReadonlySet<string> = new Set(['phone', 'mobile']);
/** A date-time as the sync sends one (ISO 8601 with a zone). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

const text = (value: string): string => value.normalize('NFC').trim();
const digits = (value: string): string => value.replace(/\D/g, '');
const blank = (value: unknown): boolean =>
  value === null || value === undefined || (typeof value === 'string' && text(value) === '');

/**
 * Whether a CRM record's `held` value is the `sent` value of `field` as a server may have
 * stored it. The spec does not say how the server stores what it is sent, so the comparison
 * forgives what a server commonly changes, and nothing more:
 * - an email: case and surrounding spaces;
 * - a phone (`phone`, `mobile`): everything but its digits;
 * - a date-time: its format and zone, and its precision: the same instant within a second (a
 *   server that keeps seconds, truncating or rounding);
 * - any other string: surrounding spaces and Unicode normalisation (NFC);
 * - an empty string: a missing or null value;
 * - a number: the same number, also when held as a numeric string.
 * Anything else (booleans, enums' case, inner spaces) must be equal.
 */
export function sameValue(field: string, sent: unknown, held: unknown): boolean {
  if (blank(sent)) return blank(held);
  if (typeof sent === 'number') {
    return held === sent || (typeof held === 'string' && text(held) !== '' && Number(held) === sent);
  }
  if (typeof sent !== 'string') {
    return typeof sent === 'object' ? JSON.stringify(sent) === JSON.stringify(held) : sent === held;
  }
  if (typeof held !== 'string') return false;
  if (field === 'email') return text(sent).toLowerCase() === text(held).toLowerCase();
  if (PHONE_FIELDS.has(field) && digits(sent) !== '') return digits(sent) === digits(held);
  if (DATE_TIME.test(text(sent))) {
    const at = Date.parse(text(sent));
    const heldAt = Date.parse(text(held));
    if (!Number.isNaN(at)) return Math.abs(at - heldAt) < 1000;
  }
  return text(sent) === text(held);
}

/** Whether a CRM record holds every field that was sent, as {@link sameValue} compares them. */
export function holds(record: Readonly<Record<string, unknown>>, fields: Readonly<Record<string, unknown>>): boolean {
  for (const [field, value] of Object.entries(fields)) {
    // Own fields only: a field named like one of Object.prototype's is not the prototype's.
    if (!sameValue(field, value, Object.hasOwn(record, field) ? record[field] : undefined)) return false;
  }
  return true;
}

/**
 * The form of sent fields that two records in doubt share when they are the same data as
 * {@link sameValue} sees it (a date to its second): records of one form are interchangeable.
 */
export function formOf(fields: Readonly<Record<string, unknown>>): string {
  const form: [string, unknown][] = [];
  for (const field of Object.keys(fields).sort()) {
    const value = fields[field];
    let key: unknown = value;
    if (blank(value)) key = null;
    else if (typeof value === 'string') {
      const at = DATE_TIME.test(text(value)) ? Date.parse(text(value)) : Number.NaN;
      if (field === 'email') key = text(value).toLowerCase();
      else if (PHONE_FIELDS.has(field) && digits(value) !== '') key = `tel:${digits(value)}`;
      else if (!Number.isNaN(at)) key = `at:${Math.floor(at / 1000)}`;
      else key = text(value);
    }
    form.push([field, key]);
  }
  return JSON.stringify(form);
}

/**
 * Settles records in doubt onto the CRM records that match them, never guessing. Records that
 * match a common candidate, with the candidates they match and any `rivals` (records of other
 * keys that no look-up of this run settles: another run is creating them) that match those too,
 * form a group. A group is settled only when its records are interchangeable (one
 * {@link formOf}, each matching each of its candidates), no rival is in it, and it has no more
 * candidates than records: its first records (in the order given) adopt the candidates (in the
 * order given), the rest are `'absent'`. Otherwise every record of the group is `'ambiguous'`.
 * A record that matches no candidate is `'absent'`. `candidates` must hold no record that the
 * journal maps to a key.
 */
export function assign<S extends Seeker>(
  seekers: readonly S[],
  candidates: readonly Candidate[],
  rivals: readonly Seeker[] = [],
): Map<S, Found> {
  const among = blocking(candidates);
  // Union-find over seekers, rivals and candidates, by index in one array.
  const nodes: (Seeker | Candidate)[] = [...seekers, ...rivals, ...candidates];
  const parent = nodes.map((_, i) => i);
  const root = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    parent[i] = r;
    return r;
  };
  const people = seekers.length + rivals.length;
  const edges = new Map<number, Set<number>>();
  for (let p = 0; p < people; p++) {
    const edgesOf = new Set<number>();
    edges.set(p, edgesOf);
    const person = nodes[p] as Seeker;
    for (const c of among(person)) {
      if (!holds((candidates[c] as Candidate).record, person.fields)) continue;
      edgesOf.add(people + c);
      parent[root(p)] = root(people + c);
    }
  }
  const groups = new Map<number, { seekers: number[]; rivals: number; candidates: number[] }>();
  const groupOf = (i: number) => {
    const r = root(i);
    let group = groups.get(r);
    if (!group) {
      group = { seekers: [], rivals: 0, candidates: [] };
      groups.set(r, group);
    }
    return group;
  };
  for (let i = 0; i < nodes.length; i++) {
    if (i < seekers.length) groupOf(i).seekers.push(i);
    else if (i < people) groupOf(i).rivals++;
    else groupOf(i).candidates.push(i);
  }
  const found = new Map<S, Found>();
  for (const group of groups.values()) {
    const members = group.seekers;
    if (members.length === 0) continue;
    if (group.candidates.length === 0) {
      for (const i of members) found.set(seekers[i] as S, 'absent');
      continue;
    }
    const form = formOf((seekers[members[0] as number] as S).fields);
    const interchangeable =
      group.rivals === 0 &&
      group.candidates.length <= members.length &&
      members.every((i) => group.candidates.every((c) => edges.get(i)?.has(c) === true)) &&
      members.every((i) => formOf((seekers[i] as S).fields) === form);
    members.forEach((i, n) => {
      const candidate = group.candidates[n];
      const outcome: Found = !interchangeable
        ? 'ambiguous'
        : candidate === undefined
          ? 'absent'
          : { id: (nodes[candidate] as Candidate).id };
      found.set(seekers[i] as S, outcome);
    });
  }
  return found;
}

/**
 * The key a field's value must share exactly with a record that {@link sameValue} finds the
 * same, or undefined for a value compared otherwise (a date-time, within a second; a number).
 */
function exactKey(field: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || blank(value)) return undefined;
  if (field === 'email') return text(value).toLowerCase();
  if (PHONE_FIELDS.has(field) && digits(value) !== '') return `tel:${digits(value)}`;
  if (DATE_TIME.test(text(value))) return undefined;
  return text(value);
}

/**
 * The indexes of the candidates that may hold a seeker's fields: those of its scope that share
 * the exact key of one of its fields (its email first), found by an index of that field built
 * once. Comparing each of thousands of records in doubt with each of thousands of candidates
 * took seconds.
 */
function blocking(candidates: readonly Candidate[]): (seeker: Seeker) => readonly number[] {
  const all = candidates.map((_, i) => i);
  const indexes = new Map<string, Map<string, number[]>>();
  const indexOf = (field: string) => {
    let index = indexes.get(field);
    if (index) return index;
    index = new Map();
    indexes.set(field, index);
    candidates.forEach((c, i) => {
      const key = exactKey(field, Object.hasOwn(c.record, field) ? c.record[field] : undefined);
      if (key === undefined) return;
      const id = JSON.stringify([c.scope, key]);
      const same = index?.get(id) ?? [];
      index?.set(id, same);
      same.push(i);
    });
    return index;
  };
  return (seeker) => {
    const fields = Object.keys(seeker.fields);
    const field = ['email', ...fields].find((f) => exactKey(f, seeker.fields[f]) !== undefined);
    if (field === undefined) return all.filter((i) => (candidates[i] as Candidate).scope === seeker.scope);
    const key = JSON.stringify([seeker.scope, exactKey(field, seeker.fields[field])]);
    return indexOf(field).get(key) ?? [];
  };
}

/** The date-time the sync gives an activity sent without one: its first attempt, at a whole second. */
export function stampedDate(attemptedAt: number): string {
  return new Date(Math.floor(attemptedAt / 1000) * 1000).toISOString();
}

function parsed(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * How a journal entry in doubt is looked for, or undefined when the API cannot list it: a
 * contact in the contact list, on the fields sent; an activity of an opportunity in that
 * opportunity's list (the only list of activities there is), on the fields sent and the date
 * it was sent with. An entry whose data holds no field cannot be told from any other.
 */
export function seekerOf(entry: SyncJournalEntry): Seeker | undefined {
  const data = parsed(entry.data);
  if (entry.type === 'contacts') return Object.keys(data).length > 0 ? { scope: '', fields: data } : undefined;
  if (entry.type !== 'activities') return undefined;
  const { opportunityId, relatedToType, relatedToId, ...fields } = data;
  const scope = opportunityId ?? (relatedToType === 'opportunity' ? relatedToId : undefined);
  if (typeof scope !== 'string' || scope === '') return undefined;
  if (fields.activityDate === undefined && entry.attemptedAt !== undefined) {
    fields.activityDate = stampedDate(entry.attemptedAt);
  }
  return { scope, fields };
}

/** Why a plan leaves a record in doubt alone: what a run would do about it. */
export function inDoubtReason({ type, noun }: Kind, entry: SyncJournalEntry): string {
  if (seekerOf(entry))
    return `in doubt: an earlier create of this ${noun} may exist; a run looks for it in the CRM first`;
  const why =
    type === 'activities'
      ? 'the API lists only the activities of an opportunity'
      : type === 'contacts'
        ? 'it holds no field to find it by'
        : `the API cannot list ${type}`;
  return `in doubt: an earlier create of this ${noun} may exist, and ${why}: settle it with sync.resolve() (crm sync resolve) or a run with inDoubt: 'recreate'`;
}

/** What the look-ups use of the run. */
export interface LookUpRun {
  readonly crm: CrmClient;
  readonly journal: SyncJournal;
  readonly tenant: string;
  /** The run's signal, given to every look-up call. */
  readonly signal: AbortSignal | undefined;
  /** Sends one call as the run does (its first, refused 401 or 403, stops the run). */
  call<T>(send: () => Promise<T>): Promise<T>;
  /** Whether the run is stopping: no further look-up is sent. */
  stopping(): boolean;
  /** Stops the run for an error that is not the CRM's answer (a bug). */
  fail(error: unknown): void;
}

interface Sought {
  readonly entry: SyncJournalEntry;
  readonly scope: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Looks for records in doubt: the contacts by one scan of the contact list, the activities of
 * each opportunity by one list of its activities (filtered by type and date), each matched on
 * the fields sent ({@link sameValue}), then settled by {@link assign} onto the records that no
 * key of the journal holds. A look-up that fails leaves its records out of the map.
 */
export async function lookFor(
  pending: readonly SyncJournalEntry[],
  run: LookUpRun,
): Promise<Map<SyncJournalEntry, Found>> {
  const found = new Map<SyncJournalEntry, Found>();
  const sought: Record<'contacts' | 'activities', Sought[]> = { contacts: [], activities: [] };
  for (const entry of pending) {
    const seeker = seekerOf(entry);
    if (seeker && (entry.type === 'contacts' || entry.type === 'activities')) {
      sought[entry.type].push({ entry, ...seeker });
    } else {
      found.set(entry, 'unsearchable');
    }
  }
  for (const type of ['contacts', 'activities'] as const) {
    const seekers = sought[type].sort((a, b) => (a.entry.key < b.entry.key ? -1 : a.entry.key > b.entry.key ? 1 : 0));
    if (seekers.length === 0) continue;
    const looked = type === 'contacts' ? await scanContacts(seekers, run) : await listActivities(seekers, run);
    if (looked.seekers.length === 0) continue;
    // Read after the CRM: a record it showed was made by a create whose entry now maps it, or is in flight.
    const ours = new Set(pending.flatMap((e) => (e.type === type ? [e.key] : [])));
    const { mapped, rivals } = await othersOf(run, type, looked.candidates, ours);
    const free = looked.candidates.filter((c) => !mapped.has(c.id));
    for (const [seeker, outcome] of assign(looked.seekers, free, rivals)) found.set(seeker.entry, outcome);
  }
  return found;
}

/** The seekers looked for (those whose look-up did not fail) and the CRM records that match any. */
interface Looked {
  readonly seekers: readonly Sought[];
  readonly candidates: readonly Candidate[];
}

/** One scan of the contact list, keeping the contacts that match a contact in doubt. */
async function scanContacts(seekers: readonly Sought[], run: LookUpRun): Promise<Looked> {
  const candidates: Candidate[] = [];
  // By email, so that a scan of a large list compares each contact with the few it may be.
  const byEmail = new Map<string, Sought[]>();
  const noEmail: Sought[] = [];
  for (const seeker of seekers) {
    const { email } = seeker.fields;
    if (typeof email !== 'string' || blank(email)) {
      noEmail.push(seeker);
      continue;
    }
    const same = byEmail.get(text(email).toLowerCase()) ?? [];
    byEmail.set(text(email).toLowerCase(), same);
    same.push(seeker);
  }
  const matches = (record: Record<string, unknown>, seeker: Sought) => holds(record, seeker.fields);
  try {
    await run.call(async () => {
      for await (const contact of run.crm.contacts.list({ limit: 200 }, { signal: run.signal })) {
        const record = contact as unknown as Record<string, unknown>;
        const email = typeof record.email === 'string' ? byEmail.get(text(record.email).toLowerCase()) : undefined;
        if (email?.some((s) => matches(record, s)) || noEmail.some((s) => matches(record, s))) {
          candidates.push({ id: contact.id, scope: '', record });
        }
      }
    });
  } catch (error) {
    // A list that failed finds nothing: the contacts stay in doubt for the next run.
    if (!(error instanceof CrmError)) run.fail(error);
    return { seekers: [], candidates: [] };
  }
  return { seekers, candidates };
}

/** One list of each opportunity's activities, filtered by type and date, keeping those that match. */
async function listActivities(seekers: readonly Sought[], run: LookUpRun): Promise<Looked> {
  const byOpportunity = new Map<string, Sought[]>();
  for (const seeker of seekers) {
    const group = byOpportunity.get(seeker.scope) ?? [];
    byOpportunity.set(seeker.scope, group);
    group.push(seeker);
  }
  const looked: Sought[] = [];
  const candidates: Candidate[] = [];
  for (const [opportunityId, group] of byOpportunity) {
    if (run.stopping()) break;
    const types = new Set(group.map((s) => s.fields.type));
    const dates = group.map((s) => Date.parse(String(s.fields.activityDate)));
    // A second either side: the server may have kept the date to the second, truncated or rounded.
    const window = dates.every((at) => !Number.isNaN(at))
      ? { fromDate: new Date(Math.min(...dates) - 1000), toDate: new Date(Math.max(...dates) + 1000) }
      : {};
    const type = types.size === 1 ? [...types][0] : undefined;
    const found: Candidate[] = [];
    try {
      await run.call(async () => {
        const list = run.crm.activities.list(
          { opportunityId, limit: 200, ...window, ...(typeof type === 'string' ? { type: type as never } : {}) },
          { signal: run.signal },
        );
        for await (const activity of list) {
          const record = activity as unknown as Record<string, unknown>;
          if (group.some((s) => holds(record, s.fields))) found.push({ id: activity.id, scope: opportunityId, record });
        }
      });
    } catch (error) {
      if (!(error instanceof CrmError)) run.fail(error);
      continue;
    }
    looked.push(...group);
    candidates.push(...found);
  }
  return { seekers: looked, candidates };
}

/**
 * What the journal holds of other keys, read once for `type` when a look-up met candidates:
 * the candidates' ids it maps to a key, and the entries of keys not settled here (`ours`) that
 * are being created (another run's, under its claim) and match a candidate.
 */
async function othersOf(
  run: LookUpRun,
  type: SyncType,
  candidates: readonly Candidate[],
  ours: ReadonlySet<string>,
): Promise<{ mapped: Set<string>; rivals: Seeker[] }> {
  const mapped = new Set<string>();
  const rivals: Seeker[] = [];
  if (candidates.length === 0) return { mapped, rivals };
  const ids = new Set(candidates.map((c) => c.id));
  let after: string | undefined;
  for (;;) {
    const page = await run.journal.list(run.tenant, type, after, 1000);
    if (page.length === 0) break;
    after = page[page.length - 1]?.key;
    for (const entry of page) {
      if (entry.crmId !== undefined) {
        if (ids.has(entry.crmId)) mapped.add(entry.crmId);
        continue;
      }
      if (ours.has(entry.key)) continue;
      const rival = seekerOf(entry);
      if (rival && candidates.some((c) => c.scope === rival.scope && holds(c.record, rival.fields))) rivals.push(rival);
    }
  }
  return { mapped, rivals };
}
