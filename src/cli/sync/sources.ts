import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { columnsOf, type SourceType } from './columns';
import { csvRecords } from './csv-source';
import { ndjsonRecords } from './ndjson-source';
import { SourceError } from './source-error';

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
}

/** The records of a source file, read from its start as a stream, each time it is iterated. */
export function recordsOf(source: SourceFile): AsyncGenerator<SourceRecord> {
  return readRecords(source, createReadStream(source.path));
}

async function* readRecords(source: SourceFile, input: Readable): AsyncGenerator<SourceRecord> {
  try {
    if (source.format === 'csv') yield* csvRecords(input, columnsOf(source.type), source.file);
    else yield* ndjsonRecords(input, source.file);
  } catch (error) {
    if (error instanceof SourceError) throw error;
    const code = (error as { code?: unknown }).code;
    throw new SourceError(
      source.file,
      undefined,
      undefined,
      `cannot read the file${typeof code === 'string' ? ` (${code})` : ''}`,
    );
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
    const code = (error as { code?: unknown }).code;
    throw new SourceError(
      file,
      undefined,
      undefined,
      `cannot read the file${typeof code === 'string' ? ` (${code})` : ''}`,
    );
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

/**
 * The sources given (`--accounts customers.csv`, `--contacts -`), parents first. Standard input
 * (one list at most) is copied to a private temporary file as it streams in, so that it can be
 * checked whole before anything is sent, and read again by the run: never held in memory.
 */
export async function openSources(
  given: Readonly<Partial<Record<SourceType, string>>>,
  stdin: Readable,
  order: readonly SourceType[],
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
      sources.push({ type, file, path, format: await formatOf(path, file) });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { sources, close };
}
