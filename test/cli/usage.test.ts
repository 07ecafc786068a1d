import { describe, expect, it } from 'vitest';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { envFor, runCrm } from '../support/run-crm';

/* What the attack on `crm` left open, settled: help wins over a wrong line, a flag twice is refused. */

async function fakeCrm() {
  const srv = await startedServer({ seed: generateFakeData({ accounts: 1, contacts: 3 }) });
  return { fake: srv.fake, env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }) };
}

describe('crm usage', () => {
  it('prints the help when --help is given beside an unknown option, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list', '--colour', 'red', '--help'], env);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Usage: crm contacts list \[options\]/);
    expect(fake.requests).toEqual([]);
  });

  it('refuses an option given twice with two values, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    for (const args of [
      ['contacts', 'list', '--limit', '1', '--limit', '2'],
      ['contacts', 'list', '--tenant', 'a', '--tenant', 'b'],
      ['contacts', 'update', 'con_1', '--is-primary', '--no-is-primary'],
    ]) {
      const run = await runCrm(args, env);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(JSON.parse(run.stderr).message).toMatch(/^Option '--[a-z-]+' is given twice, with two values$/);
    }
    expect(fake.requests).toEqual([]);
  });

  it('names an unknown option and suggests the nearest, as git does, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    const cases: [string[], string][] = [
      [['contacts', 'list', '--stauts', 'active'], 'Unknown option "--stauts"; did you mean "--status"?'],
      [['contacts', 'list', '--limt=3'], 'Unknown option "--limt"; did you mean "--limit"?'],
      [
        ['contacts', 'update', 'con_1', '--no-is-primry'],
        'Unknown option "--no-is-primry"; did you mean "--no-is-primary"?',
      ],
      [['contacts', 'list', '--colour', 'red'], 'Unknown option "--colour"'],
    ];
    for (const [args, message] of cases) {
      const run = await runCrm(args, env);
      expect({ args, code: run.code, message: JSON.parse(run.stderr).message }).toEqual({ args, code: 2, message });
    }
    expect(fake.requests).toEqual([]);
  });

  it('suggests the nearest command for an unknown one, and sends nothing', async () => {
    const { fake, env } = await fakeCrm();
    const cases: [string[], string][] = [
      [['contacts', 'lst'], 'Unknown command "contacts lst"; did you mean "contacts list"?'],
      [['opportunites', 'get', 'opp_1'], 'Unknown command "opportunites"; did you mean "opportunities"?'],
      [['xyzzy'], 'Unknown command "xyzzy"'],
    ];
    for (const [args, message] of cases) {
      const run = await runCrm(args, env);
      expect({ args, code: run.code, message: JSON.parse(run.stderr).message }).toEqual({ args, code: 2, message });
    }
    expect(fake.requests).toEqual([]);
  });

  it('repeats only the name of an unknown option, never the value given with it', async () => {
    const { env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list', '--pasword=hunter2-secret'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain('hunter2-secret');
  });

  it('accepts an option given twice with the same value', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list', '--limit', '2', '--limit', '2'], env);
    expect(run.code).toBe(0);
    expect(fake.requests.at(-1)?.query.limit).toBe('2');
  });

  it('refuses a whole number that JSON would not carry exactly, rather than send another', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runCrm(['accounts', 'create', '--name', 'A', '--annual-revenue', '12345678901234567890'], env);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).message).toBe(
      '--annual-revenue: 12345678901234567890 is past the whole numbers JSON carries exactly',
    );
    expect(fake.requests).toEqual([]);
  });
});
