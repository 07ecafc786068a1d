import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { journalTarget, postgresWithoutValue, redactError } from '../../../src/cli/sync/journal';
import { UsageError } from '../../../src/cli/usage-error';
import { CrmClient } from '../../../src/index';
import { CrmSync } from '../../../src/sync/crm-sync';
import { sqliteJournal } from '../../../src/sync/sqlite-journal';
import { startedServer } from '../../support/fake-harness';
import { runCrm } from '../../support/run-crm';
import { syncCliFixture } from '../../support/sync-cli';

const fixture = syncCliFixture('crm-sync-journal-');
const HELP = 'crm sync status --help';

describe('the journal a crm sync command names', () => {
  test('is exactly one of --journal and --postgres, or a usage error (exit 2) before anything is opened', async () => {
    const { dir, env } = fixture;
    const cases: [string[], Record<string, string>, string][] = [
      [['status'], {}, 'A journal is required: --journal <file>, or --postgres <connection string>'],
      [
        ['status', '--journal', join(dir, 'a.db'), '--postgres', 'postgres://h/db'],
        {},
        'Give one journal: --journal <file> or --postgres <connection string>, not both',
      ],
      [['status', '--postgres'], {}, '--postgres without a connection string reads DATABASE_URL, which is not set'],
      [
        ['status', '--journal', join(dir, 'a.db'), '--schema', 'x'],
        {},
        '--schema names a schema of the Postgres journal: give --postgres',
      ],
      [
        ['resolve', '--postgres', 'postgres://h/db', '--schema', 'Bad-Name', '--type', 'accounts', '--key', 'K'],
        {},
        '--schema must be a lower-case SQL identifier (letters, digits and _, at most 63 characters)',
      ],
      [
        ['status', '--journal', 'postgres://erp:pw-in-the-wrong-flag@db/erp'],
        {},
        '--journal takes a SQLite file: give a Postgres connection string to --postgres',
      ],
      [
        ['apply', '--postgres', '--journal', join(dir, 'a.db'), '--accounts', join(dir, 'x.csv')],
        { DATABASE_URL: 'postgres://h/db' },
        'Give one journal: --journal <file> or --postgres <connection string>, not both',
      ],
    ];
    for (const [args, extra, message] of cases) {
      const run = await runCrm(['sync', ...args], { ...env, ...extra });
      expect([run.code, JSON.parse(run.stderr).message]).toEqual([2, message]);
    }
    expect(fixture.server.fake.requests).toEqual([]);
  });

  test('--postgres with no value, last or before another option, reads DATABASE_URL', () => {
    expect(postgresWithoutValue(['--postgres'])).toEqual(['--postgres=']);
    expect(postgresWithoutValue(['--postgres', '--schema', 's'])).toEqual(['--postgres=', '--schema', 's']);
    expect(postgresWithoutValue(['--postgres', 'postgres://h/db'])).toEqual(['--postgres', 'postgres://h/db']);
    const target = journalTarget({ postgres: '' }, { DATABASE_URL: 'postgres://u:pw@db.example:5433/erp' }, HELP);
    expect(target).toMatchObject({ kind: 'postgres', schema: 'crm_sync', shown: 'db.example:5433/erp' });
  });

  test("masks the connection string's password in an error and its cause, in a URL (written or decoded) or in key=value form", () => {
    const url = journalTarget({ postgres: 'postgres://erp:s%40cret-1@db.example/erp' }, {}, HELP);
    const quoted = new Error('could not connect: postgres://erp:s%40cret-1@db.example/erp', {
      cause: new Error('password "s@cret-1" refused'),
    });
    redactError(quoted, url);
    expect(quoted.message).not.toMatch(/cret-1/);
    expect((quoted.cause as Error).message).toBe('password "[redacted]" refused');
    expect(String(quoted.stack)).not.toMatch(/cret-1/);

    const query = journalTarget(
      { postgres: 'postgres://erp@db.example/erp?sslmode=require&password=q%3Dk3y' },
      {},
      HELP,
    );
    expect((redactError(new Error('refused q=k3y and q%3Dk3y'), query) as Error).message).toBe(
      'refused [redacted] and [redacted]',
    );

    const keyValue = journalTarget({ postgres: "host=db.example dbname=erp password='it\\'s k3y'" }, {}, HELP);
    expect(keyValue).toMatchObject({ shown: 'db.example/erp' });
    const usage = new UsageError("bad: password='it\\'s k3y' (it's k3y)", HELP);
    expect((redactError(usage, keyValue) as Error).message).not.toMatch(/k3y/);
    expect(usage).toBeInstanceOf(UsageError);
  });
});

describe('crm sync status during a live run', () => {
  test('shows the run as live and its record waiting for an answer as in flight, not in doubt; then the run as ended', async () => {
    const { dir, env } = fixture;
    const path = join(dir, 'live.sync.db');
    // A server of its own, which MSW lets this process reach.
    const server = await startedServer();
    const { fake } = server;
    const handle = fake.handle.bind(fake);
    let release: () => void = () => {};
    const held = new Promise<void>((reached) => {
      fake.handle = (request: Request) => {
        if (request.method !== 'POST') return handle(request);
        fake.handle = handle;
        reached();
        return new Promise<void>((go) => {
          release = go;
        }).then(() => handle(request));
      };
    });
    const crm = new CrmClient({ ...fake.credentials, baseUrl: server.url, maxRetries: 0 });
    const journal = sqliteJournal(path);
    const running = new CrmSync(crm, { journal, settleMs: 0 }).run({
      accounts: [{ key: 'A1', data: { name: 'Acme' } }],
    });
    await held;

    const during = await runCrm(['sync', 'status', '--journal', path], env);
    expect(during.code).toBe(0);
    const status = JSON.parse(during.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      runs: [{ state: 'live', finishedAt: null }],
      inFlight: [{ type: 'accounts', key: 'A1', state: 'sending' }],
      inDoubt: [],
    });
    expect(status.lock).not.toBeNull();

    release();
    const report = await running;
    await journal.close();
    const after = await runCrm(['sync', 'status', '--journal', path], env);
    expect(JSON.parse(after.stdout)).toMatchObject({
      lock: null,
      runs: [{ runId: report.runId, state: 'finished', created: 1 }],
      inFlight: [],
      inDoubt: [],
    });
  });
});
