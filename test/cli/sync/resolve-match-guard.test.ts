import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqliteJournal } from '../../../src/sync/sqlite-journal';
import type { FakeCrmServer } from '../../../src/testing/server';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

/* crm sync resolve --match refuses an export that would settle the records in doubt absent wholesale. */

const fixture = syncCliFixture('crm-resolve-guard-');
let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;
beforeEach(() => {
  ({ dir, server, env } = fixture);
});

async function pendingKeys(journal: string): Promise<string[]> {
  const opened = sqliteJournal(journal, { readOnly: true });
  try {
    await opened.open();
    return (await opened.pending(server.fake.tenantId)).map((e) => e.key).sort();
  } finally {
    await opened.close();
  }
}

/** Two accounts synced, then `lost` more whose creates the server stored and whose answers were lost. */
async function inDoubt(lost: number) {
  const journal = join(dir, 'j.db');
  const rows = Array.from({ length: lost + 2 }, (_, i) => `K${String(i).padStart(2, '0')},Account ${i}`);
  const accounts = fixture.file('accounts.csv', `key,name\n${rows.join('\n')}\n`);
  const args = ['sync', 'apply', '--journal', journal, '--accounts', accounts, '--concurrency', '1'];
  server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true, times: lost });
  expect((await runCrm(args, env)).code).toBe(9);
  const keys = await pendingKeys(journal);
  expect(keys).toHaveLength(lost);
  return { journal, args, keys };
}

const matchArgs = (journal: string, file: string) => [
  'sync',
  'resolve',
  '--journal',
  journal,
  '--match',
  file,
  '--type',
  'accounts',
];

describe('crm sync resolve --match refuses an export that cannot settle anything', () => {
  it('refuses a header-only export, one whose ids are all empty, a directory and the journal itself: exit 2, nothing written', async () => {
    const { journal, keys } = await inDoubt(3);
    const folder = join(dir, 'exports');
    mkdirSync(folder);
    for (const [path, message] of [
      [fixture.file('header.csv', 'id,name\n'), /header.csv: the export has its header and no record/],
      [fixture.file('blank.csv', 'id,name\n\n\n'), /blank.csv: the export has its header and no record/],
      [fixture.file('noids.csv', 'id,name\n,Account 2\n ,Account 3\n'), /noids.csv: no row of the export has an id/],
      [
        fixture.file('nocol.csv', 'name,industry\nAccount 2,Retail\n'),
        /nocol.csv:1: the export has no .{1,2}id.{1,2} column/,
      ],
      [folder, /exports: a directory, not an export/],
      [journal, /--journal/],
    ] as const) {
      const run = await runCrm([...matchArgs(journal, path), '--absent-if-missing', '--apply'], env);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await pendingKeys(journal)).toEqual(keys);
  });

  it('refuses a --from path that is a directory, as it refuses one that is the journal', async () => {
    const { journal, keys } = await inDoubt(1);
    const folder = join(dir, 'rows');
    mkdirSync(folder);
    for (const [path, message] of [
      [folder, /rows: a directory: give the file of rows/],
      [journal, /--journal/],
    ] as const) {
      const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', path], env);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await pendingKeys(journal)).toEqual(keys);
  });
});

describe('crm sync resolve --match --absent-if-missing, with an export cut short', () => {
  it('refuses to settle more than 10 and more than half of the records in doubt absent; the whole export settles them to their ids', async () => {
    const { journal, args, keys } = await inDoubt(14);
    // A report's row limit cut the export after its first 2 accounts: 12 of the 14 in doubt are not in it.
    const whole = server.fake.store.exportCsv('accounts').trimEnd().split('\n');
    const cut = fixture.file('cut.csv', `${whole.slice(0, 3).join('\n')}\n`);
    const match = [...matchArgs(journal, cut), '--absent-if-missing'];

    const dry = await runCrm([...match, '--json'], env);
    expect(dry.stderr).toMatch(/^crm: --apply would refuse this: .*12 of the 14 accounts in doubt .* give --force$/m);
    expect(await pendingKeys(journal)).toEqual(keys);

    const refused = await runCrm([...match, '--apply'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/12 of the 14 accounts in doubt are not in the export/);
    expect(await pendingKeys(journal)).toEqual(keys);
    const before = server.fake.store.accounts.size;
    // Nothing settled absent: the next apply creates none of them again.
    expect((await runCrm(args, env)).code).toBe(9);
    expect(server.fake.store.accounts.size).toBe(before);

    // The whole export settles every one to its id, with no --force: none is absent.
    const full = fixture.file('full.csv', server.fake.store.exportCsv('accounts'));
    const settled = await runCrm([...matchArgs(journal, full), '--absent-if-missing', '--apply', '--json'], env);
    expect([settled.code, settled.stderr]).toEqual([0, '']);
    expect(JSON.parse(settled.stdout.trim().split('\n').at(-1) ?? '')).toMatchObject({ settled: 14, absent: 0 });
    expect(server.fake.store.accounts.size).toBe(before);
  });

  it('settles them absent with --force, and a few absent among many matched need no --force', async () => {
    const { journal, keys } = await inDoubt(14);
    const whole = server.fake.store.exportCsv('accounts').trimEnd().split('\n');
    // 3 of the 14 missing: settled absent without --force.
    const most = fixture.file('most.csv', `${whole.slice(0, whole.length - 5).join('\n')}\n`);
    const few = await runCrm([...matchArgs(journal, most), '--absent-if-missing', '--json'], env);
    expect([few.code, few.stderr]).toEqual([0, '']);
    expect(JSON.parse(few.stdout.trim().split('\n').at(-1) ?? '')).toMatchObject({ settled: 11, absent: 3 });

    const cut = fixture.file('cut.csv', `${whole.slice(0, 3).join('\n')}\n`);
    const forced = await runCrm([...matchArgs(journal, cut), '--absent-if-missing', '--apply', '--force'], env);
    expect(forced.code).toBe(0);
    expect(await pendingKeys(journal)).toEqual([]);
    expect(keys).toHaveLength(14);
  });
});
