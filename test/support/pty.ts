import { execFileSync } from 'node:child_process';

/*
 * A pseudo-terminal for tests of what `crm` shows a person: util-linux's `script`, which runs a
 * command with a terminal as its stdin, stdout and stderr. Where it is missing it is installed with
 * apt-get when this process may (root, as on CI), as test/support/redis.ts does for redis-server;
 * otherwise the test fails with the command to run. It is never skipped.
 */

const INSTALL = 'apt-get install -y bsdutils';

const found = (): string | undefined => {
  try {
    return execFileSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};

/** The `script` command on PATH, installed first where it is missing and this process may install it. */
export function scriptCommand(): string {
  let command = found();
  if (command) return command;
  if (process.getuid?.() === 0) {
    try {
      execFileSync('sh', ['-c', `(${INSTALL} || (apt-get update && ${INSTALL})) > /dev/null`], {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    } catch {
      // Told below, with the command to run.
    }
    command = found();
    if (command) return command;
  }
  throw new Error(`The terminal tests of crm need util-linux's script on PATH. Install it: sudo ${INSTALL}`);
}

/** A shell word: `'it''s'` quoting for sh. */
export const shellWord = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
