import type { Readable } from 'node:stream';
import { nearest } from '../../internal/endpoint/suggest';
import { SOURCE_FAULT } from '../../sync/source-fault';
import { columnsOf, type SourceType, type TypeColumns } from './columns';
import { FAILED_COLUMNS } from './failed-columns';
import { plainValue } from './mapping/convert';
import type { TypeMap } from './mapping/load';
import { withRaw } from './raw-record';
import { SourceError, shown, unreadable } from './source-error';
import { decodedStream, type TextFormat } from './text-file';

/** The longest CSV record read: a 10 MiB cell is taken, a runaway quote does not fill the memory. */
const MAX_RECORD = 64 * 1024 * 1024;

/** Where csv-parse's error happened, from the context it attaches; its message may quote a cell. */
function csvFault(error: unknown, file: string): SourceError {
  const { code, lines, column } = error as { code?: unknown; lines?: unknown; column?: unknown };
  const line = typeof lines === 'number' ? lines : undefined;
  const at = typeof column === 'number' ? column + 1 : undefined;
  const what: Record<string, string> = {
    CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed before the end of the file',
    CSV_INVALID_CLOSING_QUOTE: 'a closing quote is followed by something other than a comma or a line end',
    INVALID_OPENING_QUOTE: 'a quote inside a field that is not quoted (quote the field, and double the quote)',
    CSV_RECORD_INCONSISTENT_FIELDS_LENGTH: 'this row has not as many fields as the header',
    CSV_RECORD_INCONSISTENT_COLUMNS: 'this row has not as many fields as the header',
    CSV_MAX_RECORD_SIZE: `a row longer than ${MAX_RECORD} characters`,
    CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE:
      'a closing quote is followed by something other than a comma or a line end',
  };
  if (typeof code === 'string' && Object.hasOwn(what, code)) {
    return new SourceError(file, line, at, `not valid CSV: ${what[code]}`);
  }
  // Not csv-parse's: the file could not be read (ENOENT, EISDIR, EACCES).
  return unreadable(file, error);
}

/** The data fields a record of `type` must have, and the reference column that may stand for one. */
const STANDS_FOR: Readonly<Record<string, string>> = {
  accountId: 'accountKey',
  contactId: 'contactKey',
  opportunityId: 'opportunityKey',
};

/** A required field no column gives: refused once, before anything is sent, not once per row. */
function missingRequired(columns: TypeColumns, given: (name: string) => boolean): string | undefined {
  return columns.fields.find(
    (field) =>
      field.required && !given(field.name) && !(STANDS_FOR[field.name] && given(STANDS_FOR[field.name] as string)),
  )?.name;
}

/** A header read with `,` that is one column holding `;`: the file is `;`-separated. */
function semicolonHint(cells: readonly string[], format: TextFormat): string {
  return cells.length === 1 && format.delimiter === ',' && cells[0]?.includes(';')
    ? `; the header is one column holding ";": give --delimiter ';'`
    : '';
}

/** The header, checked: every column a field of the type (or `key`, or a reference), none twice. */
function headerOf(
  cells: readonly string[],
  columns: TypeColumns,
  file: string,
  format: TextFormat,
): (string | undefined)[] {
  cells.forEach((name, i) => {
    // The columns a --failed file adds: it loads again as it is, once fixed.
    if (FAILED_COLUMNS.includes(name)) return;
    if (!columns.names.includes(name)) {
      const near = nearest(name, columns.names);
      const hint = near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : '';
      throw new SourceError(
        file,
        1,
        i + 1,
        `${shown(name)} is not a column of ${columns.type}${hint}${semicolonHint(cells, format)}`,
      );
    }
    if (cells.indexOf(name) !== i) throw new SourceError(file, 1, i + 1, `the column ${shown(name)} is given twice`);
  });
  if (!cells.includes('key')) throw new SourceError(file, 1, undefined, 'the header has no "key" column');
  const missing = missingRequired(columns, (name) => cells.includes(name));
  if (missing) {
    throw new SourceError(
      file,
      1,
      undefined,
      `the header has no "${missing}" column, which every ${columns.type.replace(/s$/, '').replace(/ie$/, 'y')} needs`,
    );
  }
  return [...cells];
}

/** Where each mapped column is in the header: a column the mapping names and the header lacks is refused. */
function mappedHeader(cells: readonly string[], map: TypeMap, file: string, format: TextFormat): Map<string, number> {
  const at = new Map<string, number>();
  cells.forEach((name, i) => {
    const column = name.trim();
    if (!at.has(column)) at.set(column, i);
  });
  const need = (column: string, what: string) => {
    if (!at.has(column)) {
      throw new SourceError(
        file,
        1,
        undefined,
        `the column ${shown(column)} (${what} in ${map.file}) is not in the header${semicolonHint(cells, format)}`,
      );
    }
    if (cells.filter((name) => name.trim() === column).length > 1) {
      throw new SourceError(file, 1, undefined, `the column ${shown(column)} (${what}) is given twice`);
    }
  };
  need(map.key, `${map.type}.key`);
  for (const [name, column] of map.references) need(column, `${map.type}.${name}`);
  for (const reader of map.fields)
    if (reader.column !== undefined) need(reader.column, `${map.type}.fields.${reader.field}`);
  const columns = columnsOf(map.type);
  const missing = missingRequired(
    columns,
    (name) => map.references.has(name) || map.fields.some((reader) => reader.field === name),
  );
  if (missing) {
    throw new SourceError(
      file,
      undefined,
      undefined,
      `${map.file} maps no column to "${missing}", which ${map.type} need`,
    );
  }
  return at;
}

/** A row read with a mapping: `{ key, accountKey?, ..., data }`, or an invalid record naming the cell. */
function mappedRecord(
  cells: readonly string[],
  map: TypeMap,
  at: ReadonlyMap<string, number>,
): Record<string, unknown> {
  const cell = (column: string) => cells[at.get(column) as number];
  const record: Record<string, unknown> = {};
  const key = cell(map.key)?.trim();
  if (key) record.key = key;
  for (const [name, column] of map.references) {
    const value = cell(column)?.trim();
    if (value) record[name] = value;
  }
  const data: Record<string, unknown> = {};
  for (const reader of map.fields) {
    const read = reader.read(reader.column === undefined ? undefined : cell(reader.column));
    if ('fault' in read) {
      const column = reader.column === undefined ? 'its value' : `column ${shown(reader.column)}`;
      Object.assign(record, {
        [SOURCE_FAULT]: { field: `data.${reader.field}`, message: `${read.fault} (${column})` },
      });
      break;
    }
    if ('value' in read) data[reader.field] = read.value;
  }
  record.data = data;
  return record;
}

/** One record of a CSV file, with what a writer of its failed rows needs. */
export interface CsvRow {
  /** The record as the engine takes it. */
  readonly record: Record<string, unknown>;
  /** The row's text as read (decoded), without its line end: a quoted cell's line breaks are in it. */
  readonly raw: string;
  /** The 1-based line the row starts on. */
  readonly line: number;
}

/** A CSV source: its type, its name as given, how its bytes are text, and its mapping if it has one. */
export interface CsvInput {
  readonly type: SourceType;
  readonly file: string;
  readonly text: TextFormat;
  readonly map: TypeMap | undefined;
}

/**
 * The rows of a CSV file (RFC 4180: quoted fields with commas, quotes and line breaks in them,
 * CRLF), decoded as a stream in the source's encoding and read by csv-parse with its separator.
 * Without a mapping: `{ key, accountKey?, ..., data }` by column name, an empty cell an absent
 * field; with one, the columns it names, transformed. The header is checked before the first row
 * goes out (a missing required or mapped column is refused then), and any fault is a
 * {@link SourceError} with its line and column.
 */
export async function* csvRows(input: Readable, source: CsvInput): AsyncGenerator<CsvRow> {
  const { file, text: format, map } = source;
  // Loaded only for a CSV file: an NDJSON load never evaluates it.
  const { parse } = await import('csv-parse');
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD,
    delimiter: format.delimiter,
    raw: true,
    info: true,
  });
  const text = decodedStream(input, format, file);
  text.on('error', (error) => parser.destroy(error));
  input.on('error', (error) => parser.destroy(error));
  text.pipe(parser);
  const columns = columnsOf(source.type);
  const fields = new Map(columns.fields.map((field) => [field.name, field]));
  const references = new Set(columns.references);
  let header: (string | undefined)[] | undefined;
  let mapped: Map<string, number> | undefined;
  // The header row as read: a --failed file starts with it.
  let headerText = '';
  // csv-parse counts a row's lines once it has read the line end after it; the last row may have none.
  let next = 1;
  const lineOf = (raw: string, lines: number) => {
    const breaks = raw.split('\n').length - 1;
    const line = Math.max(lines - breaks - 1, next);
    next = line + breaks + 1;
    return line;
  };
  try {
    for await (const row of parser as AsyncIterable<{ record: string[]; raw: string; info: { lines: number } }>) {
      const cells = row.record;
      const line = lineOf(row.raw, row.info.lines);
      // csv-parse's raw text may hold the line ends around the row (of a blank line skipped too).
      const raw = row.raw.replace(/^[\r\n]+|\r?\n?$/g, '').replace(/\r$/, '');
      if (!header) {
        header = cells.map((name) => (FAILED_COLUMNS.includes(name) ? undefined : name));
        headerText = raw;
        if (map) mapped = mappedHeader(cells, map, file, format);
        else headerOf(cells, columns, file, format);
        continue;
      }
      if (map && mapped) {
        yield { record: withRaw(mappedRecord(cells, map, mapped), { text: raw, header: headerText }), raw, line };
        continue;
      }
      const record: Record<string, unknown> = {};
      const data: Record<string, unknown> = {};
      for (let i = 0; i < cells.length; i++) {
        const cell = cells[i] as string;
        const name = header[i];
        if (cell === '' || name === undefined) continue;
        if (name === 'key' || references.has(name)) record[name] = cell;
        else data[name] = plainValue(fields.get(name), cell);
      }
      record.data = data;
      yield { record: withRaw(record, { text: raw, header: headerText }), raw, line };
    }
    // An empty export is more likely cut short than meant: with --removed deactivate, an empty
    // list would deactivate every record of its type.
    if (!header)
      throw new SourceError(file, undefined, undefined, 'the file is empty: a CSV file starts with its header');
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw csvFault(error, file);
  } finally {
    text.unpipe(parser);
    input.unpipe();
    input.destroy();
    text.destroy();
    parser.destroy();
  }
}
