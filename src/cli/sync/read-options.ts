import { UsageError } from '../usage-error';
import type { SyncIo, Values } from './context';
import { DELIMITERS, ENCODINGS } from './mapping/schema';
import type { ReadOptions } from './sources';

/** One of `allowed`, or a usage error naming them. */
function oneOf<T extends string>(flag: string, value: unknown, allowed: readonly T[], help: string): T | undefined {
  if (value === undefined) return undefined;
  // `--delimiter '\t'` as a shell passes it, and a real tab, are the tab.
  const given = flag === 'delimiter' && (value === '\t' || value === '\\t') ? 'tab' : String(value).toLowerCase();
  const named = flag === 'encoding' && given === 'utf8' ? 'utf-8' : given;
  if (!allowed.includes(named as T)) {
    throw new UsageError(
      `--${flag} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, not ${JSON.stringify(String(value).slice(0, 80))}`,
      help,
    );
  }
  return named as T;
}

/** `--delimiter`, `--encoding` and `--map`, checked before any file is opened (the mapping whole). */
export async function readOptionsOf(values: Values, io: SyncIo, help: string): Promise<ReadOptions> {
  const delimiter = oneOf('delimiter', values.delimiter, DELIMITERS, help);
  const encoding = oneOf('encoding', values.encoding, ENCODINGS, help);
  let map: ReadOptions['map'];
  if (values.map !== undefined) {
    if (typeof values.map !== 'string' || values.map === '') throw new UsageError('--map needs a file', help);
    // Loaded only with --map: date-fns comes with it, when a mapping has a date.
    const { loadMap } = await import('./mapping/load');
    map = await loadMap(values.map, help);
  }
  return { delimiter, encoding, map, warn: (line) => io.stderr.write(`${line}\n`) };
}
