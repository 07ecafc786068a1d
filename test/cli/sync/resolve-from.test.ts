import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { sqliteJournal } from '../../../src/sync/sqlite-journal';
import type { FakeCrmServer } from '../../../src/testing/server';
import { runCrm, runInProcess } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

/* crm sync resolve --from and --match, their refusals and edges (issue 46, 3). */

const fixture = syncCliFixture('crm-resolve-from-');
let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;
beforeEach(() => {
  ({ dir, server, env } = fixture);
});

const idOf = (name: string) => String([...server.fake.store.accounts.values()].find((a) => a.name === name)?.id);

async function pendingKeys(journal: string): Promise<string[]> {
  const opened = sqliteJournal(journal, { readOnly: true });
  try {
    await opened.open();
    return (await opened.pending(server.fake.tenantId)).map((e) => e.key).sort();
  } finally {
    await opened.close();
  }
}

/** Four accounts synced, then three more whose creates were stored and their answers lost. */
async function inDoubt(names: readonly string[] = ['Gamma', 'Delta', 'Epsilon']) {
  const journal = join(dir, 'j.db');
  const rows = ['Alpha', 'Beta', ...names].map((name, i) => `K${i},${name}`);
  const accounts = fixture.file('accounts.csv', `key,name\n${rows.join('\n')}\n`);
  const args = ['sync', 'apply', '--journal', journal, '--accounts', accounts];
  server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true, times: names.length });
  // The two first accounts are created after the lost ones: the fake answers in order.
  const first = await runCrm(args, env);
  expect(first.code).toBe(9);
  expect(await pendingKeys(journal)).toHaveLength(names.length);
  return { journal, args };
}

describe('crm sync status', () => {
  it('lists each record in doubt with the identifying fields sent, on a terminal and in --json', async () => {
    const { journal } = await inDoubt();
    const text = await runInProcess(['sync', 'status', '--journal', journal], env, { stdout: true, stderr: true });
    expect(text.stdout).toMatch(/^ {4}accounts K0 \{name "Alpha"\}: its answer was lost$/m);
    expect(text.stdout).toMatch(/--match <export.csv> settles many at once/);
    const json = await runCrm(['sync', 'status', '--journal', journal, '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({
      inDoubt: [
        { type: 'accounts', key: 'K0', sent: { name: 'Alpha' } },
        { type: 'accounts', key: 'K1', sent: { name: 'Beta' } },
        { type: 'accounts', key: 'K2', sent: { name: 'Gamma' } },
      ],
    });
  });
});

describe('crm sync resolve --from', () => {
  it('settles every row of a CSV in one change: ids, "absent" and an empty id; the next apply creates only the absent', async () => {
    const { journal, args } = await inDoubt();
    const keys = await pendingKeys(journal);
    expect(keys).toEqual(['K0', 'K1', 'K2']);
    const from = fixture.file(
      'settle.csv',
      `type,key,crmId,name\naccounts,K0,${idOf('Alpha')},Alpha\naccounts,K1,absent,Beta\naccounts,K2,,Gamma\n`,
    );
    const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', from], env);
    expect([run.code, run.stderr]).toEqual([
      0,
      expect.stringMatching(/settled 3 records .*1 to the CRM ids given, 2 absent/),
    ]);
    expect(await pendingKeys(journal)).toEqual([]);
    const before = server.fake.store.accounts.size;
    expect((await runCrm(args, env)).code).toBe(0);
    // Beta and Gamma were said absent: created again, as asked.
    expect(server.fake.store.accounts.size).toBe(before + 2);
  });

  it('refuses a row whose record is not in doubt by its line, and applies nothing of the file', async () => {
    const { journal } = await inDoubt();
    const from = fixture.file(
      'settle.csv',
      `type,key,crmId\naccounts,K0,${idOf('Alpha')}\naccounts,K3,absent\naccounts,K1,${idOf('Beta')}\naccounts,nobody,acc_x\n`,
    );
    const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', from], env);
    expect(run.code).toBe(2);
    // K3 (Delta) is synced, created after the lost ones: refused at line 3; "nobody" at line 5.
    expect(run.stderr).toMatch(new RegExp(`${from}:3: accounts "K3" is synced`));
    expect(run.stderr).toMatch(new RegExp(`${from}:5: accounts "nobody" is not in the journal`));
    expect(run.stderr).toMatch(/nothing of the file was applied/);
    expect(run.stderr).not.toMatch(/more rows refused/);
    expect(await pendingKeys(journal)).toEqual(['K0', 'K1', 'K2']);
  });

  it('takes NDJSON with "id" for crmId, and null for absent', async () => {
    const { journal } = await inDoubt();
    const from = fixture.file(
      'settle.ndjson',
      `{"type":"accounts","key":"K0","id":"${idOf('Alpha')}"}\n\n{"type":"accounts","key":"K1","id":null}\r\n{"type":"accounts","key":"K2","crmId":"${idOf('Gamma')}"}`,
    );
    const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', from], env);
    expect([run.code, run.stderr]).toEqual([0, expect.stringMatching(/settled 3 records/)]);
    expect(await pendingKeys(journal)).toEqual([]);
  });

  it('takes a file of the ids the journal maps as it is: rows already so settle nothing twice', async () => {
    const { journal } = await inDoubt();
    const opened = sqliteJournal(journal, { readOnly: true });
    await opened.open();
    const synced = (await opened.list(server.fake.tenantId, 'accounts', undefined, 100)).filter((e) => e.crmId);
    await opened.close();
    const ids = synced.map((e) => `accounts,${e.key},${e.crmId}`);
    const from = fixture.file('ids.csv', `type,key,crmId\n${ids.join('\n')}\naccounts,K0,${idOf('Alpha')}\n`);
    const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', from], env);
    expect(run.code).toBe(0);
    expect(await pendingKeys(journal)).toEqual(['K1', 'K2']);
  });

  it('refuses a file it cannot read as rows, before anything is applied, with the line', async () => {
    const { journal } = await inDoubt();
    const cases: [string, string, RegExp][] = [
      ['both.csv', 'type,key,crmId,id\naccounts,K0,a,b\n', /both.csv:1: give the CRM id as one column/],
      ['nokey.csv', 'type,crmId\naccounts,a\n', /nokey.csv:1: the header needs the columns type, key and crmId/],
      ['type.csv', `type,key,crmId\naccounts,K0,${idOf('Alpha')}\ndeals,K1,\n`, /type.csv:3: the type must be/],
      ['bad.ndjson', '{"type":"accounts","key":"K0","crmId":null}\n[1]\n', /bad.ndjson:2: not a JSON object/],
      ['empty.csv', '', /empty.csv: the file is empty/],
      ['number.ndjson', '{"type":"accounts","key":"K0","crmId":5}\n', /number.ndjson:1: the crmId must be/],
    ];
    for (const [name, text, message] of cases) {
      const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', fixture.file(name, text)], env);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await pendingKeys(journal)).toEqual(['K0', 'K1', 'K2']);
  });

  it('refuses flags that do not go together, and a --from file that is the journal', async () => {
    const { journal } = await inDoubt();
    const from = fixture.file('s.csv', 'type,key,crmId\n');
    const base = ['sync', 'resolve', '--journal', journal];
    for (const [extra, message] of [
      [['--from', from, '--key', 'K0'], /--key settles one record: not with --from/],
      [['--from', from, '--match', from], /Give --from or --match, not both/],
      [['--from', from, '--apply'], /--apply goes with --match/],
      [['--from', from, '--type', 'accounts'], /--from gives each row its type/],
      [['--match', from], /--type is required/],
      [['--from', journal], /--journal/],
    ] as const) {
      const run = await runCrm([...base, ...extra], env);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
  });
});

it('--from with more refused rows than it shows says how many more, in one line', async () => {
  const { journal } = await inDoubt();
  const rows = Array.from({ length: 130 }, (_, i) => `accounts,nobody${i},acc_${i}`);
  const from = fixture.file('many.csv', `type,key,crmId\n${rows.join('\n')}\n`);
  const run = await runCrm(['sync', 'resolve', '--journal', journal, '--from', from], env);
  expect(run.code).toBe(2);
  expect(run.stderr.match(/^.*many\.csv:\d+: /gm)).toHaveLength(50);
  expect(run.stderr).toMatch(/^… and 80 more rows refused$/m);
  expect(await pendingKeys(journal)).toEqual(['K0', 'K1', 'K2']);
});

describe('crm sync resolve --match', () => {
  it('settles a name the export holds in another case and with spaces; several matches stay in doubt, listed; exit 9', async () => {
    const { journal } = await inDoubt();
    // Someone typed Gamma into the CRM a second time: K2 cannot be told.
    server.fake.store.insertAccount({ name: 'Gamma' });
    // A CRM's export: its header in its own case, names retyped in another case and with spaces.
    const exported = server.fake.store
      .exportCsv('accounts')
      .replace(',name,', ',Name,')
      .replace('Alpha', '  ALPHA ')
      .replace(/Beta/, 'beta');
    const file = fixture.file('export.csv', exported);
    const match = ['sync', 'resolve', '--journal', journal, '--match', file, '--type', 'accounts'];

    // On a terminal: a line per record, then the summary.
    const dry = await runInProcess(match, env, { stdout: true, stderr: true });
    expect(dry.code).toBe(9);
    expect(dry.stdout).toMatch(new RegExp(`^would settle accounts K0 \\{name "Alpha"\\} as ${idOf('Alpha')}`, 'm'));
    expect(dry.stdout).toMatch(/^in doubt accounts K2 \{name "Gamma"\}: 2 records of the export match/m);
    expect(dry.stdout).toMatch(/would stay in doubt: 1 \(1 matched by several/);
    expect(await pendingKeys(journal)).toEqual(['K0', 'K1', 'K2']);

    const applied = await runCrm([...match, '--apply'], env);
    expect(applied.code).toBe(9);
    expect(await pendingKeys(journal)).toEqual(['K2']);
  });

  it('never adopts a CRM record the journal maps to another key: a record of the same data whose create was lost is absent', async () => {
    // K2 is Alpha a second time in the ERP; its create never reached the server.
    const journal = join(dir, 'j.db');
    const accounts = fixture.file('accounts.csv', 'key,name\nK0,Alpha\nK1,Alpha\n');
    const args = ['sync', 'apply', '--journal', journal, '--accounts', accounts, '--concurrency', '1'];
    expect(
      (
        await runCrm(
          ['sync', 'apply', '--journal', journal, '--accounts', fixture.file('a0.csv', 'key,name\nK0,Alpha\n')],
          env,
        )
      ).code,
    ).toBe(0);
    server.fake.failNext({ endpoint: 'createAccount', applied: false, drop: true });
    expect((await runCrm(args, env)).code).toBe(9);
    const file = fixture.file('export.csv', server.fake.store.exportCsv('accounts'));
    const run = await runCrm(
      ['sync', 'resolve', '--journal', journal, '--match', file, '--type', 'accounts', '--json'],
      env,
    );
    expect(run.code).toBe(9);
    const [line] = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(line).toMatchObject({ key: 'K1', action: 'missing', taken: [{ crmId: idOf('Alpha'), key: 'K0' }] });

    const absent = await runCrm(
      [
        'sync',
        'resolve',
        '--journal',
        journal,
        '--match',
        file,
        '--type',
        'accounts',
        '--absent-if-missing',
        '--apply',
      ],
      env,
    );
    expect(absent.code).toBe(0);
    expect((await runCrm(args, env)).code).toBe(0);
    expect(server.fake.store.accounts.size).toBe(2);
  });

  it('compares numbers and dates by value: an opportunity exported with "5000.00" and its date in another zone is the one sent', async () => {
    const journal = join(dir, 'j.db');
    const accounts = fixture.file('a.csv', 'key,name\nA,Acme\n');
    const deals = fixture.file(
      'd.csv',
      'key,accountKey,name,amount,expectedCloseDate\nD1,A,Renewal,5000,2026-03-01T09:00:00Z\nD2,A,Renewal,7000,2026-03-01T09:00:00Z\n',
    );
    const args = ['sync', 'apply', '--journal', journal, '--accounts', accounts, '--opportunities', deals];
    expect((await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], env)).code).toBe(0);
    server.fake.failNext({ endpoint: 'createOpportunity', applied: true, drop: true, times: 2 });
    expect((await runCrm(args, env)).code).toBe(9);
    // As a CRM's report may show them: amounts with decimals, date-times in another zone and form.
    const exported = server.fake.store
      .exportCsv('opportunities')
      .replace(',5000,', ',5000.00,')
      .replaceAll('2026-03-01T09:00:00Z', '2026-03-01T10:00:00.000+01:00');
    expect(exported).toContain('5000.00');
    const file = fixture.file('export.csv', exported);
    const run = await runCrm(
      ['sync', 'resolve', '--journal', journal, '--match', file, '--type', 'opportunities', '--apply'],
      env,
    );
    expect([run.code, run.stderr]).toEqual([0, '']);
    const byAmount = (amount: number) =>
      [...server.fake.store.opportunities.values()].find((o) => o.amount === amount)?.id;
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.slice(0, 2)).toEqual([
      expect.objectContaining({ key: 'D1', action: 'settle', crmId: byAmount(5000) }),
      expect.objectContaining({ key: 'D2', action: 'settle', crmId: byAmount(7000) }),
    ]);
    expect((await runCrm(args, env)).code).toBe(0);
    expect(server.fake.store.opportunities.size).toBe(2);
  });

  it("settles an account's activity, which no run can look for, by its subject, kind and the date the sync stamped", async () => {
    const journal = join(dir, 'j.db');
    const accounts = fixture.file('a.csv', 'key,name\nA,Acme\n');
    expect((await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], env)).code).toBe(0);
    const account = idOf('Acme');
    const notes = fixture.file(
      'notes.ndjson',
      ['Call', 'Visit']
        .map(
          (subject, i) =>
            `${JSON.stringify({ key: `N${i}`, data: { type: 'note', subject, relatedToType: 'account', relatedToId: account } })}\n`,
        )
        .join(''),
    );
    const args = ['sync', 'apply', '--journal', journal, '--activities', notes];
    server.fake.failNext({ endpoint: 'createActivity', applied: true, status: 502, times: 2 });
    expect((await runCrm(args, env)).code).toBe(9);
    const file = fixture.file('export.csv', server.fake.store.exportCsv('activities'));
    const run = await runCrm(
      ['sync', 'resolve', '--journal', journal, '--match', file, '--type', 'activities', '--apply'],
      env,
    );
    expect([run.code, run.stderr]).toEqual([0, '']);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      key: 'N0',
      action: 'settle',
      sent: {
        subject: 'Call',
        type: 'note',
        relatedToType: 'account',
        relatedToId: account,
        activityDate: expect.any(String),
      },
    });
    expect((await runCrm(args, env)).code).toBe(0);
    expect(server.fake.store.activities.size).toBe(2);
  });

  it('refuses an export without an id column, without a column that identifies the type, or with an id twice', async () => {
    const { journal } = await inDoubt();
    const match = (file: string) => ['sync', 'resolve', '--journal', journal, '--match', file, '--type', 'accounts'];
    for (const [name, text, message] of [
      ['empty.csv', '', /empty.csv: the file is empty/],
      ['noid.csv', 'name\nAlpha\n', /noid.csv:1: the export has no .{1,2}id.{1,2} column/],
      ['noname.csv', 'id,industry\nacc_1,Retail\n', /none of the columns that identify accounts \(name\)/],
      ['twice.csv', 'id,name\nacc_1,A\nacc_1,B\n', /twice.csv:3:1: the id .{1,2}acc_1.{1,2} is on line 2 too/],
      ['quote.csv', 'id,name\nacc_1,"A\n', /quote.csv:\d+: not valid CSV/],
      ['short.csv', 'id,name\nacc_1\n', /short.csv:2: not valid CSV/],
      ['gone.csv', '', /gone.csv: cannot read the file \(ENOENT\)/],
    ] as const) {
      const path = name === 'gone.csv' ? join(dir, name) : fixture.file(name, text);
      const run = await runCrm(match(path), env);
      expect([run.code, run.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await pendingKeys(journal)).toEqual(['K0', 'K1', 'K2']);
  });
});
