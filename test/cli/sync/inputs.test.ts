import { execFile } from 'node:child_process';
import { chmodSync, linkSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../support/pty';
import { CRM_BIN, runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-inputs-');

const sent = () => f.server.fake.requests.filter((r) => r.method !== 'GET');
const inactive = () => [...f.server.fake.store.accounts.values()].filter((a) => a.status === 'inactive').length;

/** A tenant of 30 accounts synced once from NDJSON into the journal `acme.db`. */
async function syncedTenant() {
  const journal = join(f.dir, 'acme.db');
  const accounts = f.file(
    'accounts.ndjson',
    Array.from({ length: 30 }, (_, i) => `{"key":"C-${i}","data":{"name":"Account ${i}"}}\n`).join(''),
  );
  const first = await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], f.env);
  expect(first.code).toBe(0);
  return { journal, accounts, before: readFileSync(journal), requests: f.server.fake.requests.length };
}

type Tenant = Awaited<ReturnType<typeof syncedTenant>>;

/** `crm sync apply` of the tenant's journal and accounts, with `more` flags. */
const applyTo = (t: Tenant, more: readonly string[], environment = f.env) =>
  runCrm(['sync', 'apply', '--journal', t.journal, '--accounts', t.accounts, ...more], environment);

/** A run's exit code and the message of the error it printed. */
const refusal = (run: { code: number | null; stderr: string }) => [run.code, JSON.parse(run.stderr).message];

describe('crm sync never writes its report over its own inputs', () => {
  it('refuses a --report that is the journal, however it is named, and leaves the journal as it was', async () => {
    const t = await syncedTenant();
    symlinkSync(t.journal, join(f.dir, 'link.json'));
    linkSync(t.journal, join(f.dir, 'hard.json'));
    const names = [
      t.journal,
      `./${relative(process.cwd(), t.journal)}`,
      `${f.dir}/./acme.db`,
      join(f.dir, 'link.json'),
      join(f.dir, 'hard.json'),
    ];
    for (const report of names) {
      const run = await applyTo(t, ['--report', report]);
      expect(refusal(run)).toEqual([
        2,
        `--report ${report} is the journal ${t.journal}: writing there would destroy it; name another file`,
      ]);
    }
    expect(readFileSync(t.journal).equals(t.before)).toBe(true);
    expect(f.server.fake.requests.length).toBe(t.requests);

    // The journal still knows every account: the next run creates none again.
    const again = await applyTo(t, []);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 30 });
    expect(f.server.fake.store.accounts.size).toBe(30);
  });

  it("refuses a --report that is the journal's -wal, -shm or rollback file, existing or not", async () => {
    const t = await syncedTenant();
    for (const suffix of ['-wal', '-shm', '-journal']) {
      const report = `${t.journal}${suffix}`;
      const run = await applyTo(t, ['--report', report]);
      expect(refusal(run)).toEqual([
        2,
        `--report ${report} is the journal's ${suffix} file: writing there would destroy it; name another file`,
      ]);
    }
    expect(f.server.fake.requests.length).toBe(t.requests);
  });

  it('refuses a --report that is a source: with --removed deactivate nothing is deactivated and the source is whole', async () => {
    const t = await syncedTenant();
    const source = readFileSync(t.accounts);
    const run = await applyTo(t, ['--removed', 'deactivate', '--report', t.accounts]);
    expect(refusal(run)).toEqual([
      2,
      `--report ${t.accounts} is the --accounts file ${t.accounts}: writing there would destroy it; name another file`,
    ]);
    expect(readFileSync(t.accounts).equals(source)).toBe(true);
    expect(inactive()).toBe(0);
    expect(f.server.fake.requests.length).toBe(t.requests);
  });

  it('refuses a --report that is the --api-key-file, without printing its path', async () => {
    const t = await syncedTenant();
    const { CRM_API_KEY, ...rest } = f.env;
    const keyFile = f.file('key.txt', `${CRM_API_KEY}\n`);
    const run = await applyTo(t, ['--api-key-file', keyFile, '--report', `${f.dir}/./key.txt`], rest);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toMatch(/is the --api-key-file: writing there would destroy it/);
    expect(readFileSync(keyFile, 'utf8')).toBe(`${CRM_API_KEY}\n`);
  });

  it('refuses a --journal beside which SQLite would write over a source (its -wal)', async () => {
    const accounts = f.file('acme.db-wal', '{"key":"C-1","data":{"name":"Acme"}}\n');
    const journal = join(f.dir, 'acme.db');
    const run = await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts], f.env);
    expect(refusal(run)).toEqual([
      2,
      `--journal ${journal}: SQLite writes ${accounts} beside it, which is the --accounts file ${accounts}`,
    ]);
    expect(readFileSync(accounts, 'utf8')).toBe('{"key":"C-1","data":{"name":"Acme"}}\n');
    expect(sent()).toEqual([]);
  });

  it('refuses a --journal that is a source, for plan and apply, and leaves the source as it was', async () => {
    // An empty NDJSON list would have been made a SQLite file by the journal, and read back as records.
    const accounts = f.file('accounts.ndjson', '');
    for (const command of ['plan', 'apply']) {
      const run = await runCrm(['sync', command, '--journal', accounts, '--accounts', accounts], f.env);
      expect(refusal(run)).toEqual([
        2,
        `--journal ${accounts} is the --accounts file ${accounts}: writing there would destroy it; name another file`,
      ]);
    }
    expect(readFileSync(accounts, 'utf8')).toBe('');
    expect(sent()).toEqual([]);
  });
});

const exec = promisify(execFile);

/** `crm` with its standard output and error sent where `redirect` says, as a shell would. */
async function crmInShell(args: readonly string[], redirect: string): Promise<{ code: number; stderr: string }> {
  const command = `${[process.execPath, CRM_BIN, ...args].map(shellWord).join(' ')} ${redirect}`;
  try {
    const { stderr } = await exec('sh', ['-c', command], { env: { ...f.env, PATH: process.env.PATH } });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

describe('crm sync refuses a run whose output is redirected into one of its inputs', () => {
  it('> the NDJSON source with --removed deactivate: the shell emptied it, and nothing is deactivated', async () => {
    const t = await syncedTenant();
    const args = ['sync', 'apply', '--journal', t.journal, '--accounts', t.accounts, '--removed', 'deactivate'];
    const run = await crmInShell(args, `> ${shellWord(t.accounts)}`);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toBe(
      `Standard output is redirected into the --accounts file ${t.accounts}, which the shell has already emptied or is writing into: nothing was sent; restore the file and redirect elsewhere`,
    );
    expect(inactive()).toBe(0);
    expect(f.server.fake.requests.length).toBe(t.requests);
  });

  it('2>> the journal, for every command: the journal is left as it was', async () => {
    const t = await syncedTenant();
    for (const args of [
      ['sync', 'apply', '--journal', t.journal, '--accounts', t.accounts],
      ['sync', 'plan', '--journal', t.journal, '--accounts', t.accounts],
      ['sync', 'status', '--journal', t.journal],
      ['sync', 'resolve', '--journal', t.journal, '--type', 'accounts', '--key', 'C-1', '--absent'],
    ]) {
      const run = await crmInShell(args, `2>> ${shellWord(t.journal)}`);
      expect([args[1], run.code]).toEqual([args[1], 2]);
    }
    // The refusal itself went into the journal (the shell's doing), and nothing else: no run, no resolve.
    const grown = readFileSync(t.journal);
    expect(grown.subarray(0, t.before.length).equals(t.before)).toBe(true);
    expect(grown.subarray(t.before.length).toString()).toMatch(
      /^(\{"name":"UsageError","message":"Standard error is redirected into the journal .*\n){4}$/,
    );
    expect(f.server.fake.requests.length).toBe(t.requests);
  });
});

describe('crm sync apply --report', () => {
  it('writes to a device as before: --report /dev/stdout into a pipe prints it', async () => {
    const accounts = f.file('accounts.csv', 'key,name\nC-1,Acme\n');
    const args = [
      'sync',
      'apply',
      '--journal',
      join(f.dir, 'acme.db'),
      '--accounts',
      accounts,
      '--report',
      '/dev/stdout',
    ];
    const command = `${[process.execPath, CRM_BIN, ...args].map(shellWord).join(' ')} | cat`;
    const { stdout } = await exec('sh', ['-c', command], { env: { ...f.env, PATH: process.env.PATH } });
    const [report, line] = stdout.split(/\n(?=\{"runId")/);
    expect(JSON.parse(report ?? '')).toMatchObject({ created: 1 });
    expect(JSON.parse(line ?? '')).toMatchObject({ created: 1 });
  });

  it('leaves the old report whole when the run stops before its end, and leaves no temporary file', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', 'key,name\nC-1,Acme\n');
    const report = f.file('report.json', '{"old":true}\n');
    const run = await runCrm(['sync', 'apply', '--journal', journal, '--accounts', accounts, '--report', report], {
      ...f.env,
      CRM_API_KEY: 'wrong-key',
    });
    expect(run.code).toBe(3);
    expect(readFileSync(report, 'utf8')).toBe('{"old":true}\n');
    expect(readdirSync(f.dir).sort()).toEqual(['accounts.csv', 'acme.db', 'report.json']);
  });

  it('replaces the report whole with mode 0600, through a link that it keeps', async () => {
    const t = await syncedTenant();
    const report = f.file('report.json', 'old');
    chmodSync(report, 0o644);
    symlinkSync(report, join(f.dir, 'latest.json'));
    const run = await applyTo(t, ['--report', join(f.dir, 'latest.json')]);
    expect(run.code).toBe(0);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toMatchObject({ created: 0, unchanged: 30 });
    expect(statSync(report).mode & 0o777).toBe(0o600);
    expect(readdirSync(f.dir).sort()).toEqual(['accounts.ndjson', 'acme.db', 'latest.json', 'report.json']);
    expect(lstatSync(join(f.dir, 'latest.json')).isSymbolicLink()).toBe(true);
  });
});
