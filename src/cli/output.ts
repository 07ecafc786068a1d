import type { Writable } from 'node:stream';
import type { Page, PagePromise } from '../core/page';
import type { Redact } from '../internal/report/redaction';

/** Where a command writes, and whether a person is watching each stream. */
export interface Streams {
  readonly stdout: Writable & { readonly isTTY?: boolean };
  readonly stderr: Writable & { readonly isTTY?: boolean };
}

/** Writes, and when the stream's buffer is full waits for it to drain: memory stays bounded. */
export async function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      if (error) reject(error);
      else resolve();
    };
    stream.once('drain', done);
    stream.once('error', done);
    // A reader that went away (`| head -1`) closes the pipe without draining it.
    stream.once('close', done);
  });
}

/**
 * What JSON leaves as it is but a reader may act on: the C1 control characters (a terminal may
 * read U+009B as the start of an escape sequence, so a hostile server's string could drive it),
 * the line and paragraph separators U+2028 and U+2029 (a reader that splits on Unicode line
 * boundaries, as Python's `splitlines()` does, cuts an NDJSON record in two), and the bidi
 * controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), which change the order a
 * terminal shows text in. Escaped, the JSON means the same (they can only occur inside strings).
 */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with each character `pattern` finds written as `\\uXXXX`: JSON's escape, readable anywhere. */
export const escaped = (text: string, pattern: RegExp): string =>
  text.replace(pattern, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** JSON text with what a reader may act on escaped (see `UNSAFE_IN_JSON`): the same JSON. */
export const safeJson = (json: string): string => escaped(json, UNSAFE_IN_JSON);

/** JSON of a value, safe to show on a terminal. */
export const jsonText = (value: unknown, indent?: number): string => safeJson(JSON.stringify(value, null, indent));

/** A result as JSON: indented for a person at a terminal, one line for a script. */
export const printJson = (streams: Streams, value: unknown): Promise<void> =>
  write(streams.stdout, `${jsonText(value, streams.stdout.isTTY ? 2 : undefined)}\n`);

/** One page as the API gives it: its records and the server's `pagination`. */
export const pageJson = (page: Page<{ id: string }>): { data: readonly unknown[]; pagination: unknown } => ({
  data: page.data,
  pagination: page.pagination,
});

/** How often the progress line is redrawn. */
const PROGRESS_MS = 100;

/** The `--all` progress line on stderr: only when a person watches stderr. */
class Progress {
  readonly #stderr: Streams['stderr'] | undefined;
  readonly #start = performance.now();
  #drawn = 0;
  /** Whether the line is on the screen now (not erased for a record). */
  #shown = false;
  records = 0;
  pages = 0;

  constructor(stderr: Streams['stderr']) {
    this.#stderr = stderr.isTTY ? stderr : undefined;
  }

  update(force = false): void {
    const now = performance.now();
    if (!this.#stderr || (!force && this.#shown && now - this.#drawn < PROGRESS_MS)) return;
    this.#drawn = now;
    this.#shown = true;
    const perSecond = Math.round(this.records / Math.max((now - this.#start) / 1000, 0.001));
    const n = (value: number) => value.toLocaleString('en-US');
    // \r and "erase line": the line is redrawn in place.
    const count = (value: number, noun: string) => `${n(value)} ${noun}${value === 1 ? '' : 's'}`;
    this.#stderr.write(
      `\r\x1b[K${count(this.records, 'record')}, ${count(this.pages, 'page')}, ${n(perSecond)} records/s`,
    );
  }

  /**
   * Erases the line before records go to stdout on the same terminal, so that no record starts
   * after the progress text; the next update draws it again below them.
   */
  clear(): void {
    if (!this.#stderr || !this.#shown) return;
    this.#stderr.write('\r\x1b[K');
    this.#shown = false;
  }

  end(): void {
    if (!this.#stderr) return;
    this.update(true);
    this.#stderr.write('\n');
  }
}

/**
 * Every record of a list as NDJSON, page by page as they arrive (`for await` over the SDK's
 * pages, with its prefetch), so an export of any size holds a few pages in memory at a time.
 * Stops after `max` records when given. Each record passes `redact`, as every result does.
 */
export async function printAll(
  streams: Streams,
  list: PagePromise<{ id: string }>,
  max: number | undefined,
  redact: Redact,
): Promise<void> {
  // Even `--max 0` waits for the first page: the list's request is under way, and its failure
  // (bad input, a refused key) is told as any other.
  const progress = new Progress(streams.stderr);
  try {
    for await (const page of list.pages()) {
      const records = max === undefined ? page.data : page.data.slice(0, max - progress.records);
      let lines = '';
      for (const record of records) lines += `${jsonText(redact(record))}\n`;
      progress.records += records.length;
      progress.pages++;
      if (lines) {
        if (streams.stdout.isTTY) progress.clear();
        await write(streams.stdout, lines);
      }
      progress.update();
      if (max !== undefined && progress.records >= max) break;
    }
  } finally {
    progress.end();
  }
}
