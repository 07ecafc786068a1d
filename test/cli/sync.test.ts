import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import { type FakeCrmServer, startFakeCrmServer } from '../../src/testing/server';
import { scriptCommand, shellWord } from '../support/pty';
import { CRM_BIN, envFor, runCrm } from '../support/run-crm';
import { syncCliFixture } from '../support/sync-cli';

const fixture = syncCliFixture('crm-sync-');
let dir: string;
let server: FakeCrmServer;
let env: Record<string, string>;
beforeEach(() => {
  ({ dir, server, env } = fixture);
});
const file = fixture.file;

const posts = () => server.fake.requests.filter((r) => r.method !== 'GET').length;

/** A small ERP export: 2 accounts, 2 contacts, 1 deal, 1 event. */
function smallExport() {
  return {
    journal: join(dir, 'acme.sync.db'),
    accounts: file(
      'customers.csv',
      'key,name,industry,annualRevenue\r\nC-1,Acme Ltd,Manufacturing,1200000\r\nC-2,"Beta, Inc",Retail,\r\n',
    ),
    contacts: file(
      'people.csv',
      '\uFEFFkey,accountKey,email,firstName,isPrimary\nP-1,C-1,a@x.example,Ann,true\nP-2,C-2,b@x.example,"Bob ""B""\nJr",false\n',
    ),
    opportunities: file(
      'deals.ndjson',
      '{"key":"D-1","accountKey":"C-1","contactKey":"P-1","data":{"name":"Big deal","amount":5000}}\n',
    ),
    activities: file('events.csv', 'key,opportunityKey,type,subject\nE-1,D-1,note,Kick-off\n'),
  };
}

const sourceArgs = (s: ReturnType<typeof smallExport>) => [
  '--journal',
  s.journal,
  '--accounts',
  s.accounts,
  '--contacts',
  s.contacts,
  '--opportunities',
  s.opportunities,
  '--activities',
  s.activities,
];

const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('crm sync plan', () => {
  it('prints the plan as NDJSON, one entry a line then the counts, and sends nothing', async () => {
    const s = smallExport();
    const run = await runCrm(['sync', 'plan', ...sourceArgs(s)], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = lines(run.stdout);
    expect(out.slice(0, -1)).toEqual([
      { type: 'accounts', key: 'C-1', action: 'create' },
      { type: 'accounts', key: 'C-2', action: 'create' },
      { type: 'contacts', key: 'P-1', action: 'create' },
      { type: 'contacts', key: 'P-2', action: 'create' },
      { type: 'opportunities', key: 'D-1', action: 'create' },
      { type: 'activities', key: 'E-1', action: 'create' },
    ]);
    expect(out.at(-1)).toEqual({
      counts: { create: 6, update: 0, unchanged: 0, skip: 0, deactivate: 0, blocked: 0, invalid: 0 },
      refusedRemovals: [],
    });
    expect(server.fake.requests).toEqual([]);
  });

  it("says why a row would not go: a bad row's entry carries the check that refused it", async () => {
    const s = smallExport();
    writeFileSync(s.contacts, 'key,accountKey,email\nP-1,C-1,not-an-email\nP-2,C-9,b@x.example\n');
    const run = await runCrm(['sync', 'plan', ...sourceArgs(s)], env);
    // Invalid records: the plan exits 13 (issue 47), having printed every entry.
    expect([run.code, run.stderr]).toEqual([13, '']);
    const out = lines(run.stdout);
    expect(out).toContainEqual({
      type: 'contacts',
      key: 'P-1',
      action: 'invalid',
      reason: expect.stringMatching(/data\.email/),
    });
    expect(out).toContainEqual({
      type: 'contacts',
      key: 'P-2',
      action: 'invalid',
      reason: expect.stringMatching(/No account has key "C-9"/),
    });
    expect(server.fake.requests).toEqual([]);
  });

  it('needs a tenant but no API key nor API root, since it sends nothing', async () => {
    const s = smallExport();
    // Nor an API root: a plan has nowhere to send.
    const run = await runCrm(['sync', 'plan', ...sourceArgs(s)], { CRM_TENANT_ID: 'tenant_demo' });
    expect([run.code, run.stderr]).toEqual([0, '']);
    const none = await runCrm(['sync', 'plan', ...sourceArgs(s)], {});
    expect([none.code, JSON.parse(none.stderr).message]).toEqual([
      2,
      'No tenant: pass --tenant <id> or set CRM_TENANT_ID',
    ]);
    expect(server.fake.requests).toEqual([]);
  });
});

describe('crm sync apply', () => {
  it('loads the files, writes the report, and a re-run after one changed row updates that field only', async () => {
    const s = smallExport();
    const report = join(dir, 'report.json');
    const first = await runCrm(['sync', 'apply', ...sourceArgs(s), '--report', report], env);
    expect([first.code, first.stderr]).toEqual([0, '']);
    const written = JSON.parse(readFileSync(report, 'utf8'));
    expect(written).toMatchObject({ created: 6, updated: 0, unchanged: 0, failed: [], inDoubt: [] });
    expect(JSON.parse(first.stdout)).toEqual(written);
    const contacts = [...server.fake.store.contacts.values()];
    expect(contacts.map((c) => [c.email, c.firstName, c.isPrimary])).toEqual([
      ['a@x.example', 'Ann', true],
      ['b@x.example', 'Bob "B"\nJr', false],
    ]);
    const account = [...server.fake.store.accounts.values()].find((a) => a.name === 'Acme Ltd');
    expect(account?.annualRevenue).toBe(1200000);
    expect(contacts[0]?.accountId).toBe(account?.id);
    expect(JSON.stringify(written)).not.toContain(env.CRM_API_KEY);

    writeFileSync(
      s.contacts,
      'key,accountKey,email,firstName,isPrimary\nP-1,C-1,a2@x.example,Ann,true\nP-2,C-2,b@x.example,"Bob ""B""\nJr",false\n',
    );
    const plan = await runCrm(['sync', 'plan', ...sourceArgs(s)], env);
    expect(lines(plan.stdout)).toContainEqual({
      type: 'contacts',
      key: 'P-1',
      action: 'update',
      changes: { email: { from: 'a@x.example', to: 'a2@x.example' } },
    });
    const before = server.fake.requests.length;
    const second = await runCrm(['sync', 'apply', ...sourceArgs(s)], env);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ created: 0, updated: 1, unchanged: 5 });
    const sent = server.fake.requests.slice(before);
    expect(sent.map((r) => [r.method, r.body])).toEqual([['PUT', { email: 'a2@x.example' }]]);
  });

  it('takes over the lock a killed run left, after its lease, and says so on stderr and in the report', async () => {
    const s = smallExport();
    // A run killed while it held the tenant's lock (a short lease, for the test).
    const killed = sqliteJournal(s.journal, { leaseMs: 300 });
    await killed.open();
    await killed.lock(server.fake.tenantId, 'run_killed');
    await killed.close();

    const run = await runCrm(['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts], env);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^lock: taken over from run run_killed, which had stopped renewing it/m);
    expect(JSON.parse(run.stdout)).toMatchObject({ created: 2, lockTakenOver: { runId: 'run_killed' } });
    // The run log keeps it, for crm sync status.
    const status = await runCrm(['sync', 'status', '--journal', s.journal], env);
    expect(lines(status.stdout)[0]).toMatchObject({
      lock: null,
      runs: [{ state: 'finished', lockTakenOver: 'run_killed' }],
    });
  });

  it('exits 9 when a record failed, listing it on stderr and in the report', async () => {
    const s = smallExport();
    writeFileSync(s.contacts, 'key,accountKey,email\nP-1,C-1,a@x.example\nP-9,C-404,z@x.example\n');
    const report = join(dir, 'report.json');
    const run = await runCrm(
      ['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts, '--contacts', s.contacts, '--report', report],
      env,
    );
    expect(run.code).toBe(9);
    expect(run.stderr).toMatch(/^failed contacts P-9: .*C-404/m);
    expect(JSON.parse(readFileSync(report, 'utf8')).failed).toEqual([
      {
        type: 'contacts',
        key: 'P-9',
        error: expect.objectContaining({ name: 'CrmValidationError', sideEffects: 'none' }),
      },
    ]);
  });

  it('exits 3 when the key is refused, and 9 with each record listed when the CRM cannot be reached', async () => {
    const s = smallExport();
    const refused = await runCrm(['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts], {
      ...env,
      CRM_API_KEY: 'wrong-key',
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).not.toContain('wrong-key');
    // Each record is listed, failed or in doubt as the engine classifies the refused connection.
    const down = await runCrm(
      ['sync', 'apply', '--journal', join(dir, 'other.db'), '--accounts', s.accounts, '--max-retries', '0'],
      { ...env, CRM_BASE_URL: 'http://127.0.0.1:9' },
    );
    expect(down.code).toBe(9);
    expect(down.stderr).toMatch(/^(failed|in doubt) accounts C-1\b/m);
    expect(down.stderr).toMatch(/^(failed|in doubt) accounts C-2\b/m);
  });
});

describe('crm sync: bad files exit 2 before anything is sent', () => {
  it('names the file, line and column of a wrong column, with the nearest field', async () => {
    const s = smallExport();
    const bad = file('bad.csv', 'key,emial\nP-1,a@x.example\n');
    const run = await runCrm(
      ['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts, '--contacts', bad],
      env,
    );
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toMatchObject({
      message: `${bad}:1:2: "emial" is not a column of contacts; did you mean "email"?`,
      file: bad,
      line: 1,
      column: 2,
    });
    expect(server.fake.requests).toEqual([]);
  });

  it('refuses a malformed line at the end of a file before the first record of another is sent', async () => {
    const s = smallExport();
    const bad = file(
      'events.ndjson',
      '{"key":"E-1","opportunityKey":"D-1","data":{"type":"note","subject":"a"}}\n{"key":"E-2", secret}\n',
    );
    const run = await runCrm(
      ['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts, '--activities', bad],
      env,
    );
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toBe(`${bad}:2:15: not valid JSON`);
    expect(run.stderr).not.toContain('secret');
    expect(server.fake.requests).toEqual([]);
  });

  it('refuses an unreadable file, two lists on standard input, no source, and a bad flag value', async () => {
    const s = smallExport();
    const cases: [string[], string][] = [
      [['--accounts', join(dir, 'missing.csv')], `${join(dir, 'missing.csv')}: cannot read the file (ENOENT)`],
      [['--accounts', '-', '--contacts', '-'], 'Standard input (-) can be the source of one list at most'],
      [[], 'No source: give --accounts, --contacts, --opportunities or --activities <file>'],
      [['--accounts', s.accounts, '--removed', 'delete'], '--removed must be "keep" or "deactivate", not "delete"'],
      [['--accounts', s.accounts, '--concurrency', '0'], '--concurrency must be from 1 to 256'],
      [['--accounts', s.accounts, '--in-doubt', 'retry'], '--in-doubt must be "report" or "recreate", not "retry"'],
      [
        ['--accounts', file('empty.csv', '')],
        `${join(dir, 'empty.csv')}: the file is empty: a CSV file starts with its header`,
      ],
      [
        ['--accounts', s.accounts, '--report', join(dir, 'no', 'such', 'dir.json')],
        `--report: cannot write ${join(dir, 'no', 'such', 'dir.json')} (ENOENT)`,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runCrm(['sync', 'apply', '--journal', s.journal, ...args], env);
      expect([run.code, JSON.parse(run.stderr).message]).toEqual([2, message]);
    }
    const noJournal = await runCrm(['sync', 'plan', '--accounts', s.accounts], env);
    expect([noJournal.code, JSON.parse(noJournal.stderr).message]).toEqual([
      2,
      'A journal is required: --journal <file>, or --postgres <connection string>',
    ]);
    expect(server.fake.requests).toEqual([]);
  });

  it('reads one list from standard input, CSV or NDJSON by its first character', async () => {
    const s = smallExport();
    const run = await runCrm(
      ['sync', 'plan', '--journal', s.journal, '--accounts', s.accounts, '--contacts', '-'],
      env,
      'key,accountKey,email\nP-1,C-1,a@x.example\n',
    );
    expect(lines(run.stdout)).toContainEqual({ type: 'contacts', key: 'P-1', action: 'create' });
  });

  it('takes a 10 MiB cell whole, and never prints it', async () => {
    const s = smallExport();
    const big = 'w'.repeat(10 * 1024 * 1024);
    const deals = file('deals.csv', `key,accountKey,name,description\nD-1,C-1,Deal,"${big}"\n`);
    const run = await runCrm(
      ['sync', 'plan', '--journal', s.journal, '--accounts', s.accounts, '--opportunities', deals],
      env,
    );
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toContainEqual({ type: 'opportunities', key: 'D-1', action: 'create' });
    expect(run.stdout.length + run.stderr.length).toBeLessThan(10_000);
  }, 60_000);
});

describe('crm sync status and resolve', () => {
  it('lists tenants, runs and records in doubt; resolve settles one by hand', async () => {
    const s = smallExport();
    // The first account's create is stored, then its connection drops: in doubt, as accounts stay.
    server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    const first = await runCrm(
      ['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts, '--max-retries', '0'],
      env,
    );
    expect(first.code).toBe(9);
    expect(first.stderr).toMatch(/^in doubt accounts C-1 \{name "Acme Ltd"\}/m);

    const status = await runCrm(['sync', 'status', '--journal', s.journal], env);
    expect(status.code).toBe(0);
    const [tenant] = lines(status.stdout);
    expect(tenant).toMatchObject({
      tenant: 'tenant_demo',
      // With what was sent, to search the CRM by.
      inDoubt: [{ type: 'accounts', key: 'C-1', state: 'inDoubt', sent: { name: 'Acme Ltd' } }],
      runs: [expect.objectContaining({ state: 'finished', created: 1, inDoubt: 1, failed: 0, failures: [] })],
    });

    const stored = [...server.fake.store.accounts.values()].find((a) => a.name === 'Acme Ltd');
    const resolve = await runCrm(
      ['sync', 'resolve', '--journal', s.journal, '--type', 'accounts', '--key', 'C-1', '--id', stored?.id ?? ''],
      env,
    );
    expect(resolve.code).toBe(0);
    const again = await runCrm(['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts], env);
    expect(again.code).toBe(0);
    expect([...server.fake.store.accounts.values()].filter((a) => a.name === 'Acme Ltd')).toHaveLength(1);

    const bad = await runCrm(['sync', 'resolve', '--journal', s.journal, '--type', 'accounts', '--key', 'C-1'], env);
    expect([bad.code, JSON.parse(bad.stderr).message]).toEqual([2, 'Give one of --id <crm-id> and --absent']);
    const typo = await runCrm(
      ['sync', 'resolve', '--journal', s.journal, '--type', 'account', '--key', 'C-1', '--absent'],
      env,
    );
    expect(typo.code).toBe(2);

    // A key from argv is echoed as every JSON crm prints: line separators and bidi controls escaped.
    const odd = await runCrm(
      ['sync', 'resolve', '--journal', s.journal, '--type', 'accounts', '--key', 'C-\u2028\u202e9', '--absent'],
      env,
    );
    expect(odd.code).toBe(0);
    expect(odd.stderr).toContain('accounts "C-\\u2028\\u202e9": not in the CRM');
    expect(odd.stderr).not.toMatch(/[\u2028\u202e]/);
  });

  it("status shows a tenant's run lock while a run holds it: its run and its age", async () => {
    const path = join(dir, 'held.sync.db');
    const journal = sqliteJournal(path);
    await journal.open();
    // Taken a minute and a half ago.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 90_000);
    const lock = await journal.lock('acme', 'run_nightly');
    vi.useRealTimers();
    try {
      const status = await runCrm(['sync', 'status', '--journal', path], env);

      expect(status.code).toBe(0);
      const [tenant] = lines(status.stdout);
      expect(tenant).toMatchObject({
        tenant: 'acme',
        lock: { runId: 'run_nightly', leaseSeconds: 30, ageSeconds: expect.toSatisfy((age: number) => age >= 90) },
      });
    } finally {
      await lock.release();
      await journal.close();
    }
    const free = await runCrm(['sync', 'status', '--journal', path], env);
    expect(free.stdout).toBe('');
  });

  it('status of a journal that does not exist exits 2 and makes none', async () => {
    const run = await runCrm(['sync', 'status', '--journal', join(dir, 'none.db')], env);
    expect([run.code, JSON.parse(run.stderr).message]).toEqual([
      2,
      `No journal at ${join(dir, 'none.db')}: crm sync apply makes one`,
    ]);
  });
});

describe('crm sync help', () => {
  it("lists the commands and each type's CSV columns with their types and enum values", async () => {
    const run = await runCrm(['sync', '--help'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('CSV columns of --contacts:');
    expect(run.stdout).toMatch(/^ {2}status +one of: active, inactive$/m);
    expect(run.stdout).toMatch(/^ {2}accountKey +string, the key of its account in the source$/m);
    const apply = await runCrm(['sync', 'apply', '--help'], {});
    expect(apply.stdout).toMatch(/--in-doubt report\|recreate/);
    expect(apply.stdout).toMatch(/^ {2}annualRevenue +number$/m);
  });
});

const exec = promisify(execFile);

describe('crm sync apply on a terminal', () => {
  it('shows one live progress line on stderr under a pseudo-terminal, and none when stderr is a file', async () => {
    const s = smallExport();
    const command = [process.execPath, CRM_BIN, 'sync', 'apply', ...sourceArgs(s)].map(shellWord).join(' ');
    const { stdout } = await exec(scriptCommand(), ['-qec', command, '/dev/null'], {
      env: { ...env, PATH: process.env.PATH },
    });
    // At most 4 a second, the last telling where the run ended (a list's end is told only in time).
    expect(stdout).toContain('\r\x1b[Kactivities 1/1  1 created  0 updated  0 unchanged  0 failed  0 in doubt  ');
    expect(stdout).toContain(
      'Done: 6 created, 0 updated, 0 unchanged, 0 deactivated, 0 failed, 0 in doubt, 0 skipped.',
    );

    const errors = join(dir, 'stderr.txt');
    writeFileSync(s.contacts, 'key,accountKey,email\nP-1,C-1,c@x.example\n');
    await exec(
      'sh',
      [
        '-c',
        `${[process.execPath, CRM_BIN, 'sync', 'apply', ...sourceArgs(s)].map(shellWord).join(' ')} 2>${shellWord(errors)}`,
      ],
      {
        env: { ...env, PATH: process.env.PATH },
      },
    );
    expect(readFileSync(errors, 'utf8')).toBe('');
  });
});

describe('crm sync apply killed and resumed', () => {
  it('kill -9 mid-run, then a re-run: no contact or activity twice, every account or opportunity that may be listed in doubt', async () => {
    await server.close();
    server = fixture.server = await startFakeCrmServer({ latencyMs: 20 });
    env = envFor(server.fake.credentials);
    const n = 12;
    const journal = join(dir, 'kill.db');
    const accounts = file(
      'a.csv',
      `key,name\n${Array.from({ length: n }, (_, i) => `C-${i},Account ${i}`).join('\n')}\n`,
    );
    const contacts = file(
      'c.csv',
      `key,accountKey,email\n${Array.from({ length: 2 * n }, (_, i) => `P-${i},C-${i % n},p${i}@x.example`).join('\n')}\n`,
    );
    const deals = file(
      'd.csv',
      `key,accountKey,name\n${Array.from({ length: n }, (_, i) => `D-${i},C-${i},Deal ${i}`).join('\n')}\n`,
    );
    const events = file(
      'e.csv',
      `key,opportunityKey,type,subject\n${Array.from({ length: 2 * n }, (_, i) => `E-${i},D-${i % n},note,Event ${i}`).join('\n')}\n`,
    );
    const args = [
      'sync',
      'apply',
      '--journal',
      journal,
      '--accounts',
      accounts,
      '--contacts',
      contacts,
      '--opportunities',
      deals,
      '--activities',
      events,
      '--concurrency',
      '4',
    ];

    // Killed once a given number of creates reached the server: whatever the machine's speed,
    // the kill falls in the contacts and again in the opportunities, with creates in flight.
    for (const after of [n + 5, 3 * n + 4]) {
      const child = spawn(process.execPath, [CRM_BIN, ...args], {
        env: { PATH: process.env.PATH, ...env },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      while (posts() < after) {
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      child.kill('SIGKILL');
      await exited;
    }
    const report = join(dir, 'resume.json');
    const resumed = await runCrm([...args, '--report', report], env);
    expect([0, 9]).toContain(resumed.code);
    const { inDoubt } = JSON.parse(readFileSync(report, 'utf8')) as { inDoubt: { type: string; key: string }[] };
    const doubted = new Set(inDoubt.map(({ type, key }) => `${type}/${key}`));

    const count = <T>(values: Iterable<T>, by: (v: T) => string) => {
      const seen = new Map<string, number>();
      for (const v of values) seen.set(by(v), (seen.get(by(v)) ?? 0) + 1);
      return seen;
    };
    const emails = count(server.fake.store.contacts.values(), (c) => c.email ?? '');
    const subjects = count(server.fake.store.activities.values(), (a) => a.subject ?? '');
    expect([...emails.values()].every((times) => times === 1)).toBe(true);
    expect([...subjects.values()].every((times) => times === 1)).toBe(true);
    for (let i = 0; i < 2 * n; i++) {
      // Every contact is in the CRM, or waits behind an account in doubt.
      expect(emails.has(`p${i}@x.example`) || doubted.has(`accounts/C-${i % n}`)).toBe(true);
    }
    const names = count(server.fake.store.accounts.values(), (a) => a.name ?? '');
    for (let i = 0; i < n; i++) {
      const times = names.get(`Account ${i}`) ?? 0;
      // Never twice; once, or listed in doubt (created once, its answer lost with the process).
      expect(times).toBeLessThanOrEqual(1);
      if (times === 0) expect(doubted.has(`accounts/C-${i}`)).toBe(true);
    }
    const dealNames = count(server.fake.store.opportunities.values(), (o) => o.name ?? '');
    for (let i = 0; i < n; i++) expect(dealNames.get(`Deal ${i}`) ?? 0).toBeLessThanOrEqual(1);
    if (resumed.code === 9) expect(inDoubt.length).toBeGreaterThan(0);
  }, 120_000);
});

describe('crm sync apply interrupted', () => {
  it('stops on Ctrl-C once the requests in flight have answered (exit 130), and the next apply resumes without duplicates', async () => {
    await server.close();
    server = fixture.server = await startFakeCrmServer({ latencyMs: 20 });
    env = envFor(server.fake.credentials);
    const journal = join(dir, 'int.db');
    const contacts = file(
      'c.csv',
      `key,email\n${Array.from({ length: 60 }, (_, i) => `P-${i},p${i}@x.example`).join('\n')}\n`,
    );
    const args = ['sync', 'apply', '--journal', journal, '--contacts', contacts, '--concurrency', '2'];
    const child = spawn(process.execPath, [CRM_BIN, ...args], { env: { PATH: process.env.PATH, ...env } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    while (posts() < 5 && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('crm: stopped; the journal holds what was done, and the next apply resumes');
    const stopped = server.fake.store.contacts.size;
    expect(stopped).toBeLessThan(60);

    const resumed = await runCrm(args, env);
    expect(resumed.code).toBe(0);
    const emails = [...server.fake.store.contacts.values()].map((c) => c.email);
    expect(emails).toHaveLength(60);
    expect(new Set(emails).size).toBe(60);
  }, 60_000);
});

describe('crm sync options passed to the engine', () => {
  it('--removed deactivate sets inactive an account its complete file no longer holds, as the plan said', async () => {
    const s = smallExport();
    const first = await runCrm(['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts], env);
    expect(first.code).toBe(0);
    writeFileSync(s.accounts, 'key,name,industry\nC-1,Acme Ltd,Manufacturing\n');
    const args = ['--journal', s.journal, '--accounts', s.accounts, '--removed', 'deactivate'];
    const plan = await runCrm(['sync', 'plan', ...args], env);
    expect(lines(plan.stdout)).toContainEqual({ type: 'accounts', key: 'C-2', action: 'deactivate' });
    const run = await runCrm(['sync', 'apply', ...args], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ deactivated: 1 });
    const beta = [...server.fake.store.accounts.values()].find((a) => a.name === 'Beta, Inc');
    expect(beta?.status).toBe('inactive');
  });

  it('--in-doubt recreate creates an account in doubt again, as asked', async () => {
    const s = smallExport();
    server.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    const first = await runCrm(
      ['sync', 'apply', '--journal', s.journal, '--accounts', s.accounts, '--max-retries', '0'],
      env,
    );
    expect(first.code).toBe(9);
    const again = await runCrm(
      [
        'sync',
        'apply',
        '--journal',
        s.journal,
        '--accounts',
        s.accounts,
        '--in-doubt',
        'recreate',
        '--concurrency',
        '1',
      ],
      env,
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 1, inDoubt: [] });
  });
});

describe('crm sync plan on a terminal', () => {
  it('prints a line per create with its name, per update with old and new values, and a summary', async () => {
    const s = smallExport();
    expect((await runCrm(['sync', 'apply', ...sourceArgs(s)], env)).code).toBe(0);
    writeFileSync(
      s.contacts,
      'key,accountKey,email,firstName,isPrimary\nP-1,C-1,a2@x.example,Ann,true\nP-2,C-2,b@x.example,"Bob ""B""\nJr",false\n',
    );
    writeFileSync(
      s.accounts,
      'key,name,industry,annualRevenue\nC-1,Acme Ltd,Manufacturing,1200000\nC-2,"Beta, Inc",Retail,\nC-3,Gamma GmbH,,\n',
    );
    const command = [process.execPath, CRM_BIN, 'sync', 'plan', ...sourceArgs(s)].map(shellWord).join(' ');
    const { stdout } = await exec(scriptCommand(), ['-qec', command, '/dev/null'], {
      env: { ...env, PATH: process.env.PATH },
    });
    expect(stdout.split(/\r?\n/)).toEqual([
      '+ accounts C-3 "Gamma GmbH"',
      '~ contacts P-1 email: a@x.example → a2@x.example',
      'Plan: 1 to create, 1 to update, 0 to deactivate, 5 unchanged, 0 skipped, 0 blocked, 0 invalid.',
      '',
    ]);
    expect(server.fake.requests.filter((r) => r.method !== 'GET')).toHaveLength(6);
  });
});
