import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { CRM_BIN, runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-status-');

const exec = promisify(execFile);

/**
 * `crm` run by a user who may read the journal but not write it nor its directory. Under root
 * (a container, this machine), file modes stop nobody, so the command runs as `nobody` through
 * setpriv(1): the refusal is the kernel's, as it is for an operator's monitoring account.
 */
async function asReader(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const crm = [process.execPath, CRM_BIN, ...args];
  const [command, ...rest] = process.getuid?.() === 0 ? [...AS_NOBODY, ...crm] : crm;
  try {
    const { stdout, stderr } = await exec(command as string, rest, { env: { PATH: process.env.PATH, ...f.env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] as const;

/**
 * Whether `nobody` can run the built `crm`: a checkout in a directory only its owner may enter
 * (`mktemp -d` makes one 0700) keeps `nobody` from node and from dist/, and the test cannot run
 * there. Elsewhere (a checkout others may read, or a user other than root) it runs.
 */
function readerCanRun(): boolean {
  if (process.getuid?.() !== 0) return true;
  try {
    execFileSync(
      AS_NOBODY[0],
      [...AS_NOBODY.slice(1), process.execPath, '-e', `require('node:fs').accessSync(${JSON.stringify(CRM_BIN)})`],
      {
        stdio: 'ignore',
      },
    );
    return true;
  } catch {
    return false;
  }
}

it.skipIf(!readerCanRun())(
  'crm sync status reads a journal its user may read but not write, and leaves it and its directory as they were',
  async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = join(f.dir, 'accounts.csv');
    writeFileSync(accounts, 'key,name\nC-1,Acme\nC-2,Beta\n');
    f.server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    const applied = await runCrm(
      ['sync', 'apply', '--journal', journal, '--accounts', accounts, '--max-retries', '0'],
      f.env,
    );
    expect(applied.code).toBe(9);
    chmodSync(journal, 0o444);
    chmodSync(f.dir, 0o555);
    const before = { bytes: readFileSync(journal), mtimeMs: statSync(journal).mtimeMs, files: readdirSync(f.dir) };

    const status = await asReader(['sync', 'status', '--journal', journal]);

    expect([status.code, status.stderr]).toEqual([0, '']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      tenant: 'tenant_demo',
      inDoubt: [{ type: 'accounts', key: 'C-1', state: 'inDoubt' }],
      runs: [expect.objectContaining({ created: 1, inDoubt: 1 })],
    });
    expect(readFileSync(journal).equals(before.bytes)).toBe(true);
    expect(statSync(journal).mtimeMs).toBe(before.mtimeMs);
    expect(readdirSync(f.dir)).toEqual(before.files);
  },
);
