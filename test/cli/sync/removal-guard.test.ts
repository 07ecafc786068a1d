import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FakeCrmServer } from '../../../src/testing/server';
import { scriptCommand, shellWord } from '../../support/pty';
import { CRM_BIN, runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const exec = promisify(execFile);

const fixture = syncCliFixture('crm-guard-');
let server: FakeCrmServer;
let env: Record<string, string>;
let journal: string;
beforeEach(() => {
  ({ server, env } = fixture);
  journal = join(fixture.dir, 'acme.sync.db');
});
const file = fixture.file;

/** An accounts CSV of its first `rows` customers, of 50. */
const customers = (rows: number): string =>
  `key,name,industry\n${Array.from({ length: rows }, (_, i) => `C-${i},Customer ${i},Retail\n`).join('')}`;

const writes = () => server.fake.requests.filter((r) => r.method !== 'GET').length;
const inactive = () => [...server.fake.store.accounts.values()].filter((a) => a.status === 'inactive').length;

/** 50 accounts synced from customers.csv; the requests sent so far. */
async function synced50(): Promise<number> {
  const first = await runCrm(
    ['sync', 'apply', '--journal', journal, '--accounts', file('all.csv', customers(50))],
    env,
  );
  expect(first.code).toBe(0);
  return writes();
}

const apply = (accounts: string, ...more: string[]) =>
  runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts, '--removed', 'deactivate', ...more], env);

describe('crm sync apply --removed deactivate: the removal guard', () => {
  it('refuses a list with no record at all (header-only CSV, empty or blank NDJSON) before anything is sent, exit 2', async () => {
    const before = await synced50();
    for (const [name, text] of [
      ['header.csv', 'key,name,industry\r\n'],
      ['empty.ndjson', ''],
      ['blank.ndjson', '\n\n  \r\n'],
    ] as const) {
      const path = file(name, text);
      const run = await apply(path);
      expect(run.code).toBe(2);
      expect(JSON.parse(run.stderr).message).toBe(
        `--accounts ${path} has no record: with --removed deactivate it would remove every one of the accounts synced; if that is meant, give --max-removed (such as --max-removed 100%)`,
      );
    }
    expect(writes()).toBe(before);
    expect(inactive()).toBe(0);
  });

  it('an empty list goes on when --max-removed is given, within what it allows', async () => {
    await synced50();
    const empty = file('header.csv', 'key,name,industry\n');
    const under = await apply(empty, '--max-removed', '49');
    expect(under.code).toBe(9);
    expect(inactive()).toBe(0);
    const all = await apply(empty, '--max-removed', '100%');
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ deactivated: 50, refusedRemovals: [] });
    expect(inactive()).toBe(50);
  });

  it('a CSV cut after 5 of its 50 rows deactivates nothing and exits 9, naming the type, the figures and the flag', async () => {
    const before = await synced50();
    const run = await apply(file('cut.csv', customers(5)));

    expect(run.code).toBe(9);
    expect(run.stderr).toContain(
      'refused accounts removals, none sent: 45 accounts to deactivate of 50 synced, and the default limit is 10 (10, or 10% of those synced): if that is meant, give --max-removed 45',
    );
    expect(JSON.parse(run.stdout)).toMatchObject({
      deactivated: 0,
      refusedRemovals: [{ type: 'accounts', wouldDeactivate: 45, synced: 50, limit: 10, reason: 'limit' }],
    });
    expect(writes()).toBe(before);
  });

  it('--max-removed as a count or a share allows what it names, and no more', async () => {
    await synced50();
    const cut = file('cut.csv', customers(38)); // 12 removed of 50
    const count = await apply(cut, '--max-removed', '11');
    expect(count.code).toBe(9);
    expect(count.stderr).toContain('12 accounts to deactivate of 50 synced, and --max-removed allows 11');
    const share = await apply(cut, '--max-removed', '23%');
    expect(share.code).toBe(9);
    expect(inactive()).toBe(0);
    const allowed = await apply(cut, '--max-removed', '24%');
    expect(allowed.code).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ deactivated: 12 });
    expect(inactive()).toBe(12);
  });

  it("a small tenant's nightly removals go through with the default", async () => {
    const small = file('small.csv', customers(8));
    expect((await apply(small)).code).toBe(0);
    const run = await apply(file('fewer.csv', customers(3)));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ deactivated: 5, refusedRemovals: [] });
  });

  it('an NDJSON whose records all have unusable keys fails them and deactivates nothing, exit 9', async () => {
    const before = await synced50();
    const lines = Array.from({ length: 50 }, (_, i) => `${JSON.stringify({ key: i, data: { name: `C ${i}` } })}\n`);
    const run = await apply(file('bad-keys.ndjson', lines.join('')), '--max-removed', '100%');

    expect(run.code).toBe(9);
    const report = JSON.parse(run.stdout);
    expect(report.failed).toHaveLength(50);
    expect(report.refusedRemovals).toEqual([
      { type: 'accounts', wouldDeactivate: 50, synced: 50, limit: 50, reason: 'incomplete', unusableKeys: 50 },
    ]);
    expect(run.stderr).toContain('50 records of the list have no usable key');
    expect(writes()).toBe(before);
  });

  it('a bad --max-removed exits 2 with a clear message, for plan and apply', async () => {
    const accounts = file('a.csv', customers(2));
    for (const command of ['plan', 'apply']) {
      for (const value of ['-1', '5.0', '1.5', '101%', 'all', '5 %', '', '1e3']) {
        const run = await runCrm(
          ['sync', command, '--journal', journal, '--accounts', accounts, '--max-removed', value],
          env,
        );
        expect([run.code, JSON.parse(run.stderr).message]).toEqual([
          2,
          `--max-removed must be a count (such as 50) or a share of the synced records from 0% to 100% (such as 5%), not "${value}"`,
        ]);
      }
    }
    expect(writes()).toBe(0);
  });
});

describe('crm sync plan shows the removal guard', () => {
  it('as NDJSON: the refusal beside the counts, which still count every deactivate entry', async () => {
    await synced50();
    const run = await runCrm(
      ['sync', 'plan', '--journal', journal, '--accounts', file('cut.csv', customers(5)), '--removed', 'deactivate'],
      env,
    );
    expect(run.code).toBe(0);
    const last = JSON.parse(run.stdout.trim().split('\n').at(-1) as string);
    expect(last).toEqual({
      counts: { create: 0, update: 0, unchanged: 5, skip: 0, deactivate: 45, blocked: 0, invalid: 0 },
      refusedRemovals: [
        { type: 'accounts', wouldDeactivate: 45, synced: 50, limit: 10, reason: 'limit', unusableKeys: 0 },
      ],
    });
  });

  it('with an empty list, says on stderr that apply would refuse it', async () => {
    await synced50();
    const run = await runCrm(
      ['sync', 'plan', '--journal', journal, '--accounts', file('h.csv', 'key,name\n'), '--removed', 'deactivate'],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^crm: apply would refuse this: --accounts .*h\.csv has no record/);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1) as string).refusedRemovals).toHaveLength(1);
  });

  it('on a terminal: a line that says apply refuses them, with the figures and the flag', async () => {
    await synced50();
    const cut = file('cut.csv', customers(5));
    const args = ['sync', 'plan', '--journal', journal, '--accounts', cut, '--removed', 'deactivate'];
    const command = [process.execPath, CRM_BIN, ...args].map(shellWord).join(' ');
    const { stdout } = await exec(scriptCommand(), ['-qec', command, '/dev/null'], {
      env: { ...env, PATH: process.env.PATH },
    });
    const shown = stdout.split(/\r?\n/);
    expect(shown.filter((line) => line.startsWith('- accounts '))).toHaveLength(45);
    expect(shown.slice(-3)).toEqual([
      '! accounts removals: apply refuses them all: 45 accounts to deactivate of 50 synced, and the default limit is 10 (10, or 10% of those synced): if that is meant, give --max-removed 45',
      'Plan: 0 to create, 0 to update, 45 to deactivate, 5 unchanged, 0 skipped, 0 blocked, 0 invalid.',
      '',
    ]);
  });
});
