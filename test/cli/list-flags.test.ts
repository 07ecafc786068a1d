import { describe, expect, it } from 'vitest';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { API_KEY, closedPort, TENANT } from '../support/fault-server';
import { envFor, runCrm, runInProcess } from '../support/run-crm';

async function fakeCrm(contacts = 5) {
  const srv = await startedServer({ seed: generateFakeData({ accounts: 1, contacts }) });
  return { fake: srv.fake, env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }) };
}

const notATerminal = { stdout: false, stderr: false };

describe('crm <list> --all --max and --prefetch', () => {
  it('refuses a --max that is no whole number before sending anything', async () => {
    const { fake, env } = await fakeCrm();
    for (const max of ['abc', '-1', '1.5', '1e3', '']) {
      const run = await runInProcess(['contacts', 'list', '--all', `--max=${max}`], env, notATerminal);
      expect({ max, code: run.code, name: JSON.parse(run.stderr).name, stdout: run.stdout }).toEqual({
        max,
        code: 2,
        name: 'UsageError',
        stdout: '',
      });
    }
    expect(fake.requests).toEqual([]);
  });

  it('refuses an empty --prefetch, --timeout or --max-retries instead of reading it as the default', async () => {
    const { fake, env } = await fakeCrm();
    for (const flag of ['--prefetch=', '--timeout=', '--max-retries=']) {
      const run = await runInProcess(['contacts', 'list', '--all', flag], env, notATerminal);
      expect({ flag, code: run.code }).toEqual({ flag, code: 2 });
    }
    expect(fake.requests).toEqual([]);
  });

  it('still tells bad input with exit 2 under --max 0', async () => {
    const { env } = await fakeCrm();
    const run = await runInProcess(['contacts', 'list', '--all', '--max', '0', '--limit', '0'], env, notATerminal);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr).name).toBe('CrmValidationError');
  });

  it('tells a connection failure under --max 0 with its exit code and without a stack', async () => {
    const env = {
      CRM_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
      CRM_TENANT_ID: TENANT,
      CRM_API_KEY: API_KEY,
    };
    const run = await runCrm(['contacts', 'list', '--all', '--max', '0', '--max-retries', '0'], env);
    expect(run.code).toBe(6);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(JSON.parse(run.stderr).name).toBe('CrmConnectionError');
  });

  it('prints nothing under --max 0 and exits 0 when all is well', async () => {
    const { env } = await fakeCrm();
    const run = await runInProcess(['contacts', 'list', '--all', '--max', '0'], env, notATerminal);
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('names the variable, not a flag, when CRM_TIMEOUT or CRM_MAX_RETRIES is no whole number', async () => {
    const { env } = await fakeCrm();
    const timeout = await runInProcess(['contacts', 'list'], { ...env, CRM_TIMEOUT: 'soon' }, notATerminal);
    expect(timeout.code).toBe(2);
    expect(JSON.parse(timeout.stderr).message).toBe('CRM_TIMEOUT must be a whole number, not "soon"');
    const retries = await runInProcess(['contacts', 'list'], { ...env, CRM_MAX_RETRIES: 'x' }, notATerminal);
    expect(JSON.parse(retries.stderr).message).toBe('CRM_MAX_RETRIES must be a whole number, not "x"');
  });
});
