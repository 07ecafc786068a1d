import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sqliteJournal } from '../../../src/sync/sqlite-journal';
import { runCrm, runInProcess } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-exit-');

const BAD = 'key,name\nA1,Acme\nA2,\n';
const CHILDREN = 'key,accountKey,firstName,lastName,email\nC1,A1,Ann,Lee,ann@x.io\nC2,A2,Bob,Ray,bob@x.io\n';

/** A run's exit code and its error's facts. */
const facts = (run: { code: number | null; stderr: string }) => {
  const error = JSON.parse(run.stderr.trim().split('\n').at(-1) as string);
  return [run.code, error.reason, error.message];
};

describe('crm sync gives each expected condition its own exit code', () => {
  it('10 when another run holds the journal lock, and the run sends nothing', async () => {
    const path = join(f.dir, 'acme.db');
    const journal = sqliteJournal(path);
    await journal.open();
    const lock = await journal.lock(f.env.CRM_TENANT_ID as string, 'run_other');
    try {
      const accounts = f.file('accounts.csv', 'key,name\nA1,Acme\n');
      const run = await runCrm(['sync', 'apply', '--journal', path, '--accounts', accounts], f.env);
      const [code, reason] = facts(run);
      expect([code, reason]).toEqual([10, 'locked']);
      expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      await lock.release();
      journal.close();
    }
  });

  it('11 for a journal that is no journal, and 12 for one that cannot be opened, naming why', async () => {
    const accounts = f.file('accounts.csv', 'key,name\nA1,Acme\n');
    const corrupt = f.file('corrupt.db', 'this is not a SQLite database, whatever its name says\n'.repeat(20));
    const run = await runCrm(['sync', 'apply', '--journal', corrupt, '--accounts', accounts], f.env);
    expect(facts(run).slice(0, 2)).toEqual([11, 'corrupt']);

    const directory = join(f.dir, 'a-directory');
    mkdirSync(directory);
    const inDirectory = await runCrm(['sync', 'apply', '--journal', directory, '--accounts', accounts], f.env);
    expect(facts(inDirectory)).toEqual([
      12,
      'unavailable',
      `The sync journal ${directory} could not be opened (unable to open database file): ${directory} is a directory: --journal names a file.`,
    ]);
    const missing = join(f.dir, 'missing', 'acme.db');
    const planned = await runCrm(['sync', 'plan', '--journal', missing, '--accounts', accounts], f.env);
    const [code, reason, message] = facts(planned);
    expect([code, reason]).toEqual([12, 'unavailable']);
    expect(message).toContain(`the directory ${join(f.dir, 'missing')} does not exist`);
    expect(f.server.fake.requests).toEqual([]);
  });

  it('lists the codes in crm --help', async () => {
    const help = await runCrm(['--help']);
    expect(help.stdout).toContain("10 crm sync: another run holds the journal's lock (try again later)");
    expect(help.stdout).toContain('11 crm sync: the journal is corrupt, not a journal, or written by a newer crm');
    expect(help.stdout).toContain('12 crm sync: the journal cannot be opened or written (the message says why)');
    expect(help.stdout).toContain('13 crm sync plan found invalid or blocked records (--allow-invalid: 0)');
  });
});

describe('crm sync plan', () => {
  it('exits 13 when it finds invalid or blocked records, and 0 with --allow-invalid or a clean source', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', BAD);
    const contacts = f.file('contacts.csv', CHILDREN);
    const plan = await runCrm(
      ['sync', 'plan', '--journal', journal, '--accounts', accounts, '--contacts', contacts],
      f.env,
    );
    expect(plan.code).toBe(13);
    expect(JSON.parse(plan.stdout.trim().split('\n').at(-1) as string).counts).toMatchObject({
      invalid: 1,
      blocked: 1,
    });
    const allowed = await runCrm(
      ['sync', 'plan', '--journal', journal, '--accounts', accounts, '--contacts', contacts, '--allow-invalid'],
      f.env,
    );
    expect(allowed.code).toBe(0);
    const clean = await runCrm(
      ['sync', 'plan', '--journal', journal, '--accounts', f.file('ok.csv', 'key,name\nA1,Acme\n')],
      f.env,
    );
    expect(clean.code).toBe(0);
    expect(f.server.fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('--summary prints the first 5 entries of each action and the counts', async () => {
    const journal = join(f.dir, 'acme.db');
    const rows = Array.from({ length: 12 }, (_, i) => `A${i},Account ${i}`);
    const accounts = f.file('accounts.csv', `key,name\n${rows.join('\n')}\nB1,\nB2,\n`);
    const plan = await runCrm(['sync', 'plan', '--journal', journal, '--accounts', accounts, '--summary'], f.env);
    expect(plan.code).toBe(13);
    const lines = plan.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.filter((l) => l.action === 'create')).toHaveLength(5);
    expect(lines.filter((l) => l.action === 'invalid')).toHaveLength(2);
    expect(lines.at(-1).counts).toMatchObject({ create: 12, invalid: 2 });
  });
});

describe('crm sync plan --summary on a terminal', () => {
  it('shows the first 5 lines of each action, how many more, and the summary line', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => `A${i},Account ${i}`);
    const accounts = f.file('accounts.csv', `key,name\n${rows.join('\n')}\n`);
    const run = await runInProcess(
      ['sync', 'plan', '--journal', join(f.dir, 'acme.db'), '--accounts', accounts, '--summary'],
      { CRM_TENANT_ID: 'tenant_memory' },
      { stdout: true, stderr: false },
    );
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      '+ accounts A0 "Account 0"',
      '+ accounts A1 "Account 1"',
      '+ accounts A2 "Account 2"',
      '+ accounts A3 "Account 3"',
      '+ accounts A4 "Account 4"',
      '  … and 4 more: create',
      'Plan: 9 to create, 0 to update, 0 to deactivate, 0 unchanged, 0 skipped, 0 blocked, 0 invalid.',
    ]);
  });
});

describe('crm sync apply', () => {
  it('--summary prints the first 5 of each problem and their totals', async () => {
    const journal = join(f.dir, 'acme.db');
    const rows = Array.from({ length: 8 }, (_, i) => `A${i},`);
    const accounts = f.file('accounts.csv', `key,name\nOK,Acme\n${rows.join('\n')}\n`);
    const run = await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts, '--summary'], f.env);
    expect(run.code).toBe(9);
    const report = JSON.parse(run.stdout);
    expect(report.failed).toHaveLength(5);
    expect(report.totals).toEqual({ failed: 8, inDoubt: 0, skipped: 0 });
    expect(report.created).toBe(1);
    const problems = run.stderr.trim().split('\n');
    expect(problems.filter((line) => line.startsWith('failed accounts'))).toHaveLength(5);
    expect(problems).toContain('… and 3 more failed or refused');
  });

  it('off a terminal, writes progress lines every --progress-every seconds, as NDJSON with --json, and none with 0', async () => {
    await f.server.close();
    const { startFakeCrmServer } = await import('../../../src/testing/server');
    const { envFor } = await import('../../support/run-crm');
    // Slow answers: the run lasts long enough for several beats (counted, never timed).
    f.server = await startFakeCrmServer({ latencyMs: 40 });
    const env = envFor(f.server.fake.credentials);
    const accounts = f.file(
      'accounts.csv',
      `key,name\n${Array.from({ length: 20 }, (_, i) => `A${i},Account ${i}`).join('\n')}\n`,
    );
    const args = ['sync', 'apply', '--journal', join(f.dir, 'a.db'), '--accounts', accounts, '--concurrency', '1'];
    const json = await runCrm([...args, '--progress-every', '0.05', '--json'], env);
    expect(json.code).toBe(0);
    const beats = json.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(beats.length).toBeGreaterThan(1);
    for (const beat of beats) expect(beat).toMatchObject({ event: 'progress' });
    expect(beats.some((beat) => beat.type === 'accounts' && beat.total === 20)).toBe(true);

    const text = await runCrm(
      [
        'sync',
        'apply',
        '--journal',
        join(f.dir, 'b.db'),
        '--accounts',
        accounts,
        '--concurrency',
        '1',
        '--progress-every',
        '0.05',
      ],
      env,
    );
    const lines = text.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line).toMatch(/^crm sync apply \[\d+s\]: (starting|accounts \d+\/20 .*)$/);

    const none = await runCrm(
      ['sync', 'apply', '--journal', join(f.dir, 'c.db'), '--accounts', accounts, '--progress-every', '0'],
      env,
    );
    expect(none.stderr).toBe('');
    const bad = await runCrm([...args, '--progress-every', '-1'], env);
    expect(bad.code).toBe(2);
  });
});
