#!/usr/bin/env node
/**
 * `crm`: every endpoint of the CRM integration API from a shell. `crm --help` for the commands.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describeFailure, EXIT } from './failure';
import { main } from './main';

/** The package's version, read beside the built bin (dist/cli/crm.js). */
async function version(): Promise<string> {
  try {
    const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
    return String((JSON.parse(text) as { version?: unknown }).version);
  } catch {
    return 'unknown';
  }
}

/** A stream's bytes as UTF-8 text, refused (`EFBIG`) past `maxBytes`: /dev/zero must not fill the memory. */
async function readBounded(source: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > maxBytes) throw Object.assign(new Error(`More than ${maxBytes} bytes`), { code: 'EFBIG' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

// A reader that stops early (`crm contacts list --all | head -1`) closes the pipe: that is the
// reader's choice, not a failure, so the command ends quietly.
// Any other failure to write (ENOSPC: `> contacts.ndjson` on a full disk) is told as every failure
// is, in one line and with exit 1: never as an uncaught exception with its stack.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(describeFailure(error, !process.stderr.isTTY), () => process.exit(EXIT.other));
});

// Ctrl-C: the progress line (on a terminal) gets its newline, and the shell its usual 130. A
// command that can stop cleanly (`crm sync apply`: after the requests in flight have answered)
// asks for the first one as a signal instead; the second still ends the process.
const interrupted = new AbortController();
let stopsOnInterrupt = false;
process.on('SIGINT', () => {
  if (stopsOnInterrupt && !interrupted.signal.aborted) {
    interrupted.abort(new Error('Interrupted'));
    if (process.stderr.isTTY) {
      process.stderr.write('\ncrm: stopping once the requests in flight have answered (Ctrl-C again stops at once)\n');
    }
    return;
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  process.exit(130);
});

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  readFile: (path, maxBytes) => readBounded(createReadStream(path), maxBytes),
  readStdin: (maxBytes) => readBounded(process.stdin, maxBytes),
  stdin: process.stdin,
  interrupt: {
    signal: interrupted.signal,
    stopOnInterrupt: () => {
      stopsOnInterrupt = true;
    },
  },
  version: await version(),
});
// Exit once stdout has taken the last write: idle keep-alive connections and an MCP client's open
// stdin must not keep a finished command alive.
process.stdout.write('', () => process.exit(code));
