import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { CrmSync, SyncJournal, SyncJournalEntry, SyncResolution, SyncType } from '../../sync';
import { SENT_FIELDS, sentOf } from '../../sync/sent';
import { assign, type Candidate, holds, type Seeker, stampedDate } from '../../sync/settle';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import { absentRefusal } from './absent-guard';
import type { SyncContext } from './context';
import { sentText, valueText } from './render';
import { SourceError, unreadable } from './source-error';

/*
 * `crm sync resolve --match <export.csv> --type <type>`: the records in doubt of a type matched
 * against an export of the CRM's own records, on the fields that were sent, by the tolerant rule
 * (README.md, "When a run is killed").
 */

/** Fields compared without regard to case, as emails are: a CRM's UI or export may change a name's case. */
const NAME_FIELDS: ReadonlySet<string> = new Set(['name', 'firstName', 'lastName', 'email']);
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The export's rows: each CRM record's id and its cells, by the field each column names. */
interface Export {
  readonly rows: readonly Candidate[];
  /** The fields the export has a column of, by the API's names. */
  readonly fields: ReadonlySet<string>;
}

const lowered = (value: string): string => value.normalize('NFC').trim().toLowerCase();

/** A cell as it is compared: names in lower case; `true`/`false` in lower case. */
function cellOf(field: string, cell: string): string {
  if (NAME_FIELDS.has(field)) return lowered(cell);
  const word = lowered(cell);
  return word === 'true' || word === 'false' ? word : cell;
}

/**
 * A sent value as it is compared with a cell (always text): names in lower case, a boolean as
 * its word, a date as its instant (so that `2026-01-02` is the cell `2026-01-02T00:00:00Z`), an
 * object as its JSON. Numbers stay numbers: the rule compares a numeric cell by value.
 */
function sentValueOf(field: string, value: unknown): unknown {
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    if (NAME_FIELDS.has(field)) return lowered(value);
    if (DATE_ONLY.test(value.trim())) return `${value.trim()}T00:00:00Z`;
    return value;
  }
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

/**
 * Reads the export, as a stream: a CSV with a header, one column `id` (or `crmId`) and others
 * named as the API names the fields (case aside). Of each row it keeps the id and the cells of
 * the columns `keep` accepts (the fields sent of the records in doubt), so that an export of a
 * million rows and many columns holds a few strings a row. A repeated id is refused with its
 * line: the export would not say which row is the record.
 */
async function readExport(file: string, help: string, keep: (column: string) => boolean): Promise<Export> {
  // A directory streams nothing before its error: said as what it is, not as an unreadable file.
  if (
    await stat(file).then(
      (s) => s.isDirectory(),
      () => false,
    )
  ) {
    throw new UsageError(`--match ${file}: a directory, not an export: give the export's CSV file`, help);
  }
  const { parse } = await import('csv-parse');
  const input = createReadStream(file);
  const parser = parse({ bom: true, skip_empty_lines: true, info: true, max_record_size: 64 * 1024 * 1024 });
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  let names: string[] | undefined;
  let at = -1;
  let kept: number[] = [];
  const rows: Candidate[] = [];
  let dataRows = 0;
  const lineOf = new Map<string, number>();
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!names) {
        names = record.map((name) => name.trim());
        const idAt = names.findIndex((name) => name.toLowerCase() === 'id');
        at = idAt >= 0 ? idAt : names.findIndex((name) => name.toLowerCase() === 'crmid');
        if (at < 0)
          throw new SourceError(file, 1, undefined, 'the export has no "id" column: the CRM id of each record');
        kept = names.flatMap((name, i) => (i !== at && keep(name) ? [i] : []));
        continue;
      }
      dataRows++;
      const id = (record[at] ?? '').trim();
      if (id === '') continue;
      const first = lineOf.get(id);
      if (first !== undefined) {
        throw new SourceError(
          file,
          info.lines,
          at + 1,
          `the id ${JSON.stringify(valueText(id))} is on line ${first} too`,
        );
      }
      lineOf.set(id, info.lines);
      const cells: Record<string, unknown> = {};
      for (const i of kept) cells[names[i] as string] = record[i] ?? '';
      rows.push({ id, scope: '', record: cells });
    }
  } catch (error) {
    if (error instanceof SourceError) throw error;
    const { lines } = error as { lines?: unknown };
    // csv-parse's errors say their line; a file that cannot be read (ENOENT, EISDIR) does not.
    if (typeof lines === 'number') throw new SourceError(file, lines, undefined, 'not valid CSV');
    throw unreadable(file, error);
  } finally {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
  }
  if (!names) throw new UsageError(`--match ${file}: the file is empty: an export starts with its header`, help);
  // An export without a record would settle every record in doubt absent: a failed export, far
  // more often than a CRM that holds nothing (the empty list of --removed deactivate, refused alike).
  if (dataRows === 0) {
    throw new UsageError(
      `--match ${file}: the export has its header and no record: export the CRM's records again`,
      help,
    );
  }
  if (rows.length === 0) {
    throw new UsageError(`--match ${file}: no row of the export has an id: the id column is empty`, help);
  }
  return { rows, fields: new Set(names.filter((_, i) => i !== at)) };
}

/** The export's rows with their columns named by the fields sent (case aside), and their cells as compared. */
function candidatesOf(exported: Export, fields: ReadonlySet<string>): Candidate[] {
  const byLower = new Map([...fields].map((field) => [field.toLowerCase(), field]));
  return exported.rows.map(({ id, record }) => {
    const cells: Record<string, unknown> = {};
    for (const [column, cell] of Object.entries(record)) {
      const field = byLower.get(column.toLowerCase());
      if (field !== undefined) cells[field] = cellOf(field, String(cell));
    }
    return { id, scope: '', record: cells };
  });
}

/** What was sent of an entry in doubt, as a JSON object (an activity with the date the sync stamped). */
function sentData(entry: SyncJournalEntry): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(entry.data);
  } catch {
    return {};
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
  const body = { ...(data as Record<string, unknown>) };
  if (entry.type === 'activities' && body.activityDate === undefined && entry.attemptedAt !== undefined) {
    body.activityDate = stampedDate(entry.attemptedAt);
  }
  return body;
}

/** What --match does with one record in doubt. */
type Outcome =
  | { readonly action: 'settle'; readonly crmId: string }
  | { readonly action: 'absent' }
  | { readonly action: 'missing' }
  | { readonly action: 'ambiguous'; readonly matches: readonly string[] }
  | { readonly action: 'unmatchable' };

interface Decided {
  readonly entry: SyncJournalEntry;
  readonly outcome: Outcome;
  /** CRM records that match but that the journal maps to other keys: never adopted. */
  readonly taken: readonly { readonly crmId: string; readonly key: string }[];
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T/;
const textKey = (value: unknown): string | undefined =>
  typeof value === 'string' && !DATE_TIME.test(value.trim()) && value.trim() !== ''
    ? value.normalize('NFC').trim()
    : undefined;

/**
 * The candidates that hold a seeker's fields, found through an index of the first identifying
 * field it sent as text (compared as trimmed text, names already in lower case): thousands of
 * records not adopted, each compared with thousands of rows, took seconds.
 */
function matcher(candidates: readonly Candidate[], identifying: readonly string[]): (seeker: Seeker) => Candidate[] {
  const indexes = new Map<string, Map<string, Candidate[]>>();
  const indexOf = (field: string) => {
    let index = indexes.get(field);
    if (index) return index;
    index = new Map();
    indexes.set(field, index);
    for (const candidate of candidates) {
      const key = textKey(candidate.record[field]);
      if (key === undefined) continue;
      const same = index.get(key) ?? [];
      index.set(key, same);
      same.push(candidate);
    }
    return index;
  };
  return (seeker) => {
    const field = identifying.find((f) => textKey(seeker.fields[f]) !== undefined);
    const among =
      field === undefined ? candidates : (indexOf(field).get(textKey(seeker.fields[field]) as string) ?? []);
    return among.filter((c) => holds(c.record, seeker.fields));
  };
}

/** The journal's keys of the CRM ids it maps, for one type: one pass over its entries. */
async function mappedIds(journal: SyncJournal, tenant: string, type: SyncType): Promise<Map<string, string>> {
  const mapped = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const page = await journal.list(tenant, type, after, 1000);
    if (page.length === 0) return mapped;
    after = page[page.length - 1]?.key;
    for (const entry of page) if (entry.crmId !== undefined) mapped.set(entry.crmId, entry.key);
  }
}

/**
 * Matches the records in doubt of `type` against the export: a record is compared on each field
 * sent that the export has a column of, and must hold one of the type's identifying fields
 * among them. The export's records the journal maps to a key are never adopted; the others are
 * settled by the sync's own rule ({@link assign}): a record with one match is settled to it, one
 * with none is missing, and records that several match stay in doubt, unless they are the same
 * data and no more records match than there are of them (then one each).
 */
function decide(
  pending: readonly SyncJournalEntry[],
  exported: Export,
  mapped: ReadonlyMap<string, string>,
  absentIfMissing: boolean,
  type: SyncType,
): Decided[] {
  const identifying = SENT_FIELDS[type];
  const seekers = new Map<SyncJournalEntry, Seeker>();
  const allFields = new Set<string>();
  const byLower = new Map([...exported.fields].map((f) => [f.toLowerCase(), f]));
  for (const entry of pending) {
    const fields: Record<string, unknown> = {};
    // The identifying fields first: the matching indexes the rows by a seeker's first field
    // compared exactly, and an account's industry, shared by thousands, made every row a match to check.
    const sent = sentData(entry);
    const order = [...identifying.filter((f) => Object.hasOwn(sent, f)), ...Object.keys(sent)];
    for (const field of new Set(order)) {
      const value = sent[field];
      if (!byLower.has(field.toLowerCase())) continue;
      fields[field] = sentValueOf(field, value);
      allFields.add(field);
    }
    // Without one of its identifying fields to compare, a record stays in doubt: 'unmatchable'.
    if (identifying.some((field) => Object.hasOwn(fields, field))) seekers.set(entry, { scope: '', fields });
  }
  const candidates = candidatesOf(exported, allFields);
  const free = candidates.filter((c) => !mapped.has(c.id));
  const found = assign([...seekers.values()], free);
  const matchesOf = matcher(candidates, identifying);
  const decided: Decided[] = [];
  for (const entry of pending) {
    const seeker = seekers.get(entry);
    const outcome = seeker ? found.get(seeker) : undefined;
    if (!seeker || outcome === undefined) {
      decided.push({ entry, outcome: { action: 'unmatchable' }, taken: [] });
      continue;
    }
    if (typeof outcome === 'object') {
      decided.push({ entry, outcome: { action: 'settle', crmId: outcome.id }, taken: [] });
      continue;
    }
    // Not adopted: which records it matched, for the person who settles it.
    const matches = matchesOf(seeker);
    const taken = matches.flatMap((c) => {
      const key = mapped.get(c.id);
      return key === undefined ? [] : [{ crmId: c.id, key }];
    });
    if (outcome === 'ambiguous') {
      const ids = matches.filter((c) => !mapped.has(c.id)).map((c) => c.id);
      decided.push({ entry, outcome: { action: 'ambiguous', matches: ids }, taken });
    } else decided.push({ entry, outcome: { action: absentIfMissing ? 'absent' : 'missing' }, taken });
  }
  return decided;
}

function lineOf({ entry, outcome, taken }: Decided, applied: boolean): string {
  const record = `${entry.type} ${valueText(entry.key)}${sentText(sentOf(entry))}`;
  const takenText = taken.length
    ? `; ${taken.map((t) => `${valueText(t.crmId)} matches too but is ${valueText(t.key)}'s`).join(', ')}`
    : '';
  switch (outcome.action) {
    case 'settle':
      return `${applied ? 'settled' : 'would settle'} ${record} as ${valueText(outcome.crmId)}: the one record of the export that matches`;
    case 'absent':
      return `${applied ? 'settled' : 'would settle'} ${record} as absent: not in the export, the next apply creates it${takenText}`;
    case 'missing':
      return `in doubt ${record}: not in the export (with --absent-if-missing it is settled absent, and the next apply creates it)${takenText}`;
    case 'ambiguous':
      return `in doubt ${record}: ${outcome.matches.length} records of the export match (${outcome.matches.map((id) => valueText(id)).join(', ')}): find which by hand, then crm sync resolve${takenText}`;
    case 'unmatchable':
      return `in doubt ${record}: the export has no column of the fields that identify it (${SENT_FIELDS[entry.type].join(', ')})`;
  }
}

/**
 * `crm sync resolve --match <export.csv> --type <type> [--absent-if-missing] [--apply]`: what
 * settling the type's records in doubt against the export does, per record, then a summary; a
 * dry run unless `--apply`, which settles them all in one journal change. Exit 9 while records
 * would stay in doubt (or do), 0 when none.
 */
export async function resolveByMatch(
  { io, values, help }: SyncContext,
  sync: CrmSync,
  journal: SyncJournal,
  type: SyncType,
  file: string,
): Promise<number> {
  const tenant = sync.toJSON().tenantId;
  await journal.open();
  const pending = (await journal.pending(tenant)).filter((entry) => entry.type === type);
  // Of the export, only the columns of fields sent are kept.
  const sentFields = new Set(pending.flatMap((entry) => Object.keys(sentData(entry)).map((f) => f.toLowerCase())));
  const exported = await readExport(file, help, (column) => sentFields.has(column.toLowerCase()));
  const lower = new Set([...exported.fields].map((f) => f.toLowerCase()));
  if (!SENT_FIELDS[type].some((field) => lower.has(field.toLowerCase()))) {
    throw new UsageError(
      `--match ${file}: the export has none of the columns that identify ${type} (${SENT_FIELDS[type].join(', ')}), named as the API names them`,
      help,
    );
  }
  const mapped = await mappedIds(journal, tenant, type);
  const decided = decide(pending, exported, mapped, values['absent-if-missing'] === true, type);
  const settled = decided.flatMap(({ entry, outcome }): SyncResolution[] =>
    outcome.action === 'settle'
      ? [{ type, key: entry.key, crmId: outcome.crmId }]
      : outcome.action === 'absent'
        ? [{ type, key: entry.key, crmId: null }]
        : [],
  );
  const apply = values.apply === true;
  const count = (action: Outcome['action']) => decided.filter((d) => d.outcome.action === action).length;
  const summary = {
    type,
    inDoubt: decided.length,
    settled: count('settle'),
    absent: count('absent'),
    stillInDoubt: decided.length - settled.length,
    ambiguous: count('ambiguous'),
    notInExport: count('missing'),
    unmatchable: count('unmatchable'),
    applied: apply,
  };
  const refusal = values.force === true ? undefined : absentRefusal(file, type, summary.absent, summary.inDoubt);
  if (refusal !== undefined && apply) throw new UsageError(refusal, help);
  if (refusal !== undefined) io.stderr.write(`crm: --apply would refuse this: ${refusal}\n`);
  if (apply && settled.length) await sync.resolve(settled);
  const asText = io.stdout.isTTY === true && values.json !== true;
  let out = '';
  for (const d of decided) {
    out += asText
      ? `${lineOf(d, apply)}\n`
      : `${jsonText({ type, key: d.entry.key, sent: sentOf(d.entry), ...d.outcome, ...(d.taken.length ? { taken: d.taken } : {}) })}\n`;
  }
  const verb = apply ? '' : 'would be ';
  out += asText
    ? `${type} in doubt: ${summary.inDoubt}; ${verb}settled to an id: ${summary.settled}; ${verb}settled absent: ${summary.absent}; ${apply ? 'still' : 'would stay'} in doubt: ${summary.stillInDoubt} (${summary.ambiguous} matched by several, ${summary.notInExport} not in the export, ${summary.unmatchable} without a field to match).${apply ? '' : ' A dry run: --apply writes it.'}\n`
    : `${jsonText(summary)}\n`;
  await write(io.stdout, out);
  return summary.stillInDoubt > 0 ? EXIT.incomplete : EXIT.ok;
}
