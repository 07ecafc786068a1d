import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { envFor, runInProcess, terminal, testIo } from '../support/run-crm';

async function fakeCrm() {
  const srv = await startedServer({ seed: generateFakeData({ accounts: 1, contacts: 2, opportunities: 1 }) });
  const [opportunity] = srv.fake.store.opportunities.values();
  const [contact] = srv.fake.store.contacts.values();
  return {
    fake: srv.fake,
    env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }),
    opportunityId: String(opportunity?.id),
    contactId: String(contact?.id),
  };
}

const notATerminal = { stdout: false, stderr: false };

/** `main` with files of our own, for --json @file and --api-key-file. */
async function withFiles(args: string[], env: Record<string, string>, files: Record<string, string>) {
  const stdout = terminal(false);
  const stderr = terminal(false);
  const code = await main(
    args,
    testIo({
      stdout: stdout.stream,
      stderr: stderr.stream,
      env,
      readFile: (path) =>
        path in files
          ? Promise.resolve(files[path] as string)
          : Promise.reject(
              Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' }),
            ),
      readStdin: () => Promise.resolve(files['-'] ?? ''),
    }),
  );
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('crm flag values', () => {
  it('takes a negative number as the value of a flag (--amount -5), as --amount=-5', async () => {
    const { fake, env, opportunityId } = await fakeCrm();
    const run = await runInProcess(['opportunities', 'update', opportunityId, '--amount', '-5'], env, notATerminal);
    expect(run.code).toBe(0);
    expect(fake.requests.at(-1)?.body).toEqual({ amount: -5 });
    const decimal = await runInProcess(
      ['opportunities', 'update', opportunityId, '--probability', '-.5'],
      env,
      notATerminal,
    );
    expect(decimal.code).toBe(0);
    expect(fake.requests.at(-1)?.body).toEqual({ probability: -0.5 });
  });

  it('takes --is-primary=false and --is-primary=true as --no-is-primary and --is-primary', async () => {
    const { fake, env, contactId } = await fakeCrm();
    for (const [flag, value] of [
      ['--is-primary=false', false],
      ['--is-primary=true', true],
    ] as const) {
      const run = await runInProcess(['contacts', 'update', contactId, flag], env, notATerminal);
      expect({ flag, code: run.code }).toEqual({ flag, code: 0 });
      expect(fake.requests.at(-1)?.body).toEqual({ isPrimary: value });
    }
  });

  it('refuses any other value of a boolean flag, naming the flag, and sends nothing', async () => {
    const { fake, env, contactId } = await fakeCrm();
    const run = await runInProcess(['contacts', 'update', contactId, '--is-primary=yes'], env, notATerminal);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toBe("Option '--is-primary' does not take an argument");
    expect(fake.requests).toEqual([]);
  });

  it('leaves a negative number after -- as a positional, and after a boolean flag as an argument', async () => {
    const { fake, env } = await fakeCrm();
    const positional = await runInProcess(['opportunities', 'get', '--', '-5'], env, notATerminal);
    expect(positional.code).toBe(4);
    expect(fake.requests.at(-1)?.path).toBe('/integrations/v1/opportunities/-5');
    const afterBoolean = await runInProcess(['contacts', 'list', '--all', '-5'], env, notATerminal);
    expect(afterBoolean.code).toBe(2);
  });

  it('refuses an empty --api-key-file instead of falling back to CRM_API_KEY', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runInProcess(['contacts', 'list', '--api-key-file='], env, notATerminal);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).name).toBe('UsageError');
    expect(fake.requests).toEqual([]);
  });
});

describe('crm --json', () => {
  it('says a --json file cannot be read, not that it is invalid JSON', async () => {
    const { env } = await fakeCrm();
    const run = await withFiles(['contacts', 'list', '--json', '@/nowhere/input.json'], env, {});
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toBe('--json: cannot read /nowhere/input.json (ENOENT)');
  });

  it('reads a --json file or standard input that starts with a byte order mark, as editors write it', async () => {
    const { fake, env } = await fakeCrm();
    const bom = '\uFEFF{"limit":1}\r\n';
    for (const args of [
      ['contacts', 'list', '--json', '@input.json'],
      ['contacts', 'list', '--json', '-'],
    ]) {
      const run = await withFiles(args, env, { 'input.json': bom, '-': bom });
      expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(fake.requests.at(-1)?.query.limit).toBe('1');
    }
  });

  it('says where --json that is not valid JSON breaks, by line and column, and never quotes it', async () => {
    const { fake, env } = await fakeCrm();
    const key = 'sk_live_9f8e7d6c5b4a3f2e1d0c';
    const cases = [
      // The key piped in as if it were the input: V8 quoted its first 10 characters.
      { args: ['contacts', 'create', '--json', '-'], text: key, where: 'standard input', at: 'line 1, column 1' },
      {
        args: ['contacts', 'create', '--json', '@input.json'],
        text: `{\n  "name": "Ada",\n  "token": ${key}\n}`,
        where: 'input.json',
        at: 'line 3, column 12',
      },
      {
        args: ['contacts', 'create', '--json', '-'],
        text: `{"email": "a@x.io", "note": "${key}"`,
        where: 'standard input',
        at: 'line 1, column 59',
      },
      {
        args: ['contacts', 'create', '--json', `{"key": "${key}",}`],
        where: 'the --json value',
        at: 'line 1, column 40',
      },
    ];
    for (const { args, text, where, at } of cases) {
      const run = await withFiles(args, env, { 'input.json': text ?? '', '-': text ?? '' });
      expect({ code: run.code, message: JSON.parse(run.stderr).message }).toEqual({
        code: 2,
        message: `--json: ${where} is not valid JSON (${at})`,
      });
      expect(run.stderr).not.toMatch(/sk_live|9f8e/);
    }
    expect(fake.requests).toEqual([]);
  });
});

describe('crm before the command', () => {
  it('names an option given before the command without its value, and says where options go', async () => {
    const { fake, env } = await fakeCrm();
    for (const args of [
      ['--token=sk_live_s3cret', 'contacts', 'list'],
      ['contacts', '--token=sk_live_s3cret', 'list'],
    ]) {
      const run = await runInProcess(args, env, notATerminal);
      expect(run.code).toBe(2);
      expect(run.stderr).not.toContain('s3cret');
      expect(JSON.parse(run.stderr).message).toBe(
        'Unknown command: "--token" is an option, and options go after the command (crm <namespace> <command> [options])',
      );
    }
    expect(fake.requests).toEqual([]);
  });
});
