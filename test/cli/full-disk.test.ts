import { spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { CRM_BIN, envFor } from '../support/run-crm';

/** Runs the bin with stdout on /dev/full, where every write fails with ENOSPC (a full disk). */
function runOnFullDisk(args: readonly string[], env: Record<string, string>) {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [CRM_BIN, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', full, 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stderr })),
  );
}

describe.skipIf(!existsSync('/dev/full'))('crm writing to a full disk', () => {
  it('exits 1 with one JSON line on stderr, never a stack, for a result and for an --all export', async () => {
    const srv = await startedServer({ seed: generateFakeData({ accounts: 1, contacts: 30 }) });
    const env = envFor({ ...srv.fake.credentials, baseUrl: srv.url });
    for (const args of [
      ['contacts', 'list'],
      ['contacts', 'list', '--all', '--limit', '5'],
    ]) {
      const run = await runOnFullDisk(args, env);
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(JSON.parse(run.stderr)).toEqual(expect.objectContaining({ message: expect.stringContaining('ENOSPC') }));
    }
  });
});
