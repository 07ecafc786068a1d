import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeCrmServer, startFakeCrmServer } from '../../../src/testing/server';
import { envFor, runCrm } from '../../support/run-crm';

/* An NDJSON line whose data has a __proto__ field (issue 45, 7). */

let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crm-sync-proto-'));
  server = await startFakeCrmServer();
  env = envFor(server.fake.credentials);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
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
