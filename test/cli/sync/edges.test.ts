import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../../src/testing/server';
import { envFor, runCrm } from '../../support/run-crm';

/* The edges of crm sync (issue 45, 7): resolve --absent of a record the CRM holds, an NDJSON line with data.__proto__. */

let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sync-edges-'));
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

describe('crm sync apply of an NDJSON line with data.__proto__', () => {
  it('fails that record, naming the field, sends nothing of it, and creates the others with exactly their fields', async () => {
    const accounts = join(dir, 'accounts.ndjson');
    writeFileSync(
      accounts,
      [
        '{"key":"A1","data":{"name":"Acme","__proto__":{"industry":"Smuggled","website":"https://evil.example"}}}',
        '{"key":"A2","data":{"name":"Beta","industry":"Retail"}}',
        '',
      ].join('\n'),
    );
    const run = await runCrm(['sync', 'apply', '--journal', join(dir, 'acme.db'), '--accounts', accounts], env);

    expect(run.code).toBe(9);
    expect(run.stderr).toMatch(/A1.*data\.__proto__.*"__proto__" is refused/);
    const posts = server.fake.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.body)).toEqual([{ tenantId: server.fake.tenantId, name: 'Beta', industry: 'Retail' }]);
    expect(JSON.stringify(server.fake.requests)).not.toContain('Smuggled');
  });
});
