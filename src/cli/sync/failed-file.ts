import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../usage-error';
import type { SourceType } from './columns';
import { FAILED_COLUMNS } from './failed-columns';
import type { FailedRows, RowFailure } from './failed-rows';
import { type Input, refuseOverwrite } from './paths';
import { rawOf } from './raw-record';
import { replaceFile } from './replace-file';
import { recordsOf, type SourceFile } from './sources';
import { encodeText, type TextFormat } from './text-file';

/** How a source file's text is written back: its delimiter (CSV), its encoding, its byte order mark, its line end. */
export type FailedFormat = TextFormat;

/** A field's column in the source (a mapping's), or undefined where the column is the field's name. */
export type ColumnOf = (type: SourceType, field: string) => string | undefined;

/** Where `--failed` writes: one file (one source), or a directory with a file per source. */
export interface FailedTarget {
  readonly directory: string | undefined;
  /** The file each source's failed rows go to. */
  readonly files: ReadonlyMap<SourceFile, string>;
}

const code = (error: unknown): string => {
  const c = (error as { code?: unknown }).code;
  return typeof c === 'string' ? ` (${c})` : '';
};

/** The file name a source's failed rows take in a `--failed` directory: the source's own, or `<type>.<format>` for `-`. */
function nameOf(source: SourceFile, taken: ReadonlySet<string>): string {
  const own = source.file === '-' ? `${source.type}.${source.format}` : basename(source.file);
  // Two sources of one name (in/accounts.csv, old/accounts.csv): the type tells them apart.
  return taken.has(own) ? `${source.type}-${own}` : own;
}

/**
 * Checks `--failed` before anything is sent: with one source a file whose directory exists, with
 * several a directory (made if missing, its parent existing); never one of the command's inputs
 * (a source, the journal, the report), compared as `--report` is.
 */
export async function failedTarget(
  path: string,
  sources: readonly SourceFile[],
  inputs: readonly Input[],
  help: string,
): Promise<FailedTarget> {
  const existing = await stat(path).catch(() => undefined);
  const parent = dirname(resolve(path));
  const parentStats = await stat(parent).catch(() => undefined);
  if (!parentStats?.isDirectory()) {
    throw new UsageError(`--failed ${path}: the directory ${parent} does not exist; make it first`, help);
  }
  if (sources.length === 1) {
    const [source] = sources as [SourceFile];
    if (existing?.isDirectory()) {
      throw new UsageError(`--failed ${path} is a directory: with one source, --failed names a file`, help);
    }
    await refuseOverwrite('--failed', path, inputs, help);
    return { directory: undefined, files: new Map([[source, path]]) };
  }
  if (existing && !existing.isDirectory()) {
    throw new UsageError(
      `--failed ${path} is a file: with several sources, --failed names a directory (a file each source)`,
      help,
    );
  }
  const files = new Map<SourceFile, string>();
  const taken = new Set<string>();
  for (const source of sources) {
    const name = nameOf(source, taken);
    taken.add(name);
    const file = join(path, name);
    await refuseOverwrite('--failed', file, inputs, help);
    files.set(source, file);
  }
  if (!existing) {
    await mkdir(path, { mode: 0o700 }).catch((error: unknown) => {
      throw new UsageError(`--failed: cannot make the directory ${path}${code(error)}`, help);
    });
  }
  return { directory: path, files };
}

/** A cell of ours (a message, a field) as CSV: quoted when it holds the delimiter, a quote or a line end. */
function cell(value: string, delimiter: string): string {
  return value.includes(delimiter) || /["\r\n]/.test(value) || value !== value.trim()
    ? `"${value.replaceAll('"', '""')}"`
    : value;
}

/** A CSV row's cells as written (quotes kept), split at the delimiters outside quotes. */
function rawCells(text: string, delimiter: string): string[] {
  const cells: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text.startsWith(delimiter, i)) {
      cells.push(text.slice(start, i));
      start = i + delimiter.length;
    }
  }
  cells.push(text.slice(start));
  return cells;
}

/** The header's columns a `--failed` file added before (a failed file that failed again): left out, then written anew. */
function ourColumns(header: string, delimiter: string): ReadonlySet<number> {
  const ours = new Set<number>();
  rawCells(header, delimiter).forEach((name, i) => {
    if (FAILED_COLUMNS.includes(name.trim().replace(/^"|"$/g, ''))) ours.add(i);
  });
  return ours;
}

const without = (text: string, delimiter: string, ours: ReadonlySet<number>): string =>
  ours.size === 0
    ? text
    : rawCells(text, delimiter)
        .filter((_, i) => !ours.has(i))
        .join(delimiter);

/** What a source's `--failed` file holds, and how it is written. */
interface Writer {
  header(raw: string | undefined): string | undefined;
  row(text: string, failure: RowFailure, field: string): string;
}

function writerOf(source: SourceFile, delimiter: string, lineEnd: string): Writer {
  if (source.format === 'ndjson') {
    return {
      header: () => undefined,
      row: (text, failure, field) => {
        const record = JSON.parse(text) as Record<string, unknown>;
        record.error = failure.message;
        record.field = field;
        return `${JSON.stringify(record)}\n`;
      },
    };
  }
  let ours: ReadonlySet<number> = new Set();
  return {
    header: (raw) => {
      if (raw === undefined) return undefined;
      ours = ourColumns(raw, delimiter);
      return `${without(raw, delimiter, ours)}${delimiter}error${delimiter}field${lineEnd}`;
    },
    row: (text, failure, field) =>
      `${without(text, delimiter, ours)}${delimiter}${cell(failure.message, delimiter)}${delimiter}${cell(field, delimiter)}${lineEnd}`,
  };
}

/** What one source's `--failed` file got. */
export interface FailedWritten {
  readonly source: SourceFile;
  readonly path: string;
  readonly rows: number;
}

/**
 * Writes each failed or invalid row of the sources (and each held back by a parent that failed)
 * as it was read, with `error` and `field` added, in the source's format, delimiter and encoding:
 * fixed, the file loads again. Each file is written beside its place and renamed into it. A source
 * with no failed row gets no file, and the one an earlier run left is removed (loaded again, it
 * would send rows that no longer failed).
 */
export async function writeFailed(
  target: FailedTarget,
  rows: FailedRows,
  options: { readonly formatOf: (source: SourceFile) => FailedFormat; readonly columnOf: ColumnOf },
): Promise<FailedWritten[]> {
  const written: FailedWritten[] = [];
  for (const [source, path] of target.files) {
    if (!rows.has(source.type)) {
      await rm(path, { force: true });
      continue;
    }
    const count = await writeOne(source, path, rows, options);
    written.push({ source, path, rows: count });
  }
  return written;
}

async function writeOne(
  source: SourceFile,
  path: string,
  rows: FailedRows,
  { formatOf, columnOf }: { readonly formatOf: (source: SourceFile) => FailedFormat; readonly columnOf: ColumnOf },
): Promise<number> {
  const { delimiter, encoding, bom, lineEnd } = formatOf(source);
  const writer = writerOf(source, delimiter, lineEnd);
  return replaceFile(
    path,
    (text) => encodeText(text, encoding),
    async (write) => {
      let count = 0;
      let headed = false;
      if (bom) await write('\uFEFF');
      for await (const record of recordsOf(source)) {
        const raw = rawOf(record);
        if (!headed) {
          await write(writer.header(raw?.header) ?? '');
          headed = true;
        }
        const failure = rows.next(source.type, record.key);
        if (!failure || !raw) continue;
        const fields = failure.fields.map((field) => columnOf(source.type, field) ?? field).join(', ');
        await write(writer.row(raw.text, failure, fields));
        count++;
      }
      return count;
    },
  );
}

/** A source's format as its reader found it (`--delimiter`, `--encoding`, its BOM); an NDJSON source's is UTF-8. */
export const formatOfSource = (source: SourceFile): FailedFormat =>
  source.text ?? { delimiter: ',', encoding: 'utf-8', bom: false, lineEnd: '\n' };

/** The column a field of `sources` came from: its type's mapping's, or the field's own name. */
export const columnOfSources =
  (sources: readonly SourceFile[]): ColumnOf =>
  (type, field) =>
    sources.find((source) => source.type === type)?.map?.columnOf(field);
