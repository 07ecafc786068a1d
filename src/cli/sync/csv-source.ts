import type { Readable } from 'node:stream';
import { nearest } from '../../internal/endpoint/suggest';
import type { Field, FieldSchema } from '../commands';
import type { TypeColumns } from './columns';
import { FAILED_COLUMNS } from './failed-columns';
import { rowText, withRaw } from './raw-record';
import { SourceError, shown } from './source-error';

/** The longest CSV record read: a 10 MiB cell is taken, a runaway quote does not fill the memory. */
const MAX_RECORD = 64 * 1024 * 1024;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

const typesOf = (schema: FieldSchema): readonly string[] =>
  typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);

/**
 * A cell as its field's type, from the same JSON Schema the CLI's flags read: a number where the
 * field takes one and the cell is one, `true`/`false` for a boolean. Anything else stays text,
 * for the engine's schema to refuse with its own message (the record is then `failed`), as
 * `crm <type> create` leaves it to the SDK. A whole number past 2^53 stays text too: rounded, it
 * would be another number.
 */
function cellValue(field: Field | undefined, cell: string): unknown {
  if (!field) return cell;
  const types = typesOf(field.schema);
  if ((types.includes('number') || types.includes('integer')) && NUMBER.test(cell.trim())) {
    const value = Number(cell);
    return /^\s*[-+]?\d+\s*$/.test(cell) && !Number.isSafeInteger(value) ? cell : value;
  }
  if (types.includes('boolean')) {
    const word = cell.trim().toLowerCase();
    if (word === 'true' || word === 'false') return word === 'true';
  }
  return cell;
}

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
  const errno = typeof code === 'string' ? ` (${code})` : '';
  return new SourceError(file, undefined, undefined, `cannot read the file${errno}`);
}

/** The header, checked: every column a field of the type (or `key`, or a reference), none twice. */
function headerOf(cells: readonly string[], columns: TypeColumns, file: string): (string | undefined)[] {
  cells.forEach((name, i) => {
    // The columns a --failed file adds: it loads again as it is, once fixed.
    if (FAILED_COLUMNS.includes(name)) return;
    if (!columns.names.includes(name)) {
      const near = nearest(name, columns.names);
      const hint = near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : '';
      throw new SourceError(file, 1, i + 1, `${shown(name)} is not a column of ${columns.type}${hint}`);
    }
    if (cells.indexOf(name) !== i) throw new SourceError(file, 1, i + 1, `the column ${shown(name)} is given twice`);
  });
  if (!cells.includes('key')) throw new SourceError(file, 1, undefined, 'the header has no "key" column');
  return cells.map((name) => (FAILED_COLUMNS.includes(name) ? undefined : name));
}

/**
 * The records of a CSV file (RFC 4180: quoted fields with commas, quotes and line breaks in them,
 * a byte order mark, CRLF), read as a stream by csv-parse: `{ key, accountKey?, ..., data }`, an
 * empty cell being an absent field. The header is checked before the first record goes out, and
 * any fault is a {@link SourceError} with its line and column.
 */
export async function* csvRecords(
  input: Readable,
  columns: TypeColumns,
  file: string,
): AsyncGenerator<Record<string, unknown>> {
  // Loaded only for a CSV file: an NDJSON load never evaluates it.
  const { parse } = await import('csv-parse');
  // raw: each row's text as read, which --failed writes back as it came.
  const parser = parse({ bom: true, skip_empty_lines: true, max_record_size: MAX_RECORD, raw: true });
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  const fields = new Map(columns.fields.map((field) => [field.name, field]));
  const references = new Set(columns.references);
  let header: (string | undefined)[] | undefined;
  let headerText = '';
  try {
    for await (const { record: cells, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      if (!header) {
        header = headerOf(cells, columns, file);
        headerText = rowText(raw);
        continue;
      }
      const record: Record<string, unknown> = {};
      const data: Record<string, unknown> = {};
      for (let i = 0; i < cells.length; i++) {
        const cell = cells[i] as string;
        const name = header[i];
        if (cell === '' || name === undefined) continue;
        if (name === 'key' || references.has(name)) record[name] = cell;
        else data[name] = cellValue(fields.get(name), cell);
      }
      record.data = data;
      yield withRaw(record, { text: rowText(raw), header: headerText });
    }
    // An empty export is more likely cut short than meant: with --removed deactivate, an empty
    // list would deactivate every record of its type.
    if (!header)
      throw new SourceError(file, undefined, undefined, 'the file is empty: a CSV file starts with its header');
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw csvFault(error, file);
  } finally {
    input.unpipe(parser);
    input.destroy();
    parser.destroy();
  }
}
