import { UsageError } from '../usage-error';

/** The most of a cell or a column's name that a message repeats. */
const SHOWN = 80;

/** `text` for a message: JSON-quoted, and cut at 80 characters (a 10 MiB cell is not repeated). */
export const shown = (text: string): string => JSON.stringify(text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);

/**
 * A source file that cannot be read as records: unreadable, a column that is no field, a line
 * that is not CSV or JSON. Exits 2, as any bad input does, before anything is sent; the message
 * says where (`customers.csv:1:4`) and never more than 80 characters of what is there.
 */
export class SourceError extends UsageError {
  /** The file as given (`-` is standard input). */
  readonly file: string;
  /** 1-based; undefined when the fault is the file's, not a line's (unreadable). */
  readonly line: number | undefined;
  /** 1-based: a CSV field, or a character of an NDJSON line. */
  readonly column: number | undefined;

  constructor(file: string, line: number | undefined, column: number | undefined, message: string) {
    const where = [file === '-' ? 'standard input' : file, line, line === undefined ? undefined : column]
      .filter((part) => part !== undefined)
      .join(':');
    super(`${where}: ${message}`, 'crm sync --help');
    this.file = file;
    this.line = line;
    this.column = column;
  }
}

/**
 * A file that cannot be read (missing, a directory, no permission), as a {@link SourceError}
 * naming the system's code (`cannot read the file (ENOENT)`); `why` says it otherwise.
 */
export function unreadable(file: string, error: unknown, why = 'cannot read the file'): SourceError {
  const code = (error as { code?: unknown } | null)?.code;
  return new SourceError(file, undefined, undefined, `${why}${typeof code === 'string' ? ` (${code})` : ''}`);
}
