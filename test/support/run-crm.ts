import { spawn } from 'node:child_process';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type Io, main } from '../../src/cli/main';

/** The built bin: `npm test` builds before it runs the tests. */
export const CRM_BIN = fileURLToPath(new URL('../../dist/cli/crm.js', import.meta.url));

/** What a run of `crm` gave. */
export interface CrmRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `crm` in a child process, with only these variables (and PATH): nothing of the test's own
 * environment leaks in. Asynchronous, so that a fake server in this process answers it.
 */
export function runCrm(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
  stdin?: string,
): Promise<CrmRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CRM_BIN, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A command may stop reading before its input ends (crm mcp refusing an oversized message).
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

/** The variables `crm-fake` prints, for a fake's credentials. */
export const envFor = (credentials: {
  readonly baseUrl: string;
  readonly tenantId: string;
  readonly apiKey: string | undefined;
  readonly adminToken: string;
}): Record<string, string> => ({
  CRM_BASE_URL: credentials.baseUrl,
  CRM_TENANT_ID: credentials.tenantId,
  CRM_API_KEY: credentials.apiKey ?? '',
  CRM_ADMIN_TOKEN: credentials.adminToken,
});

/** A stream that keeps what is written, and says it is (or is not) a terminal. */
export function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

/** What `main` touches, for a run in this process: no files, an empty stdin, unless given. */
export const testIo = (io: Pick<Io, 'stdout' | 'stderr' | 'env'> & Partial<Io>): Io => ({
  readFile: () => Promise.reject(new Error('no files here')),
  readStdin: () => Promise.resolve(''),
  stdin: Readable.from([]),
  version: '0.0.0-test',
  ...io,
});

/** `main` in this process, its streams (or terminals) kept. */
export async function runInProcess(
  args: string[],
  env: Record<string, string>,
  tty: { stdout: boolean; stderr: boolean },
) {
  const stdout = terminal(tty.stdout);
  const stderr = terminal(tty.stderr);
  const code = await main(args, testIo({ stdout: stdout.stream, stderr: stderr.stream, env }));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
