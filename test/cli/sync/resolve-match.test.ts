import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqliteJournal } from '../../../src/sync/sqlite-journal';
import { type FakeCrmServer, startFakeCrmServer } from '../../../src/testing/server';
import { CRM_BIN, envFor, runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

/* crm sync resolve --match: a load killed and answers lost, settled in one step from the CRM's export (issue 46, 3). */

const fixture = syncCliFixture('crm-resolve-match-');
let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;
beforeEach(() => {
  ({ dir, server, env } = fixture);
});

const creates = () => server.fake.requests.filter((r) => r.endpoint === 'createAccount').length;

/** The fake's accounts export, fetched as a person's script would: over HTTP, with the tenant's key. */
async function exportOverHttp(): Promise<string> {
  const { tenantId, apiKey } = server.fake.credentials;
  const response = await fetch(`${server.url}/_fake/export/accounts.csv?tenantId=${tenantId}`, {
    headers: { 'x-api-key': String(apiKey) },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
  return response.text();
}

async function pending(journal: string) {
  const opened = sqliteJournal(journal, { readOnly: true });
  try {
    await opened.open();
    return await opened.pending(server.fake.tenantId);
  } finally {
    await opened.close();
  }
}

describe('a load killed twice, with answers lost, settled by one resolve --match', () => {
  it('ends with every account once: 0 duplicates, 0 missing, 0 in doubt', async () => {
    await server.close();
    server = fixture.server = await startFakeCrmServer({ latencyMs: 20 });
    env = envFor(server.fake.credentials);
    const n = 300;
    const journal = join(dir, 'load.db');
    // Names repeat across case and spaces as an ERP's do not: each is one account.
    const accounts = fixture.file(
      'accounts.csv',
      `key,name,industry,annualRevenue\n${Array.from({ length: n }, (_, i) => `K${i},Account ${i},Retail,${1000 + i}`).join('\n')}\n`,
    );
    const args = ['sync', 'apply', '--journal', journal, '--accounts', accounts, '--concurrency', '8'];

    // Each run after a kill waits out the killed run's lease (30 s): two kills keep the test under two minutes.
    for (const after of [60, 170]) {
      const child = spawn(process.execPath, [CRM_BIN, ...args], {
        env: { PATH: process.env.PATH, ...env },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      while (creates() < after && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
      child.kill('SIGKILL');
      await exited;
    }
    // Then answers lost: three creates stored and their connection dropped, two dropped before the server stored them.
    server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true, times: 3 });
    server.fake.failNext({ endpoint: 'createAccount', applied: false, drop: true, times: 2 });
    const resumed = await runCrm(args, env);
    expect(resumed.code).toBe(9);
    const inDoubt = await pending(journal);
    expect(inDoubt.length).toBeGreaterThanOrEqual(5);

    const exportFile = fixture.file('crm-accounts.csv', await exportOverHttp());
    const match = ['sync', 'resolve', '--journal', journal, '--match', exportFile, '--type', 'accounts'];
    // A dry run first: it says what it would do, and writes nothing.
    const dry = await runCrm([...match, '--absent-if-missing', '--json'], env);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    const dryLines = dry.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(dryLines.at(-1)).toMatchObject({ inDoubt: inDoubt.length, stillInDoubt: 0, applied: false });
    expect(dryLines.filter((l) => l.action === 'absent').length).toBeGreaterThanOrEqual(2);
    expect(await pending(journal)).toHaveLength(inDoubt.length);
    // Without --absent-if-missing, those the export does not hold stay in doubt: exit 9.
    expect((await runCrm(match, env)).code).toBe(9);

    const applied = await runCrm([...match, '--absent-if-missing', '--apply'], env);
    expect(applied.code).toBe(0);
    expect(await pending(journal)).toEqual([]);

    const finished = await runCrm(args, env);
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    const names = new Map<string, number>();
    for (const account of server.fake.store.accounts.values())
      names.set(String(account.name), (names.get(String(account.name)) ?? 0) + 1);
    expect(server.fake.store.accounts.size).toBe(n);
    expect([...names.values()].every((times) => times === 1)).toBe(true);
    const status = await runCrm(['sync', 'status', '--journal', journal, '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ inDoubt: [] });
  }, 180_000);
});
