import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import {
  ADMIN_TOKEN,
  API_KEY,
  CONTACTS_PATH,
  closedPort,
  OPP_PATH,
  OPPORTUNITY,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { type CrmRun, envFor, runCrm, runInProcess } from '../support/run-crm';

async function fakeCrm(options: Parameters<typeof startedServer>[0] = {}) {
  const srv = await startedServer({
    seed: generateFakeData({ accounts: 2, contacts: 2, opportunities: 2 }),
    ...options,
  });
  return { fake: srv.fake, env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }) };
}

/** The JSON object a failure prints on stderr when stderr is not a terminal. */
const failure = (run: CrmRun): Record<string, unknown> => JSON.parse(run.stderr) as Record<string, unknown>;

const faultEnv = (url: string) => ({
  CRM_BASE_URL: url,
  CRM_TENANT_ID: TENANT,
  CRM_API_KEY: API_KEY,
  CRM_ADMIN_TOKEN: ADMIN_TOKEN,
});

describe('crm exit codes', () => {
  const faults = useFaultServer();

  it('exits 2 with the SDK validation message on bad input, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list', '--limit', '0'], env);
    expect(run.code).toBe(2);
    expect(failure(run)).toEqual({
      name: 'CrmValidationError',
      message: 'Invalid input: limit: Too small: expected number to be >=1',
      issues: [{ field: 'limit', path: ['limit'], message: 'Too small: expected number to be >=1' }],
    });
    expect(run.stdout).toBe('');
    expect(fake.requests).toEqual([]);
  });

  it('exits 2 on a usage error (unknown option, extra argument, --json that is no object), and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    for (const args of [
      ['contacts', 'list', '--colour', 'red'],
      ['contacts', 'lists'],
      ['widgets', 'list'],
      ['opportunities', 'get', 'opp_1', 'opp_2'],
      ['contacts', 'create', '--json', '[1]'],
      ['contacts', 'create', '--json', '{nope'],
      ['contacts', 'create', '--json', '@/nonexistent/input.json'],
      ['contacts', 'list', '--max', '5'],
      ['api-key', 'status', '--json', '{"x":1}'],
    ]) {
      const run = await runCrm(args, env);
      expect({ args, code: run.code, name: failure(run).name }).toEqual({
        args,
        code: 2,
        name: expect.stringMatching(/Error$/),
      });
    }
    expect(fake.requests).toEqual([]);
  });

  it('exits 3 when the API key is refused', async () => {
    const { env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list'], { ...env, CRM_API_KEY: 'wrong-key-0123' });
    expect(run.code).toBe(3);
    expect(failure(run)).toEqual(expect.objectContaining({ name: 'CrmAuthenticationError', status: 401 }));
  });

  it('exits 3 on a 403', async () => {
    faults().script('GET', OPP_PATH, reply.jsonError(403, 'not for you'));
    const run = await runCrm(['opportunities', 'get', 'opp_1'], faultEnv(faults().url));
    expect(run.code).toBe(3);
    expect(failure(run).name).toBe('CrmPermissionDeniedError');
  });

  it('exits 4 when the record is not found, with the code and the request id', async () => {
    const { env } = await fakeCrm();
    const run = await runCrm(['opportunities', 'get', 'opp_missing'], env);
    expect(run.code).toBe(4);
    expect(failure(run)).toEqual({
      name: 'CrmNotFoundError',
      message: expect.stringContaining('404 from GET /integrations/v1/opportunities/opp_missing'),
      status: 404,
      code: 'NOT_FOUND',
      requestId: expect.stringMatching(/^req_/),
    });
  });

  it('exits 5 when rate limited past the retries', async () => {
    const { fake, env } = await fakeCrm({ rateLimit: { perSecond: 0.001, burst: 1 } });
    expect((await runCrm(['contacts', 'list'], env)).code).toBe(0);
    const run = await runCrm(['contacts', 'list', '--max-retries', '0'], env);
    expect(run.code).toBe(5);
    expect(failure(run)).toEqual(expect.objectContaining({ name: 'CrmRateLimitError', status: 429 }));
    expect(fake.requests).toHaveLength(2);
  });

  it('exits 6 when the connection fails or times out', async () => {
    const refused = await runCrm(
      ['contacts', 'list', '--max-retries', '0'],
      faultEnv(`http://127.0.0.1:${await closedPort()}`),
    );
    expect(refused.code).toBe(6);
    expect(failure(refused).name).toBe('CrmConnectionError');

    faults().script('GET', OPP_PATH, reply.hang());
    const slow = await runCrm(
      ['opportunities', 'get', 'opp_1', '--timeout', '200', '--max-retries', '0'],
      faultEnv(faults().url),
    );
    expect(slow.code).toBe(6);
    expect(failure(slow).name).toBe('CrmTimeoutError');
  });

  it('exits 7 on any other error the API answers with', async () => {
    const { env } = await fakeCrm();
    const run = await runCrm(['opportunities', 'create', '--name', 'R', '--account-id', 'acc_nowhere'], env);
    expect(run.code).toBe(7);
    expect(failure(run)).toEqual(
      expect.objectContaining({ name: 'CrmBadRequestError', status: 400, code: 'INVALID_REFERENCE' }),
    );
  });

  it('exits 8 when the response fails validation', async () => {
    faults().script('GET', OPP_PATH, reply.ok({ id: 42 }));
    const run = await runCrm(['opportunities', 'get', 'opp_1'], faultEnv(faults().url));
    expect(run.code).toBe(8);
    expect(failure(run).name).toBe('CrmResponseValidationError');
  });

  it('prints no stack trace for an expected error', async () => {
    const { env } = await fakeCrm();
    const run = await runCrm(['opportunities', 'get', 'opp_missing'], env);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('crm and credentials', () => {
  const faults = useFaultServer();

  it('refuses a key given as a flag, without repeating it, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    for (const args of [
      ['contacts', 'list', '--api-key', 'sk_live_flagsecret'],
      ['contacts', 'list', '--api-key=sk_live_flagsecret'],
      ['api-key', 'status', '--admin-token', 'sk_live_flagsecret'],
    ]) {
      const run = await runCrm(args, env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('CRM_API_KEY');
      expect(run.stdout + run.stderr).not.toContain('flagsecret');
    }
    expect(fake.requests).toEqual([]);
  });

  it('refuses a key given as a flag with the dashes a chat app or word processor makes of --, without repeating it', async () => {
    const { fake, env } = await fakeCrm();
    for (const args of [
      ['contacts', 'list', '\u2014api-key=sk_live_flagsecret'], // em dash
      ['contacts', 'list', '\u2013api-key', 'sk_live_flagsecret'], // en dash
      ['contacts', 'list', '\u2013\u2013api-key=sk_live_flagsecret'],
      ['contacts', 'list', '\u2010\u2011api-key=sk_live_flagsecret'], // hyphen, non-breaking hyphen
      ['api-key', 'status', '\u2212\u2212admin-token=sk_live_flagsecret'], // minus signs
      ['contacts', 'list', '\uff0d\uff0dapi-key=sk_live_flagsecret'], // full-width hyphen-minus
      ['contacts', 'list', '\u2015api\u2010key=sk_live_flagsecret'], // horizontal bar, a hyphen in the name
      ['contacts', 'list', '--API_KEY=sk_live_flagsecret'],
      ['contacts', 'list', '-api-key=sk_live_flagsecret'],
      ['contacts', 'list', '--apikey=sk_live_flagsecret'],
      ['contacts', 'get', 'c_1', '--', '\u2014api-key=sk_live_flagsecret'],
      ['\u2014api-key=sk_live_flagsecret', 'contacts', 'list'],
      ['contacts', 'list', '--api-key:sk_live_flagsecret'],
      ['contacts', 'list', '\u2014\u2014api-keys=sk_live_flagsecret'],
      ['contacts', 'list', '\u2e3aapi-key=sk_live_flagsecret'], // two-em dash
      ['contacts', 'list', '\ufe58admin-token=sk_live_flagsecret'], // small em dash
    ]) {
      const run = await runInProcess(args, env, { stdout: false, stderr: false });
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toContain('CRM_API_KEY');
      expect(run.stdout + run.stderr).not.toContain('flagsecret');
    }
    expect(fake.requests).toEqual([]);
  });

  it('reads an argument that is a flag once its Unicode dashes are made ASCII as that flag', async () => {
    const { fake, env } = await fakeCrm();
    const listed = await runInProcess(['contacts', 'list', '\u2014limit', '1', '\u2013h'], env, {
      stdout: false,
      stderr: false,
    });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('crm contacts list');
    const limited = await runInProcess(['contacts', 'list', '\u2014limit=1'], env, { stdout: false, stderr: false });
    expect(limited.code).toBe(0);
    expect(fake.requests.at(-1)?.query.limit).toBe('1');
    const misspelt = await runInProcess(['contacts', 'list', '\u2014stauts', 'active'], env, {
      stdout: false,
      stderr: false,
    });
    expect(JSON.parse(misspelt.stderr).message).toBe('Unknown option "--stauts"; did you mean "--status"?');
    // A negative number with a minus sign is a value, not a flag.
    const negative = await runInProcess(['opportunities', 'get', '\u22125'], env, { stdout: false, stderr: false });
    expect(negative.code).toBe(4);
  });

  it('never quotes the value of an argument whose name is a credential', async () => {
    const { fake, env } = await fakeCrm();
    const messages: string[] = [];
    for (const args of [
      ['opportunities', 'get', 'opp_1', 'token=sk_live_valuesecret'],
      ['opportunities', 'get', 'opp_1', '--', '\u2014client\u2010secret=sk_live_valuesecret'],
      ['contacts', 'password=sk_live_valuesecret'],
      ['openapi', 'session:sk_live_valuesecret'],
      ['mcp', 'API_KEY=sk_live_valuesecret'],
      ['contacts', 'list', '--token:sk_live_valuesecret'],
      ['contacts', 'list', '--bearer,sk_live_valuesecret'],
    ]) {
      const run = await runInProcess(args, env, { stdout: false, stderr: false });
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stdout + run.stderr).not.toContain('valuesecret');
      messages.push(JSON.parse(run.stderr).message);
    }
    expect(messages).toEqual([
      'Unexpected argument "token=[redacted]"',
      'Unexpected argument "\u2014client\u2010secret=[redacted]"',
      'Unknown command "contacts password=[redacted]"',
      'Unexpected argument "session:[redacted]"',
      'Unexpected argument "API_KEY=[redacted]"',
      'Unknown option "--token"',
      'Unknown option "--bearer"',
    ]);
    expect(fake.requests).toEqual([]);
  });

  it('reads the API key and the admin token from files, and never prints them', async () => {
    const { fake, env } = await fakeCrm();
    const dir = await mkdtemp(join(tmpdir(), 'crm-secret-'));
    const keyFile = join(dir, 'key');
    const tokenFile = join(dir, 'token');
    await writeFile(keyFile, `${env.CRM_API_KEY}\n`);
    await writeFile(tokenFile, `${env.CRM_ADMIN_TOKEN}\n`);
    const { CRM_API_KEY, CRM_ADMIN_TOKEN, ...rest } = env;
    const listed = await runCrm(['contacts', 'list', '--api-key-file', keyFile], rest);
    expect(listed.code).toBe(0);
    expect(fake.requests.at(-1)?.headers['x-api-key']).toBe(CRM_API_KEY);
    const status = await runCrm(['api-key', 'status', '--admin-token-file', tokenFile], rest);
    expect(status.code).toBe(0);
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${CRM_ADMIN_TOKEN}`);
    for (const run of [listed, status]) {
      expect(run.stdout + run.stderr).not.toContain(String(CRM_API_KEY));
      expect(run.stdout + run.stderr).not.toContain(String(CRM_ADMIN_TOKEN));
    }
    const empty = join(dir, 'empty');
    await writeFile(empty, '\n');
    const refused = await runCrm(['contacts', 'list', '--api-key-file', empty], rest);
    expect(refused.code).toBe(2);
    expect(failure(refused).message).toBe(`--api-key-file: ${empty} is empty`);
  });

  it('reads a bounded prefix of a key file or a --json file, and never echoes a key given as a path', async () => {
    const { fake, env } = await fakeCrm();
    const { CRM_API_KEY: _, ...rest } = env;
    const zeroKey = await runCrm(['contacts', 'list', '--api-key-file', '/dev/zero'], rest);
    expect({ code: zeroKey.code, message: failure(zeroKey).message }).toEqual({
      code: 2,
      message: '--api-key-file: the file is larger than a key (65536 bytes)',
    });
    const zeroJson = await runCrm(['contacts', 'create', '--json', '@/dev/zero'], env);
    expect({ code: zeroJson.code, message: failure(zeroJson).message }).toEqual({
      code: 2,
      message: '--json: /dev/zero is larger than an input may be',
    });
    const keyAsPath = await runCrm(['contacts', 'list', '--api-key-file', 'sk_live_0123456789abcdef'], rest);
    expect(keyAsPath.code).toBe(2);
    expect(failure(keyAsPath).message).toBe('--api-key-file: cannot read the file (ENOENT)');
    expect(keyAsPath.stderr).not.toContain('sk_live_0123456789abcdef');
    expect(fake.requests).toEqual([]);
  });

  it('says which credential is missing before sending anything', async () => {
    const { fake, env } = await fakeCrm();
    const { CRM_API_KEY: _, CRM_ADMIN_TOKEN: __, ...rest } = env;
    const noKey = await runCrm(['contacts', 'list'], rest);
    expect(noKey.code).toBe(2);
    expect(failure(noKey).message).toContain('CRM_API_KEY');
    const noToken = await runCrm(['api-key', 'generate'], rest);
    expect(noToken.code).toBe(2);
    expect(failure(noToken).message).toContain('CRM_ADMIN_TOKEN');
    expect(fake.requests).toEqual([]);
  });

  it('masks a key that a hostile server echoes inside the records it returns', async () => {
    faults().script('GET', OPP_PATH, reply.ok({ ...OPPORTUNITY, description: `made with ${API_KEY}` }));
    const contact = { id: 'con_1', position: `token ${ADMIN_TOKEN}`, [API_KEY]: 'as a field name' };
    faults().script(
      'GET',
      CONTACTS_PATH,
      reply.ok([contact], { extra: { pagination: { page: 1, limit: 1, total: 1, pages: 1 } } }),
    );
    const one = await runCrm(['opportunities', 'get', 'opp_1'], faultEnv(faults().url));
    const all = await runCrm(['contacts', 'list', '--all'], faultEnv(faults().url));
    expect([one.code, all.code]).toEqual([0, 0]);
    expect(JSON.parse(one.stdout).description).toBe('made with [redacted]');
    expect(JSON.parse(all.stdout)).toEqual({
      id: 'con_1',
      position: 'token [redacted]',
      '[redacted]': 'as a field name',
    });
    for (const run of [one, all]) {
      expect(run.stdout + run.stderr).not.toContain(API_KEY);
      expect(run.stdout + run.stderr).not.toContain(ADMIN_TOKEN);
    }
  });

  it('masks a key that a hostile server echoes in its error, on every output', async () => {
    faults().script('GET', OPP_PATH, reply.jsonError(500, `upstream refused key ${API_KEY} for ${TENANT}`));
    faults().script('POST', '/integrations/api-key/generate', reply.jsonError(400, `bad token ${ADMIN_TOKEN}`));
    const runs = [
      await runCrm(['opportunities', 'get', 'opp_1', '--max-retries', '0'], faultEnv(faults().url)),
      await runCrm(['api-key', 'generate'], faultEnv(faults().url)),
    ];
    expect(runs.map((run) => run.code)).toEqual([7, 7]);
    for (const run of runs) {
      expect(run.stdout + run.stderr).not.toContain(API_KEY);
      expect(run.stdout + run.stderr).not.toContain(ADMIN_TOKEN);
    }
  });

  it('lets no control character of a hostile server reach the terminal', async () => {
    faults().script('GET', OPP_PATH, reply.jsonError(404, 'gone \u001b]0;pwned\u0007 \u009b31m red'));
    faults().script('GET', OPP_PATH, reply.ok({ ...OPPORTUNITY, name: 'Renewal \u001b[2J\u009b2J' }));
    const env = faultEnv(faults().url);
    const tty = { stdout: true, stderr: true };
    const failed = await runInProcess(['opportunities', 'get', 'opp_1', '--max-retries', '0'], env, tty);
    expect(failed.code).toBe(4);
    expect(failed.stderr).toBe(
      'crm: 404 from GET /integrations/v1/opportunities/opp_1: gone \\u001b]0;pwned\\u0007 \\u009b31m red\n',
    );
    const shown = await runInProcess(['opportunities', 'get', 'opp_1'], env, tty);
    expect(shown.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
    expect(shown.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(shown.stdout).name).toBe('Renewal \u001b[2J\u009b2J');
  });

  it('escapes the line separators and bidi controls of a hostile server in its JSON, its NDJSON and its one-line errors', async () => {
    // U+2028/U+2029 split an NDJSON line for Python's splitlines(); U+202E turns the text around on a terminal.
    const hostile = 'a\u2028b\u2029c \u202eevil\u202c \u2066x\u2069 \u200e\u200f\u061c';
    const contact = { id: 'c_1', email: 'a@x.io', name: hostile, accountId: 'acc_1', status: 'active' };
    faults().script('GET', OPP_PATH, reply.ok({ ...OPPORTUNITY, name: hostile }));
    faults().script(
      'GET',
      CONTACTS_PATH,
      reply.ok([contact], { extra: { pagination: { page: 1, pages: 1, limit: 20, total: 1 } } }),
    );
    faults().script('GET', OPP_PATH, reply.jsonError(404, hostile), reply.jsonError(404, hostile));
    const env = faultEnv(faults().url);
    const raw = /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

    const one = await runInProcess(['opportunities', 'get', 'opp_1'], env, { stdout: false, stderr: false });
    const all = await runInProcess(['contacts', 'list', '--all'], env, { stdout: false, stderr: false });
    const failedJson = await runInProcess(['opportunities', 'get', 'opp_1', '--max-retries', '0'], env, {
      stdout: false,
      stderr: false,
    });
    const failedLine = await runInProcess(['opportunities', 'get', 'opp_1', '--max-retries', '0'], env, {
      stdout: true,
      stderr: true,
    });

    expect([one.code, all.code, failedJson.code, failedLine.code]).toEqual([0, 0, 4, 4]);
    for (const run of [one, all, failedJson, failedLine]) expect(run.stdout + run.stderr).not.toMatch(raw);
    expect(one.stdout).toContain('a\\u2028b\\u2029c \\u202eevil\\u202c');
    expect(JSON.parse(one.stdout).name).toBe(hostile);
    expect(
      all.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).name),
    ).toEqual([hostile]);
    expect(String(failure(failedJson).message)).toContain('\u202eevil\u202c');
    expect(failedLine.stderr).toContain('a\\u2028b\\u2029c \\u202eevil\\u202c');
  });
});
