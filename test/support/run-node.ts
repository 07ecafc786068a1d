import { spawn } from 'node:child_process';

/** Runs a script of the package with this Node, as a user would; its output is collected. */
export function runNode(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, args, { env: { ...process.env, CRM_BASE_URL: '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, exit, output: () => ({ stdout, stderr }) };
}
