import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../../src/testing/server';
import { envFor, runCrm } from '../../support/run-crm';

/* crm sync resolve --absent of a record the CRM holds is refused without --force (issue 45, 7). */

let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sync-resolve-'));
  server = await startFakeCrmServer();
  env = envFor(server.fake.credentials);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crm sync resolve --absent', () => {
  it('of a synced record exits 2 naming its state and --force, and the next apply creates no duplicate; --force forgets it', async () => {
    const journal = join(dir, 'acme.sync.db');
    const accounts = join(dir, 'customers.csv');
    writeFileSync(accounts, 'key,name\nC-1,Acme Ltd\n');
    expect((await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], env)).code).toBe(0);
    const resolve = ['sync', 'resolve', '--journal', journal, '--type', 'accounts', '--key', 'C-1', '--absent'];

    const refused = await runCrm(resolve, env);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr).message).toMatch(/accounts "C-1" is synced, not in doubt.*--force/);
    expect((await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], env)).code).toBe(0);
    expect(server.fake.store.accounts.size).toBe(1);

    const forced = await runCrm([...resolve, '--force'], env);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('accounts "C-1": not in the CRM');
  });
});
