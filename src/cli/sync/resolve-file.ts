import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { CrmValidationError } from '../../core/errors';
import type { CrmSync, SyncResolution, SyncType } from '../../sync';
import { EXIT } from '../failure';
import { UsageError } from '../usage-error';
import { SOURCE_TYPES } from './columns';
import type { SyncContext } from './context';
import { SourceError, shown, unreadable } from './source-error';

/** The rows of a `--from` file, with the line of each (the header is line 1). */
interface ResolutionRows {
  readonly records: readonly SyncResolution[];
  readonly lines: readonly number[];
}

/** The most refused rows written out one a line; past it, a count. */
const SHOWN_REFUSALS = 50;

/** A CRM id cell: empty, or the word `absent`, says the record is not in the CRM. */
function crmIdOf(value: unknown): string | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return undefined;
  const id = value.trim();
  return id === '' || id.toLowerCase() === 'absent' ? null : id;
}

/** One row as a record to settle, or a {@link SourceError} at its line. */
function rowOf(row: Readonly<Record<string, unknown>>, file: string, line: number): SyncResolution {
  const type = typeof row.type === 'string' ? row.type.trim() : row.type;
  if (!SOURCE_TYPES.includes(type as SyncType)) {
    throw new SourceError(
      file,
      line,
      undefined,
      `the type must be accounts, contacts, opportunities or activities, not ${shown(String(type))}`,
    );
  }
  if (typeof row.key !== 'string' || row.key === '') throw new SourceError(file, line, undefined, 'the key is empty');
  const crmId = crmIdOf(row.crmId);
  if (crmId === undefined) {
    throw new SourceError(file, line, undefined, 'the crmId must be the CRM id, empty, or "absent"');
  }
  return { type: type as SyncType, key: row.key, crmId };
}

/** The column names that say the CRM id: `crmId` as `--ids` writes it, or `id`. */
const ID_COLUMNS = ['crmid', 'id'];

function csvRows(text: string, file: string, parse: typeof import('csv-parse/sync').parse): ResolutionRows {
  let parsed: { record: string[]; info: { lines: number } }[];
  try {
    parsed = parse(text, { bom: true, skip_empty_lines: true, info: true }) as never;
  } catch (error) {
    const { lines } = error as { lines?: unknown };
    throw new SourceError(file, typeof lines === 'number' ? lines : undefined, undefined, 'not valid CSV');
  }
  const [header, ...rows] = parsed;
  if (!header)
    throw new SourceError(file, undefined, undefined, 'the file is empty: a CSV file starts with its header');
  const names = header.record.map((name) => name.trim().toLowerCase());
  const typeAt = names.indexOf('type');
  const keyAt = names.indexOf('key');
  const idAt = names.findIndex((name) => ID_COLUMNS.includes(name));
  if (names.filter((name) => ID_COLUMNS.includes(name)).length > 1) {
    throw new SourceError(file, 1, undefined, 'give the CRM id as one column, "crmId" or "id", not both');
  }
  if (typeAt < 0 || keyAt < 0 || idAt < 0) {
    throw new SourceError(file, 1, undefined, 'the header needs the columns type, key and crmId (or id)');
  }
  const records: SyncResolution[] = [];
  const lines: number[] = [];
  for (const { record, info } of rows) {
    records.push(rowOf({ type: record[typeAt], key: record[keyAt], crmId: record[idAt] ?? '' }, file, info.lines));
    lines.push(info.lines);
  }
  return { records, lines };
}

function ndjsonRows(text: string, file: string): ResolutionRows {
  const records: SyncResolution[] = [];
  const lines: number[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/\r$/, '');
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new SourceError(file, i + 1, undefined, 'not valid JSON');
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new SourceError(file, i + 1, undefined, 'not a JSON object ({ "type": ..., "key": ..., "crmId": ... })');
      }
      const row = value as Record<string, unknown>;
      if (Object.hasOwn(row, 'crmId') && Object.hasOwn(row, 'id')) {
        throw new SourceError(file, i + 1, undefined, 'give the CRM id as one field, "crmId" or "id", not both');
      }
      const crmId = Object.hasOwn(row, 'crmId') ? row.crmId : Object.hasOwn(row, 'id') ? row.id : null;
      records.push(rowOf({ type: row.type, key: row.key, crmId }, file, i + 1));
      lines.push(i + 1);
    });
  return { records, lines };
}

/**
 * The records a `--from` file settles: CSV (a header with the columns `type`, `key` and `crmId`,
 * or `id` for it, as `--ids` writes them; other columns ignored) or NDJSON (`{ "type", "key",
 * "crmId" }` a line, or `id`). An empty CRM id, `absent` or null says the record is not in the
 * CRM. `.csv` is CSV, `.ndjson`, `.jsonl` and `.json` NDJSON, and any other file is NDJSON when
 * it starts with `{`. A row that cannot be read is a {@link SourceError} at its line.
 */
async function readResolutions(file: string): Promise<ResolutionRows> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const directory = (error as { code?: unknown }).code === 'EISDIR';
    throw unreadable(file, error, directory ? 'a directory: give the file of rows' : undefined);
  }
  const extension = extname(file).toLowerCase();
  const ndjson =
    extension === '.ndjson' ||
    extension === '.jsonl' ||
    extension === '.json' ||
    (extension !== '.csv' &&
      text
        .replace(/^\uFEFF/, '')
        .trimStart()
        .startsWith('{'));
  if (ndjson) return ndjsonRows(text, file);
  const { parse } = await import('csv-parse/sync');
  return csvRows(text, file, parse);
}

/**
 * `crm sync resolve --from <file>`: settles every row of the file in one journal change, or none.
 * A row for a record that is not in doubt (or a CRM id the journal gives another key) is refused
 * with its line, each on stderr, and nothing of the file is applied (exit 2).
 */
export async function resolveFromFile({ io, values, help }: SyncContext, sync: CrmSync, file: string): Promise<number> {
  const { records, lines } = await readResolutions(file);
  if (records.length === 0) throw new UsageError(`--from ${file}: no row to settle`, help);
  try {
    await sync.resolve(records, { force: values.force === true });
  } catch (error) {
    if (!(error instanceof CrmValidationError)) throw error;
    const refused = error.issues.filter((issue) => typeof issue.path[0] === 'number');
    // Past its first refusals, the SDK counts the rest in an issue of no index.
    const beyond = error.issues
      .filter((issue) => typeof issue.path[0] !== 'number')
      .reduce((n, issue) => n + Number(/(\d+) more/.exec(issue.message)?.[1] ?? 0), 0);
    const said = refused
      .slice(0, SHOWN_REFUSALS)
      .map((issue) => `${file}:${lines[issue.path[0] as number] ?? '?'}: ${issue.message}`);
    const rest = refused.length - said.length + beyond;
    const more = rest > 0 ? [`… and ${rest} more rows refused`] : [];
    io.stderr.write(`${[...said, ...more].join('\n')}\n`);
    throw new UsageError(`--from ${file}: rows refused; nothing of the file was applied`, help);
  }
  const absent = records.filter((r) => r.crmId === null).length;
  io.stderr.write(
    `settled ${records.length} records from ${file} in one change: ${records.length - absent} to the CRM ids given, ${absent} absent (the next apply creates them)\n`,
  );
  return EXIT.ok;
}
