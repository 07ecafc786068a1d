// The lists a plan or an apply reads, opened the same way for both before anything else is done:
// each file checked whole and counted (a bad file exits 2 having sent nothing, and the counts give
// the engine its ETA), and an empty one refused under --removed deactivate. Apart from the
// command, whose parsing and dispatch do not change with how a source is read.
import type { SyncMaxRemoved } from '../../sync';
import { UsageError } from '../usage-error';
import { SOURCE_TYPES, type SourceType } from './columns';
import type { SyncContext } from './context';
import { readOptionsOf } from './read-options';
import { valueText } from './render';
import { countRecords, type OpenedSources, openSources, recordsOf, type SourceFile } from './sources';

/**
 * With --removed deactivate, a list without a single record is refused before anything is sent
 * (an apply; a plan says so): it is far more often a failed export than a tenant that closed every
 * account. --max-removed, given, says the operator means it.
 */
export function emptyListRefusal(
  opened: OpenedSources,
  totals: ReadonlyMap<SourceType, number>,
  removed: 'keep' | 'deactivate' | undefined,
  maxRemoved: SyncMaxRemoved | undefined,
): string | undefined {
  if (removed !== 'deactivate' || maxRemoved !== undefined) return undefined;
  const empty = opened.sources.find((source) => totals.get(source.type) === 0);
  if (!empty) return undefined;
  return `--${empty.type} ${valueText(empty.file)} has no record: with --removed deactivate it would remove every one of the ${empty.type} synced; if that is meant, give --max-removed (such as --max-removed 100%)`;
}

/** The sources given, checked whole (a bad file exits 2 before anything is sent), with their record counts. */
export async function sourcesOf({
  io,
  values,
  help,
}: SyncContext): Promise<{ opened: OpenedSources; totals: Map<SourceType, number> }> {
  const given: Partial<Record<SourceType, string>> = {};
  for (const type of SOURCE_TYPES) {
    const file = values[type];
    if (file === undefined) continue;
    if (typeof file !== 'string' || file === '')
      throw new UsageError(`--${type} needs a file, or - for standard input`, help);
    given[type] = file;
  }
  if (Object.keys(given).length === 0) {
    throw new UsageError('No source: give --accounts, --contacts, --opportunities or --activities <file>', help);
  }
  if (Object.values(given).filter((file) => file === '-').length > 1) {
    throw new UsageError('Standard input (-) can be the source of one list at most', help);
  }
  const opened = await openSources(given, io.stdin, SOURCE_TYPES, await readOptionsOf(values, io, help));
  try {
    const totals = new Map<SourceType, number>();
    for (const source of opened.sources) totals.set(source.type, await countRecords(source));
    return { opened, totals };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * A source list as the engine takes it: read from the file's start each time it is iterated, and
 * telling its `size` (counted by the check), from which the engine's ETA comes.
 */
export const listOf = (source: SourceFile, size: number, onRecord?: (record: Record<string, unknown>) => void) => ({
  size,
  async *[Symbol.asyncIterator]() {
    for await (const record of recordsOf(source)) {
      onRecord?.(record);
      yield record;
    }
  },
});
