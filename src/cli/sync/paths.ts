import { randomBytes } from 'node:crypto';
import { fstat, type Stats, unlinkSync } from 'node:fs';
import { chmod, open, readlink, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from '../usage-error';

/**
 * Where a path leads: its real path (symbolic links, `.` and `..` resolved), and the file's device
 * and inode when it exists, which a hard link shares.
 */
interface FileIdentity {
  readonly real: string;
  readonly inode?: string;
}

const inodeOf = (stats: Stats) => `${stats.dev}:${stats.ino}`;

/**
 * The real path of `path`, which need not exist yet: a missing file is its directory's real path
 * and its name, and a dangling link the path its target would take (writing through it makes it).
 */
async function realPathOf(path: string, depth = 0): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch {
    // Missing (or unreadable): resolved by hand below.
  }
  let directory = dirname(absolute);
  try {
    directory = await realpath(directory);
  } catch {
    // A directory that does not exist: the write fails there, and the path as given names it.
  }
  const full = join(directory, basename(absolute));
  if (depth < 40) {
    try {
      return await realPathOf(resolve(directory, await readlink(full)), depth + 1);
    } catch {
      // Not a link: the file to be made.
    }
  }
  return full;
}

async function identityOf(path: string): Promise<FileIdentity> {
  const real = await realPathOf(path);
  // The path as given first: /dev/stdout leads through /proc to a file that has no path.
  for (const where of [path, real]) {
    try {
      return { real, inode: inodeOf(await stat(where)) };
    } catch {
      // Missing: no inode to share.
    }
  }
  return { real };
}

/** Whether two paths lead to one file (by real path, or by inode: a hard link). */
export const sameFile = async (a: string, b: string): Promise<boolean> =>
  same(await identityOf(a), await identityOf(b));

const same = (a: FileIdentity, b: FileIdentity) => a.real === b.real || (a.inode !== undefined && a.inode === b.inode);

/** A file a command reads or keeps, as a refusal names it. */
export interface Input {
  /** `the journal acme.db`, `the --accounts file customers.csv`: never a secret's path. */
  readonly what: string;
  readonly path: string;
}

/**
 * The files SQLite keeps beside a journal: its write-ahead log, its shared-memory index, and the
 * rollback journal it uses before the switch to WAL. Beside the real file, where SQLite puts them
 * when the journal is reached through a link, and beside the path as given.
 */
export async function journalFiles(journal: string): Promise<Input[]> {
  const files: Input[] = [{ what: `the journal ${journal}`, path: journal }];
  const real = await realPathOf(journal);
  for (const suffix of ['-wal', '-shm', '-journal']) {
    const what = `the journal's ${suffix} file`;
    files.push({ what, path: `${journal}${suffix}` }, { what, path: `${real}${suffix}` });
  }
  return files;
}

/**
 * Refuses (exit 2, before anything is opened) an output that is one of the command's inputs,
 * compared by real path and by inode: `--report acme.db` beside `--journal acme.db` truncated the
 * journal, and the next run created every record again; `--report customers.ndjson` emptied the
 * source, and `--removed deactivate` set every account inactive.
 */
export async function refuseOverwrite(
  flag: string,
  output: string,
  inputs: readonly Input[],
  help: string,
): Promise<void> {
  const target = await identityOf(output);
  for (const input of inputs) {
    if (!same(target, await identityOf(input.path))) continue;
    throw new UsageError(`${flag} ${output} is ${input.what}: writing there would destroy it; name another file`, help);
  }
}

const fstatOf = promisify(fstat);

/**
 * Refuses a run whose standard output or error is redirected into one of its inputs: the shell
 * truncated the file before crm started (`> customers.ndjson` is an empty export, and `> acme.db`
 * an empty journal, under which every record would be created again), so nothing may be read
 * from it or sent. A terminal or a pipe is no file of the command's.
 */
export async function refuseRedirect(
  streams: readonly { readonly name: string; readonly stream: unknown }[],
  inputs: readonly Input[],
  help: string,
): Promise<void> {
  const files: { name: string; inode: string }[] = [];
  for (const { name, stream } of streams) {
    const fd = (stream as { fd?: unknown }).fd;
    if (typeof fd !== 'number') continue;
    try {
      const stats = await fstatOf(fd);
      if (stats.isFile()) files.push({ name, inode: inodeOf(stats) });
    } catch {
      // A closed descriptor: nothing is written there.
    }
  }
  if (files.length === 0) return;
  for (const input of inputs) {
    const { inode } = await identityOf(input.path);
    const file = files.find((f) => f.inode === inode);
    if (file === undefined) continue;
    throw new UsageError(
      `Standard ${file.name} is redirected into ${input.what}, which the shell has already emptied or is writing into: nothing was sent; restore the file and redirect elsewhere`,
      help,
    );
  }
}

/** A `--report` file, written whole at the end or not at all: its old content stays until then. */
export interface ReportFile {
  /** Writes `text` to a temporary file beside the report (mode 0600), then renames it into place. */
  readonly commit: (text: string) => Promise<void>;
  /** Removes the temporary file: the report as it was stays. */
  readonly discard: () => Promise<void>;
}

/**
 * Makes the temporary file of a report beside its real path, so that a report that cannot be
 * written is said before anything is sent, and a run that stops (Ctrl-C, a crash, a full disk)
 * leaves the old report whole. A link is written through: the file it names is replaced, the
 * link kept. A device or a pipe (`/dev/stdout`) is written directly, having no place to rename.
 */
export async function reportFile(path: string, help: string): Promise<ReportFile> {
  const refused = (error: unknown): never => {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`--report: cannot write ${path}${typeof code === 'string' ? ` (${code})` : ''}`, help);
  };
  let existing: Stats | undefined;
  try {
    existing = await stat(path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') refused(error);
  }
  if (existing?.isDirectory()) refused({ code: 'EISDIR' });
  if (existing && !existing.isFile()) {
    const handle = await open(path, 'a').catch(refused);
    await handle.close();
    return {
      commit: async (text) => {
        const device = await open(path, 'a');
        try {
          await device.writeFile(text);
        } finally {
          await device.close();
        }
      },
      discard: async () => {},
    };
  }
  const target = await realPathOf(path);
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  // wx: never through a link or a file someone placed there; chmod: 0600 whatever the umask.
  const handle = await open(temporary, 'wx', 0o600).catch(async (error: unknown) => {
    const code = (error as { code?: unknown }).code;
    // A report file its user may write in a directory they may not: written over at the end, as
    // it was before reports were renamed into place (nothing of it is truncated before then).
    if (!existing || (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS')) return refused(error);
    await (await open(target, 'r+').catch(refused)).close();
    return undefined;
  });
  if (handle === undefined) {
    return {
      commit: async (text) => {
        await writeFile(target, text, { mode: 0o600 });
      },
      discard: async () => {},
    };
  }
  await chmod(temporary, 0o600).catch(refused);
  // A second Ctrl-C ends the process at once: the temporary file goes with it.
  const onExit = () => {
    try {
      unlinkSync(temporary);
    } catch {
      // Renamed into place, or already removed.
    }
  };
  process.once('exit', onExit);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    process.removeListener('exit', onExit);
    await handle.close();
  };
  return {
    commit: async (text) => {
      await handle.writeFile(text);
      // On disk before the rename, or a crash after it could leave an empty report in its place.
      await handle.sync();
      await close();
      await rename(temporary, target);
    },
    discard: async () => {
      await close().catch(() => {});
      await unlink(temporary).catch(() => {});
    },
  };
}
