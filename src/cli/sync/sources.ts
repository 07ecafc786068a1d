import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SourceType } from './columns';
import { type CsvRow, csvRows } from './csv-source';
import type { SourceMap, TypeMap } from './mapping/load';
import type { Delimiter, Encoding } from './mapping/schema';
import { ndjsonRecords } from './ndjson-source';
import { SourceError, unreadable } from './source-error';
import { type TextFormat, textFormatOf } from './text-file';

/** A source record as read: the engine's `{ key, data, ...Key }`, checked by the engine. */
export type SourceRecord = Record<string, unknown>;

/** One list of a sync's source: a file (or standard input, kept in a private temporary file). */
export interface SourceFile {
  readonly type: SourceType;
  /** As given on the command line: `customers.csv`, or `-`. */
  readonly file: string;
  /** Where it is read from. */
  readonly path: string;
  readonly format: 'csv' | 'ndjson';
  /**
   * A CSV file's encoding, byte order mark and separator, as read: rows written back for the user
   * to fix (`--failed`) go out in the same. Undefined for NDJSON (UTF-8).
   */
  readonly text: TextFormat | undefined;
  /** Its type's mapping (`--map`), whose `columnOf(field)` names the column a field came from. */
  readonly map: TypeMap | undefined;
}

/**
 * The rows of a source file as read, each with the record made of it: for a CSV file the row's
 * own text (`raw`) and line, which a writer of failed rows copies as they came.
 */
export function rowsOf(
  source: SourceFile,
): AsyncGenerator<CsvRow | { record: SourceRecord; raw: undefined; line: undefined }> {
  return readRows(source, createReadStream(source.path));
}

/** The records of a source file, read from its start as a stream, each time it is iterated. */
export async function* recordsOf(source: SourceFile): AsyncGenerator<SourceRecord> {
  for await (const row of rowsOf(source)) yield row.record;
}

async function* readRows(
  source: SourceFile,
  input: Readable,
): AsyncGenerator<CsvRow | { record: SourceRecord; raw: undefined; line: undefined }> {
  try {
    if (source.format === 'csv' && source.text) yield* csvRows(input, { ...source, text: source.text });
    else
      for await (const record of ndjsonRecords(input, source.file)) yield { record, raw: undefined, line: undefined };
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw unreadable(source.file, error);
  } finally {
    input.destroy();
  }
}

/**
 * Reads every record of a source once, and counts them: a bad file (unreadable, a wrong column, a
 * line that is not CSV or JSON) is refused before anything is sent, and the count is the total
 * the progress line shows. Nothing is kept but the count.
 */
export async function countRecords(source: SourceFile): Promise<number> {
  let count = 0;
  for await (const _ of recordsOf(source)) count++;
  return count;
}

/** What a file's first bytes say it is: NDJSON when they open a JSON object, else CSV. */
async function sniff(path: string, file: string): Promise<'csv' | 'ndjson'> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(256), 0, 256, 0);
    const head = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart();
    return head.startsWith('{') ? 'ndjson' : 'csv';
  } catch (error) {
    throw unreadable(file, error);
  } finally {
    await handle?.close();
  }
}

/** `.csv` is CSV and `.ndjson`, `.jsonl`, `.json` NDJSON; anything else (standard input) is sniffed. */
async function formatOf(path: string, file: string): Promise<'csv' | 'ndjson'> {
  const extension = extname(file).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.ndjson' || extension === '.jsonl' || extension === '.json') return 'ndjson';
  return sniff(path, file);
}

/** The source files of a command line, and how to remove what was made for them. */
export interface OpenedSources {
  readonly sources: readonly SourceFile[];
  /** Removes standard input's temporary copy, if one was made. */
  readonly close: () => Promise<void>;
}

/** How every CSV source is read: `--delimiter`, `--encoding`, `--map`; a warning goes to stderr. */
export interface ReadOptions {
  readonly delimiter: Delimiter | undefined;
  readonly encoding: Encoding | undefined;
  readonly map: SourceMap | undefined;
  readonly warn: (line: string) => void;
}

/**
 * The sources given (`--accounts customers.csv`, `--contacts -`), parents first. Standard input
 * (one list at most) is copied to a private temporary file as it streams in, so that it can be
 * checked whole before anything is sent, and read again by the run: never held in memory.
 */
export async function openSources(
  given: Readonly<Partial<Record<SourceType, string>>>,
  stdin: Readable,
  order: readonly SourceType[],
  read: ReadOptions = { delimiter: undefined, encoding: undefined, map: undefined, warn: () => {} },
): Promise<OpenedSources> {
  let temporary: string | undefined;
  const close = async () => {
    if (temporary) await rm(temporary, { recursive: true, force: true });
  };
  const sources: SourceFile[] = [];
  try {
    for (const type of order) {
      const file = given[type];
      if (file === undefined) continue;
      let path = file;
      if (file === '-') {
        temporary = await mkdtemp(join(tmpdir(), 'crm-sync-'));
        path = join(temporary, `${type}.in`);
        await pipeline(stdin, createWriteStream(path, { mode: 0o600 }));
      }
      const map = read.map?.get(type);
      const format = await formatOf(path, file);
      // A binary or compressed file is refused as such whatever its name, not as a bad row.
      const text = await textFormatOf(
        path,
        file,
        { delimiter: map?.delimiter ?? read.delimiter, encoding: map?.encoding ?? read.encoding },
        // NDJSON is UTF-8 whatever its head: only a CSV file is read as windows-1252.
        format === 'csv' ? read.warn : () => {},
      );
      if (format === 'ndjson' && map) {
        throw new SourceError(file, undefined, undefined, `--map maps CSV columns, and this is NDJSON`);
      }
      sources.push({ type, file, path, format, text: format === 'csv' ? text : undefined, map });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { sources, close };
}
