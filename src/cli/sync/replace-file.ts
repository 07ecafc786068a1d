import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** How much text is gathered before it is written: few writes for many small lines. */
const CHUNK = 64 * 1024;

/**
 * Writes a file the command makes in full (`--failed`, `--ids`) into a temporary file beside it
 * (0600, never through a link someone placed: `wx`), on disk before it is renamed into place, so
 * that a run that stops, fails or is killed leaves the old file whole and no temporary one behind.
 * `fill` gives the text through `write`, encoded by `encode`, gathered into few writes.
 */
export async function replaceFile<T>(
  path: string,
  encode: (text: string) => Uint8Array,
  fill: (write: (text: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle | undefined = await open(temporary, 'wx', 0o600);
  // A second Ctrl-C ends the process at once: the temporary file goes with it.
  const onExit = () => {
    try {
      unlinkSync(temporary);
    } catch {
      // Renamed into place, or already removed.
    }
  };
  process.once('exit', onExit);
  let pending = '';
  const flush = async () => {
    if (pending === '') return;
    await handle?.write(encode(pending));
    pending = '';
  };
  try {
    const result = await fill(async (text) => {
      pending += text;
      if (pending.length >= CHUNK) await flush();
    });
    await flush();
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
    return result;
  } finally {
    process.removeListener('exit', onExit);
    await handle?.close().catch(() => {});
    await unlink(temporary).catch(() => {});
  }
}
