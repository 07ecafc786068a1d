import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { SyncJournalError } from '../../sync/journal-error';
import type { JournalTarget } from './journal';

/**
 * Why a SQLite journal cannot be opened, in words a person can act on: SQLite says only "unable to
 * open database file" for a directory, a missing directory or one this user may not write.
 */
async function causeOf(path: string): Promise<string | undefined> {
  const file = await stat(path).catch(() => undefined);
  if (file?.isDirectory()) return `${path} is a directory: --journal names a file`;
  const parent = dirname(resolve(path));
  const directory = await stat(parent).catch(() => undefined);
  if (!directory) return `the directory ${parent} does not exist`;
  if (!directory.isDirectory()) return `${parent} is not a directory`;
  // SQLite writes its -wal and -shm files beside the journal: the directory must be writable too.
  const writable = await access(parent, constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!writable) return `this user may not write in the directory ${parent} (SQLite keeps its -wal file there)`;
  if (
    file &&
    !(await access(path, constants.R_OK | constants.W_OK).then(
      () => true,
      () => false,
    ))
  ) {
    return `this user may not read and write ${path}`;
  }
  return undefined;
}

/** A journal that could not be opened, its cause named where the file system tells it; any other error as it is. */
export async function journalCause(error: unknown, target: JournalTarget): Promise<unknown> {
  if (!(error instanceof SyncJournalError) || error.reason !== 'unavailable' || target.kind !== 'sqlite') return error;
  const cause = await causeOf(target.path).catch(() => undefined);
  if (cause === undefined) return error;
  return new SyncJournalError('unavailable', `${error.message.replace(/\.$/, '')}: ${cause}.`, { cause: error });
}
