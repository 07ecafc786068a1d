import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeText } from '../../../src/cli/sync/text-file';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const f = syncCliFixture('crm-sync-failed-');

const ACCOUNTS = 'key,name,industry\nA1,Acme,Retail\nA2,,Retail\nA1,Acme again,Retail\n,No key,Retail\n';
const CONTACTS =
  'key,accountKey,firstName,lastName,email\nC1,A1,Ann,Lee,ann@x.io\nC2,A2,Bob,Ray,bob@x.io\nC3,A9,Cy,Doe,cy@x.io\n';

const apply = (args: readonly string[], env = f.env) => runCrm(['sync', 'apply', ...args], env);
const message = (run: { stderr: string }) => JSON.parse(run.stderr.trim().split('\n').at(-1) as string).message;

describe('crm sync apply --failed', () => {
  it('writes each failed row as read with error and field, and the fixed files load the rest: every record synced', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', ACCOUNTS);
    const contacts = f.file('contacts.csv', CONTACTS);
    const failed = join(f.dir, 'failed');
    const first = await apply([
      '--journal',
      journal,
      '--accounts',
      accounts,
      '--contacts',
      contacts,
      '--failed',
      failed,
    ]);
    expect(first.code).toBe(9);
    expect(readdirSync(failed).sort()).toEqual(['accounts.csv', 'contacts.csv']);
    expect(readFileSync(join(failed, 'accounts.csv'), 'utf8')).toBe(
      [
        'key,name,industry,error,field',
        'A2,,Retail,Invalid record: data.name: Required,name',
        'A1,Acme again,Retail,"Invalid record: key: Repeated: another account of this run has key ""A1""",key',
        ',No key,Retail,"Invalid record: key: Required: a non-empty string, unique in its list",key',
        '',
      ].join('\n'),
    );
    // C2 was held back by its account, C3 names an account no one has: both come back.
    expect(readFileSync(join(failed, 'contacts.csv'), 'utf8')).toBe(
      [
        'key,accountKey,firstName,lastName,email,error,field',
        'C2,A2,Bob,Ray,bob@x.io,"its account ""A2"" failed: it goes once that is known",accountKey',
        'C3,A9,Cy,Doe,cy@x.io,"Invalid record: accountKey: No account has key ""A9"", in this run or the journal",accountKey',
        '',
      ].join('\n'),
    );
    // The repeat is told as a refused repeat, not as a key that failed while the CRM holds it.
    expect(first.stderr).toContain(
      'refused accounts A1: repeated in the source; its first row is the one this run took, this repeat was not sent',
    );
    expect(first.stderr).not.toContain('failed accounts A1');

    // The user fixes the rows on disk (deletes the repeat, fills the name, gives a key, the right
    // account) and loads the failed files as they are: their error and field columns are ignored.
    const fixedAccounts = readFileSync(join(failed, 'accounts.csv'), 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith('A1,'))
      .join('\n')
      .replace('A2,,Retail', 'A2,Beta,Retail')
      .replace(',No key,', 'A3,No key,');
    writeFileSync(join(failed, 'accounts.csv'), fixedAccounts);
    writeFileSync(
      join(failed, 'contacts.csv'),
      readFileSync(join(failed, 'contacts.csv'), 'utf8').replace('C3,A9', 'C3,A1'),
    );
    const again = await apply([
      '--journal',
      journal,
      '--accounts',
      join(failed, 'accounts.csv'),
      '--contacts',
      join(failed, 'contacts.csv'),
      '--failed',
      join(f.dir, 'failed-again'),
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 4, failed: [], skipped: [] });
    // Nothing failed: no failed file is left to load by mistake.
    expect(readdirSync(join(f.dir, 'failed-again'))).toEqual([]);
    expect(f.server.fake.store.accounts.size).toBe(3);
    expect(f.server.fake.store.contacts.size).toBe(3);

    // Every record is mapped: --ids and crm sync ids say so, as CSV and NDJSON.
    const ids = await runCrm(['sync', 'ids', '--journal', journal], f.env);
    expect(ids.code).toBe(0);
    const lines = ids.stdout.trim().split('\n');
    expect(lines[0]).toBe('type,key,crmId');
    expect(lines.slice(1).map((line) => line.split(',').slice(0, 2).join(','))).toEqual([
      'accounts,A1',
      'accounts,A2',
      'accounts,A3',
      'contacts,C1',
      'contacts,C2',
      'contacts,C3',
    ]);
    const json = await runCrm(['sync', 'ids', '--journal', journal, '--json'], f.env);
    const rows = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toHaveLength(6);
    expect(rows.map((r) => r.crmId).sort()).toEqual(
      [...f.server.fake.store.accounts.keys(), ...f.server.fake.store.contacts.keys()].sort(),
    );
  });

  it("with one source writes a file in the source's delimiter and encoding (Windows-1252), its fields by their source column", async () => {
    const { writeFailed, failedTarget } = await import('../../../src/cli/sync/failed-file');
    const { FailedRows } = await import('../../../src/cli/sync/failed-rows');
    const { CrmValidationError } = await import('../../../src/index');
    // The rows are read as text (the reader decodes the source's encoding); the writer encodes them back.
    const path = f.file('kunden.csv', 'key,name,industry\nK1,Müller € GmbH,Handel\nK2,"a,b",Handel\n');
    const text = { delimiter: ',', encoding: 'utf-8', bom: false, lineEnd: '\n' } as const;
    const sources = [{ type: 'accounts' as const, file: path, path, format: 'csv' as const, text, map: undefined }];
    const out = join(f.dir, 'kunden-failed.csv');
    const target = await failedTarget(out, sources, [], 'help');
    const error = new CrmValidationError(
      [{ field: 'data.name', path: ['data', 'name'], message: 'Too long' }],
      'Invalid record',
    );
    const rows = new FailedRows(
      {
        failed: [
          { type: 'accounts', key: 'K1', error },
          { type: 'accounts', key: 'K2', error },
        ],
        skipped: [],
      },
      (text) => text,
    );
    const written = await writeFailed(target, rows, {
      formatOf: () => ({ delimiter: ',', encoding: 'windows-1252', bom: false, lineEnd: '\r\n' }),
      columnOf: (_type, field) => (field === 'name' ? 'Firma, Name' : undefined),
    });
    expect(written.map((w) => w.rows)).toEqual([2]);
    const expected =
      'key,name,industry,error,field\r\nK1,Müller € GmbH,Handel,Invalid record: data.name: Too long,"Firma, Name"\r\nK2,"a,b",Handel,Invalid record: data.name: Too long,"Firma, Name"\r\n';
    expect(readFileSync(out).equals(encodeText(expected, 'windows-1252'))).toBe(true);
    // € is 0x80 in Windows-1252, ü 0xFC.
    expect([...readFileSync(out)].includes(0x80)).toBe(true);
  });

  it('writes a failed file that fails again with its error and field columns once, anew', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', 'key,name\nA1,Acme\nA2,\n');
    const first = join(f.dir, 'first.csv');
    expect((await apply(['--journal', journal, '--accounts', accounts, '--failed', first])).code).toBe(9);
    // Loaded again unfixed : it fails again.
    const second = join(f.dir, 'second.csv');
    expect((await apply(['--journal', journal, '--accounts', first, '--failed', second])).code).toBe(9);
    expect(readFileSync(second, 'utf8')).toBe(
      // In the source's own line end, as every row it copies.
      'key,name,error,field\nA2,,Invalid record: data.name: Required,name\n',
    );
  });

  it('crm sync --help and crm sync apply --help name --failed, --ids, --summary, --progress-every and crm sync ids', async () => {
    const help = await runCrm(['sync', '--help']);
    expect(help.stdout).toContain('ids ');
    expect(help.stdout).toContain('13  plan found invalid or blocked records');
    const apply = await runCrm(['sync', 'apply', '--help']);
    for (const flag of ['--failed <path>', '--ids <file.csv>', '--summary', '--progress-every <seconds>', '--json']) {
      expect(apply.stdout).toContain(flag);
    }
    const ids = await runCrm(['sync', 'ids', '--help']);
    expect(ids.stdout).toContain('Usage: crm sync ids (--journal <path> | --postgres [<url>] [--schema <name>])');
  });

  it('writes an NDJSON source back as NDJSON with error and field properties', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.ndjson', '{"key":"A1","data":{"name":"Acme"}}\n{"key":"A2","data":{}}\n');
    const out = join(f.dir, 'failed.ndjson');
    const run = await apply(['--journal', journal, '--accounts', accounts, '--failed', out]);
    expect(run.code).toBe(9);
    expect(readFileSync(out, 'utf8')).toBe(
      '{"key":"A2","data":{},"error":"Invalid record: data.name: Required","field":"name"}\n',
    );
    writeFileSync(out, readFileSync(out, 'utf8').replace('"data":{}', '"data":{"name":"Beta"}'));
    const again = await apply(['--journal', journal, '--accounts', out, '--failed', join(f.dir, 'again.ndjson')]);
    expect(again.code).toBe(0);
    expect(existsSync(join(f.dir, 'again.ndjson'))).toBe(false);
  });

  it('refuses, before anything is sent, a --failed or --ids that is a source or the journal, or in a missing directory', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', ACCOUNTS);
    const contacts = f.file('contacts.csv', CONTACTS);
    const cases: [string[], string][] = [
      [
        ['--accounts', accounts, '--failed', accounts],
        `--failed ${accounts} is the --accounts file ${accounts}: writing there would destroy it; name another file`,
      ],
      [
        ['--accounts', accounts, '--failed', journal],
        `--failed ${journal} is the journal ${journal}: writing there would destroy it; name another file`,
      ],
      [
        ['--accounts', accounts, '--contacts', contacts, '--failed', f.dir],
        `--failed ${accounts} is the --accounts file ${accounts}: writing there would destroy it; name another file`,
      ],
      [
        ['--accounts', accounts, '--failed', join(f.dir, 'missing', 'f.csv')],
        `--failed ${join(f.dir, 'missing', 'f.csv')}: the directory ${join(f.dir, 'missing')} does not exist; make it first`,
      ],
      [
        ['--accounts', accounts, '--failed', f.dir],
        `--failed ${f.dir} is a directory: with one source, --failed names a file`,
      ],
      [
        ['--accounts', accounts, '--contacts', contacts, '--failed', accounts],
        `--failed ${accounts} is a file: with several sources, --failed names a directory (a file each source)`,
      ],
      [
        ['--accounts', accounts, '--ids', journal],
        `--ids ${journal} is the journal ${journal}: writing there would destroy it; name another file`,
      ],
      [
        ['--accounts', accounts, '--ids', accounts],
        `--ids ${accounts} is the --accounts file ${accounts}: writing there would destroy it; name another file`,
      ],
      [
        ['--accounts', accounts, '--ids', join(f.dir, 'missing', 'ids.csv')],
        `--ids ${join(f.dir, 'missing', 'ids.csv')}: the directory ${join(f.dir, 'missing')} does not exist; make it first`,
      ],
      [
        ['--accounts', accounts, '--failed', join(f.dir, 'x.csv'), '--ids', join(f.dir, 'x.csv')],
        `--failed ${join(f.dir, 'x.csv')} is the --ids file ${join(f.dir, 'x.csv')}: writing there would destroy it; name another file`,
      ],
    ];
    for (const [args, said] of cases) {
      const run = await apply(['--journal', journal, ...args]);
      expect([run.code, run.code === 2 ? message(run) : args.join(' ')]).toEqual([2, said]);
    }
    expect(f.server.fake.requests).toEqual([]);
    expect(readFileSync(accounts, 'utf8')).toBe(ACCOUNTS);
    expect(existsSync(journal)).toBe(false);
  });

  it('never writes the API key into the failed file, the ids file or the progress lines', async () => {
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.csv', ACCOUNTS);
    const failed = join(f.dir, 'failed.csv');
    const ids = join(f.dir, 'ids.csv');
    const run = await apply([
      '--journal',
      journal,
      '--accounts',
      accounts,
      '--failed',
      failed,
      '--ids',
      ids,
      '--progress-every',
      '0.01',
    ]);
    expect(run.code).toBe(9);
    const key = f.env.CRM_API_KEY as string;
    for (const text of [readFileSync(failed, 'utf8'), readFileSync(ids, 'utf8'), run.stderr, run.stdout]) {
      expect(text).not.toContain(key);
    }
    expect(readFileSync(ids, 'utf8')).toMatch(/^type,key,crmId\naccounts,A1,\S+\n$/);
  });

  it('crm sync ids refuses a journal that does not exist, and one of several tenants unnamed', async () => {
    const missing = await runCrm(['sync', 'ids', '--journal', join(f.dir, 'none.db')], {});
    expect([missing.code, message(missing)]).toEqual([
      2,
      `No journal at ${join(f.dir, 'none.db')}: crm sync apply makes one`,
    ]);
    const journal = join(f.dir, 'acme.db');
    const accounts = f.file('accounts.ndjson', '{"key":"A1","data":{"name":"Acme"}}\n');
    expect((await apply(['--journal', journal, '--accounts', accounts])).code).toBe(0);
    expect(
      (await apply(['--journal', journal, '--accounts', accounts], { ...f.env, CRM_TENANT_ID: 'other' })).code,
    ).not.toBe(2);
    const both = await runCrm(['sync', 'ids', '--journal', journal], {});
    expect(both.code).toBe(2);
    expect(message(both)).toMatch(/^The journal holds 2 tenants \(.*\): name one with --tenant <id> or CRM_TENANT_ID$/);
    const one = await runCrm(['sync', 'ids', '--journal', journal, '--tenant', f.env.CRM_TENANT_ID as string], {});
    expect(one.stdout).toMatch(/^type,key,crmId\naccounts,A1,\S+\n$/);
  });
});
