import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/server';
import { envFor } from '../support/run-crm';

const FAKE_BIN = fileURLToPath(new URL('../../dist/crm-fake.js', import.meta.url));

/** `crm-fake <args>` as a process, asynchronously: the fake in this process answers it. */
function crmFake(args: readonly string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [FAKE_BIN, ...args], { env: { PATH: process.env.PATH, ...env } });
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
  });
}

let server: FakeCrmServer;
beforeEach(async () => {
  server = await startFakeCrmServer();
});
afterEach(async () => {
  await server.close();
});

describe('crm-fake dump', () => {
  it("prints a running fake's records as CSV, one type or every type, read with the tenant's key", async () => {
    const env = envFor(server.fake.credentials);
    server.fake.store.insertAccount({ name: 'Acme Ltd', industry: 'Retail' });
    server.fake.store.insertAccount({ name: 'Beta GmbH', industry: 'Wholesale' });
    const one = await crmFake(['dump', '--type', 'accounts'], env);
    expect(one.code).toBe(0);
    const [header, ...rows] = one.stdout.trim().split('\n');
    expect(header?.split(',')).toEqual(expect.arrayContaining(['id', 'name', 'industry']));
    expect(rows.some((row) => row.includes('Acme Ltd,Retail'))).toBe(true);
    // The fake's generated accounts, each by its id.
    expect(rows.map((row) => row.split(',')[0]).sort()).toEqual([...server.fake.store.accounts.keys()].sort());

    const all = await crmFake(['dump'], env);
    expect(all.stdout.split('\n').filter((line) => line.startsWith('# '))).toEqual([
      '# accounts',
      '# contacts',
      '# opportunities',
      '# activities',
    ]);
  });

  it('refuses a wrong key (exit 1, never echoing it), a missing variable and an unknown type (exit 2)', async () => {
    const env = envFor(server.fake.credentials);
    const wrong = await crmFake(['dump'], { ...env, CRM_API_KEY: 'not-the-key-123' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('answered 401');
    expect(wrong.stderr).not.toContain('not-the-key-123');
    const none = await crmFake(['dump'], { CRM_BASE_URL: server.url });
    expect([none.code, none.stderr]).toEqual([2, 'crm-fake dump: give --tenant or CRM_TENANT_ID\n']);
    const type = await crmFake(['dump', '--type', 'leads'], env);
    expect(type.code).toBe(2);
  });
});
