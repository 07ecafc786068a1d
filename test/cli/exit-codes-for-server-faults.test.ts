import { describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  API_KEY,
  CONTACTS_PATH,
  OPP_PATH,
  OPPORTUNITY,
  okBody,
  reply,
  TENANT,
  useFaultServer,
} from '../support/fault-server';
import { type CrmRun, runCrm } from '../support/run-crm';

const envOf = (url: string) => ({
  CRM_BASE_URL: url,
  CRM_TENANT_ID: TENANT,
  CRM_API_KEY: API_KEY,
  CRM_ADMIN_TOKEN: ADMIN_TOKEN,
});

const told = (run: CrmRun): Record<string, unknown> => JSON.parse(run.stderr) as Record<string, unknown>;

const get = ['opportunities', 'get', 'opp_1', '--max-retries', '0'];

describe('crm exit codes for each failure of a server', () => {
  const faults = useFaultServer();

  it('exits 5 on a 429 that outlasts the retries', async () => {
    faults().otherwise('GET', OPP_PATH, reply.jsonError(429, 'slow down', { 'retry-after': '0' }));
    const run = await runCrm(['opportunities', 'get', 'opp_1', '--max-retries', '1'], envOf(faults().url));
    expect({ code: run.code, name: told(run).name }).toEqual({ code: 5, name: 'CrmRateLimitError' });
  });

  it('exits 7 on a 503 and on a 500 HTML page of a proxy, with one line of JSON and no HTML markup dump', async () => {
    faults().script('GET', OPP_PATH, reply.jsonError(503, 'down'), reply.htmlError(502, 'Bad Gateway'));
    const down = await runCrm(get, envOf(faults().url));
    expect(down.code).toBe(7);
    const html = await runCrm(get, envOf(faults().url));
    expect(html.code).toBe(7);
    expect(html.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('exits 8 on a 200 whose body is not JSON', async () => {
    faults().script(
      'GET',
      OPP_PATH,
      reply.with(200, '{"success":true,"data":', { headers: { 'content-type': 'application/json' } }),
    );
    const run = await runCrm(get, envOf(faults().url));
    expect({ code: run.code, name: told(run).name }).toEqual({ code: 8, name: 'CrmResponseValidationError' });
  });

  it('exits 6 on a body cut short by the connection', async () => {
    faults().script('GET', OPP_PATH, reply.cut(okBody(OPPORTUNITY)));
    const run = await runCrm(get, envOf(faults().url));
    expect(run.code).toBe(6);
  });

  it('exits with a code of its ladder on a redirect loop, without a stack', async () => {
    faults().otherwise('GET', OPP_PATH, reply.with(302, '', { headers: { location: OPP_PATH } }));
    const run = await runCrm(get, envOf(faults().url));
    expect([6, 7, 8]).toContain(run.code);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('never prints a key that a server echoes in a redirect', async () => {
    faults().script(
      'GET',
      OPP_PATH,
      reply.with(302, '', { headers: { location: `http://evil.example/?k=${API_KEY}` } }),
    );
    const run = await runCrm(get, envOf(faults().url));
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
  });

  it('never prints a key that a server echoes inside a record', async () => {
    faults().script('GET', OPP_PATH, reply.ok({ ...OPPORTUNITY, description: `key ${API_KEY}` }));
    const run = await runCrm(get, envOf(faults().url));
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(API_KEY);
  });

  it('exits 8 when an --all list page fails validation mid-export, after the records before it', async () => {
    const page = (n: number, data: unknown[]) =>
      reply.ok(data, { extra: { pagination: { page: n, limit: 2, total: 6, pages: 3 } } });
    faults().script('GET', CONTACTS_PATH, page(1, [{ id: 'c1' }, { id: 'c2' }]), page(2, [{ id: 42 }, { id: 'c4' }]));
    const run = await runCrm(['contacts', 'list', '--all', '--max-retries', '0'], envOf(faults().url));
    expect(
      run.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    ).toEqual(['c1', 'c2']);
    expect(run.code).toBe(8);
  });

  it('ends an --all export against a server whose pagination loops', async () => {
    faults().otherwise(
      'GET',
      CONTACTS_PATH,
      reply.ok([{ id: 'c1' }, { id: 'c2' }], { extra: { pagination: { page: 1, limit: 2, total: 1e9, pages: 1e9 } } }),
    );
    const run = await runCrm(['contacts', 'list', '--all', '--max-retries', '0'], envOf(faults().url));
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
