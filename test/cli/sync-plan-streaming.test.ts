import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main';
import { CrmSync } from '../../src/sync/crm-sync';
import { scriptCommand, shellWord } from '../support/pty';
import { CRM_BIN, runCrm, runInProcess, testIo } from '../support/run-crm';

// crm sync plan writes each entry as the engine decides it, and holds no record past its batch:
// a plan of 40,000 rows (21 MB) completes in a 40 MiB heap, in both renderings. The plan that
// kept its entries and, through its list reader, every record it had read needed over 40 MiB
// (bench/plan-memory.mjs has the figures at 200,000 and 1,000,000 rows).

const ROWS = 40_000;
const HEAP = '--max-old-space-size=40';
const exec = promisify(execFile);

let dir: string;
let accounts: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-plan-memory-'));
  accounts = join(dir, 'accounts.csv');
  let text = 'key,name,description\n';
  for (let i = 0; i < ROWS; i++) {
    text += `ERP-${i},Account ${i},${`${i}:${'lorem ipsum dolor sit amet '.repeat(20)}`.slice(0, 500)}\n`;
  }
  writeFileSync(accounts, text);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const planArgs = (journal: string) => ['sync', 'plan', '--journal', join(dir, journal), '--accounts', accounts];

describe('crm sync plan of a large file', () => {
  it('writes its first entries before sync.plan() has resolved, and the counts after', async () => {
    const plan = CrmSync.prototype.plan;
    let planned = false;
    vi.spyOn(CrmSync.prototype, 'plan').mockImplementation(async function (this: CrmSync, ...args) {
      const result = await plan.apply(this, args);
      planned = true;
      return result;
    });
    const writes: { readonly text: string; readonly planned: boolean }[] = [];
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push({ text: chunk.toString(), planned });
        done();
      },
    });
    const stderr = new Writable({ write: (_chunk, _encoding, done) => done() });
    const code = await main(
      planArgs('in-process.db'),
      testIo({ stdout, stderr, env: { CRM_TENANT_ID: 'tenant_memory' } }),
    );

    expect(code).toBe(0);
    expect(writes[0]?.planned).toBe(false);
    expect(writes.at(-1)?.planned).toBe(true);
    const lines = writes
      .map((w) => w.text)
      .join('')
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(ROWS + 1);
    expect(JSON.parse(lines[ROWS] as string)).toMatchObject({ counts: { create: ROWS } });
  });

  it('writes every entry, then the counts, as NDJSON within a 40 MiB heap', async () => {
    const run = await runCrm(planArgs('piped.db'), { CRM_TENANT_ID: 'tenant_memory', NODE_OPTIONS: HEAP });
    expect([run.code, run.stderr.slice(0, 300)]).toEqual([0, '']);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(ROWS + 1);
    expect(JSON.parse(lines[0] as string)).toEqual({ type: 'accounts', key: 'ERP-0', action: 'create' });
    expect(JSON.parse(lines[ROWS - 1] as string)).toEqual({
      type: 'accounts',
      key: `ERP-${ROWS - 1}`,
      action: 'create',
    });
    expect(JSON.parse(lines[ROWS] as string)).toEqual({
      counts: { create: ROWS, update: 0, unchanged: 0, skip: 0, deactivate: 0, blocked: 0, invalid: 0 },
      refusedRemovals: [],
    });
  });

  it("writes every create with its record's name, then the summary, on a terminal within a 40 MiB heap", async () => {
    const command = [process.execPath, HEAP, CRM_BIN, ...planArgs('terminal.db')].map(shellWord).join(' ');
    const { stdout } = await exec(scriptCommand(), ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH, CRM_TENANT_ID: 'tenant_memory' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const lines = stdout.trimEnd().split(/\r?\n/);
    expect(lines).toHaveLength(ROWS + 1);
    expect(lines[0]).toBe('+ accounts ERP-0 "Account 0"');
    // Past the first batches too: each name is kept until its entry is written, not dropped.
    expect(lines[ROWS - 1]).toBe(`+ accounts ERP-${ROWS - 1} "Account ${ROWS - 1}"`);
    expect(lines[ROWS]).toBe(
      `Plan: ${ROWS} to create, 0 to update, 0 to deactivate, 0 unchanged, 0 skipped, 0 blocked, 0 invalid.`,
    );
  });
});

describe('crm sync plan on a terminal, each name beside its own record', () => {
  it('names a create by its own record when its key repeats in another list, or later in its own', async () => {
    const accountsFile = join(dir, 'names-accounts.csv');
    const contactsFile = join(dir, 'names-contacts.csv');
    writeFileSync(accountsFile, 'key,name\nK1,Acme Ltd\nK2,First Name\nK2,Second Name\nK3,Gamma GmbH\n');
    writeFileSync(
      contactsFile,
      'key,accountKey,email\nK1,K1,ann@acme.example\nK3,K3,not-an-email\nK4,K3,bob@gamma.example\n',
    );
    const run = await runInProcess(
      ['sync', 'plan', '--journal', join(dir, 'names.db'), '--accounts', accountsFile, '--contacts', contactsFile],
      { CRM_TENANT_ID: 'tenant_memory' },
      { stdout: true, stderr: false },
    );

    // A repeated key and a bad email are invalid: the plan exits 13 (issue 47).
    expect([run.code, run.stderr]).toEqual([13, '']);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('+'))).toEqual([
      '+ accounts K1 "Acme Ltd"',
      '+ accounts K2 "First Name"',
      '+ accounts K3 "Gamma GmbH"',
      '+ contacts K1 "ann@acme.example"',
      '+ contacts K4 "bob@gamma.example"',
    ]);
    expect(lines.filter((line) => line.startsWith('x')).map((line) => line.split(':')[0])).toEqual([
      'x accounts K2 invalid',
      'x contacts K3 invalid',
    ]);
  });
});
