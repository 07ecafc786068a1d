#!/usr/bin/env node
/**
 * `crm`: every endpoint of the CRM integration API from a shell. `crm --help` for the commands.
 */
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

async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

// A reader that stops early (`crm contacts list --all | head -1`) closes the pipe: that is the
// reader's choice, not a failure, so the command ends quietly.
// Any other failure to write (ENOSPC: `> contacts.ndjson` on a full disk) is told as every failure
// is, in one line and with exit 1: never as an uncaught exception with its stack.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(describeFailure(error, !process.stderr.isTTY), () => process.exit(EXIT.other));
});

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  readFile: (path) => readFile(path, 'utf8'),
  readStdin,
  version: await version(),
});
// Exit once stdout has taken the last write: idle keep-alive connections and an MCP client's open
// stdin must not keep a finished command alive.
process.stdout.write('', () => process.exit(code));
