import { readFile } from 'node:fs/promises';
import { nearest } from '../../../internal/endpoint/suggest';
import type { Field } from '../../commands';
import { UsageError } from '../../usage-error';
import { columnsOf, SOURCE_TYPES, type SourceType } from '../columns';
import {
  booleanReader,
  numberReader,
  plainValue,
  type Read,
  takesBoolean,
  takesDate,
  takesNumber,
  valuesReader,
} from './convert';
import { dateReaders, knownZone } from './dates';
import { type Delimiter, type Encoding, type FieldMapping, type SyncMap, SyncMapSchema } from './schema';

/** The largest mapping file read: a values map of many thousand entries fits, a runaway file does not. */
const MAX_MAP_BYTES = 16 * 1024 * 1024;

/** How one field is read: from a column (trimmed or not), or a constant. */
interface FieldReader {
  /** As the SDK names it: `annualRevenue`. */
  readonly field: string;
  /** The column read, or undefined for a constant. */
  readonly column: string | undefined;
  /** The cell (undefined for a constant) as the field's value. */
  readonly read: (cell: string | undefined) => Read;
}

/** One type's mapping, checked against the type's fields. */
export interface TypeMap {
  readonly type: SourceType;
  /** The key column. */
  readonly key: string;
  /** `accountKey` (and the other references) → the column holding it. */
  readonly references: ReadonlyMap<string, string>;
  readonly fields: readonly FieldReader[];
  readonly delimiter: Delimiter | undefined;
  readonly encoding: Encoding | undefined;
  /** The mapping file, for messages. */
  readonly file: string;
  /** The column a field (or `key`, a reference) is read from; undefined for a constant or one not mapped. */
  columnOf(field: string): string | undefined;
}

/** `--map <file>`, read and checked: each mapped type's reader. */
export type SourceMap = ReadonlyMap<SourceType, TypeMap>;

const where = (path: readonly PropertyKey[]): string => path.map(String).join('.') || 'the mapping';

/** A key `__proto__` anywhere: JSON.parse makes it an own key, which a copy would take for a prototype. */
function protoPath(value: unknown, path: string[]): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return [...path, key].join('.');
    const found = protoPath((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return undefined;
}

async function mapText(file: string, help: string): Promise<unknown> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_MAP_BYTES) throw new UsageError(`--map ${file}: larger than 16 MiB`, help);
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `--map ${file}: cannot read the file${typeof code === 'string' ? ` (${code})` : ' (not UTF-8)'}`,
      help,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--map ${file}: not valid JSON`, help);
  }
}

/** Reads and checks `--map <file>`: the shape, then each field against its type (exit 2 at start). */
export async function loadMap(file: string, help: string): Promise<SourceMap> {
  const json = await mapText(file, help);
  const proto = protoPath(json, []);
  if (proto) throw new UsageError(`--map ${file}: ${proto}: a key named "__proto__" is refused`, help);
  const parsed = SyncMapSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue?.code === 'unrecognized_keys' ? `: ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : '';
    const message = issue?.code === 'unrecognized_keys' ? 'unknown key' : (issue?.message ?? 'not a mapping');
    throw new UsageError(`--map ${file}: ${where(issue?.path ?? [])}: ${message}${keys}`, help);
  }
  const map: SyncMap = parsed.data;
  let dates: Awaited<ReturnType<typeof dateReaders>> | undefined;
  const out = new Map<SourceType, TypeMap>();
  for (const type of SOURCE_TYPES) {
    const given = map[type];
    if (!given) continue;
    const columns = columnsOf(type);
    const byName = new Map(columns.fields.map((field) => [field.name, field]));
    const references = new Map<string, string>();
    for (const name of columns.references) {
      const column = (given as Record<string, unknown>)[name];
      if (typeof column === 'string') references.set(name, column);
    }
    const fields: FieldReader[] = [];
    for (const [name, mapping] of Object.entries(given.fields)) {
      const at = `--map ${file}: ${type}.fields.${name}`;
      const field = byName.get(name);
      if (!field) {
        const near = nearest(name, [...byName.keys()]);
        const hint = near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : '';
        throw new UsageError(`${at}: ${type} have no field "${name}"${hint}`, help);
      }
      if (typeof mapping === 'object' && mapping.date && !dates) dates = await dateReaders();
      fields.push(readerOf(field, mapping, { type, at, help, trim: given.trim, empty: given.empty, dates }));
    }
    out.set(type, {
      type,
      key: given.key,
      references,
      fields,
      delimiter: given.delimiter,
      encoding: given.encoding,
      file,
      columnOf(field) {
        if (field === 'key') return given.key;
        return references.get(field) ?? fields.find((reader) => reader.field === field)?.column;
      },
    });
  }
  return out;
}

interface Context {
  readonly type: SourceType;
  readonly at: string;
  readonly help: string;
  readonly trim: boolean | undefined;
  readonly empty: 'absent' | 'empty-string' | undefined;
  readonly dates: Awaited<ReturnType<typeof dateReaders>> | undefined;
}

/** The transform of a field object, checked against the field's type. */
function transformOf(field: Field, mapping: Exclude<FieldMapping, string>, c: Context): (cell: string) => Read {
  const refuse = (what: string): never => {
    throw new UsageError(`${c.at}: ${what}`, c.help);
  };
  if (mapping.date) {
    if (!takesDate(field)) refuse(`"date" reads a date-time, and ${field.name} is not one`);
    const { format, timeZone } = mapping.date;
    if (!knownZone(timeZone)) refuse(`"${timeZone.slice(0, 80)}" is not a time zone (an IANA name: Europe/Berlin)`);
    const problem = c.dates?.problem(format);
    if (problem) refuse(`the date format ${JSON.stringify(format.slice(0, 80))}: ${problem}`);
    return c.dates?.reader(format, timeZone) ?? refuse('no date library');
  }
  if (mapping.number) {
    if (!takesNumber(field)) refuse(`"number" reads a number, and ${field.name} is not one`);
    const { decimal, thousands } = mapping.number;
    if (decimal === thousands) refuse('"decimal" and "thousands" must differ');
    return numberReader(decimal, thousands || undefined);
  }
  if (mapping.boolean) {
    if (!takesBoolean(field)) refuse(`"boolean" reads a boolean, and ${field.name} is not one`);
    const { true: yes, false: no } = mapping.boolean;
    const both = yes.find((word) => no.some((other) => other.trim().toLowerCase() === word.trim().toLowerCase()));
    if (both !== undefined) refuse(`${JSON.stringify(both)} is both true and false`);
    return booleanReader(yes, no);
  }
  if (mapping.values) {
    const allowed = field.schema.enum;
    for (const to of Object.values(mapping.values)) {
      if (allowed && !allowed.includes(to)) {
        refuse(`the values map gives ${JSON.stringify(to.slice(0, 80))}, not one of ${allowed.join(', ')}`);
      }
    }
    const values = valuesReader(mapping.values);
    return (cell) => {
      const read = values(cell);
      return 'value' in read ? { value: plainValue(field, read.value as string) } : read;
    };
  }
  return (cell) => ({ value: plainValue(field, cell) });
}

function readerOf(field: Field, given: FieldMapping, c: Context): FieldReader {
  const mapping = typeof given === 'string' ? { column: given } : given;
  const transform = transformOf(field, mapping, c);
  const trim = mapping.trim ?? c.trim ?? true;
  const empty = mapping.empty ?? c.empty ?? 'absent';
  const fromCell = (raw: string): Read => {
    const cell = trim ? raw.trim() : raw;
    if (cell === '') return empty === 'absent' ? { absent: true } : { value: '' };
    return transform(cell);
  };
  if (mapping.value === undefined) {
    return { field: field.name, column: mapping.column, read: (cell) => fromCell(cell ?? '') };
  }
  const constant = mapping.value;
  if (typeof constant !== 'string') {
    const fits = typeof constant === 'number' ? takesNumber(field) : takesBoolean(field);
    if (!fits) throw new UsageError(`${c.at}: the value ${String(constant)} is not a ${field.name}`, c.help);
    return { field: field.name, column: undefined, read: () => ({ value: constant }) };
  }
  const read = fromCell(constant);
  if ('fault' in read) throw new UsageError(`${c.at}: the value ${read.fault}`, c.help);
  return { field: field.name, column: undefined, read: () => read };
}
