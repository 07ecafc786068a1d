import { describe, expect, it } from 'vitest';
import { commands, type EndpointName, words } from '../../src/cli/commands';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { envFor, runCrm, runInProcess } from '../support/run-crm';

/** A fake over real sockets with a few generated records, and the environment crm-fake would print. */
async function fakeCrm() {
  const srv = await startedServer({
    seed: {
      ...generateFakeData({ accounts: 3, contacts: 3, opportunities: 3, activities: 6 }),
      grants: [{ id: 'grant_1', tenantId: 'tenant_demo', scope: 'read' }],
    },
  });
  return { fake: srv.fake, env: envFor({ ...srv.fake.credentials, baseUrl: srv.url }) };
}

const json = (text: string): unknown => JSON.parse(text);

describe('crm <namespace> <method>', () => {
  it('has a command for every row of the endpoint table, and each one reaches its endpoint', async () => {
    const { fake, env } = await fakeCrm();
    const [opportunity] = fake.store.opportunities.values();
    const [account] = fake.store.accounts.values();
    const [contact] = fake.store.contacts.values();
    if (!opportunity || !account || !contact) throw new Error('the seed has records');
    // What each command takes after its words, by the row it must reach: the words are the row's
    // sdkMethod (`contacts.list`: `crm contacts list`), which calls crm.contacts.list().
    const rest: Record<EndpointName, string[]> = {
      getOpportunity: [opportunity.id],
      createOpportunity: [
        '--name',
        'Renewal',
        '--account-id',
        account.id,
        '--amount',
        '12000',
        '--expected-close-date',
        '2027-01-31T00:00:00Z',
      ],
      updateOpportunity: [opportunity.id, '--probability', '0.5'],
      listActivities: ['--opportunity-id', opportunity.id],
      createActivity: [
        '--related-to-type',
        'opportunity',
        '--related-to-id',
        opportunity.id,
        '--type',
        'call',
        '--subject',
        'Intro',
      ],
      createAccount: ['--name', 'Acme', '--status', 'prospect', '--annual-revenue', '1e6'],
      updateAccount: [account.id, '--city', 'Lyon'],
      createContact: ['--account-id', account.id, '--first-name', 'Ada', '--email', 'ada@example.com', '--is-primary'],
      updateContact: [contact.id, '--position', 'CTO', '--no-is-primary'],
      listContacts: ['--status', 'active', '--limit', '2'],
      resolveGrant: ['grant_1'],
      apiKeyStatus: [],
      generateApiKey: [],
    };
    for (const command of commands) {
      const args = [...words(command).split(' '), ...rest[command.name]];
      const before = fake.requests.length;
      // In this process (the built bin is run by the tests below): the table's commands, each a
      // process of its own, took 5 to 15 s on a busy machine.
      const run = await runInProcess(args, env, { stdout: false, stderr: false });
      expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(fake.requests.slice(before).map((request) => request.endpoint)).toEqual([command.name]);
      expect(json(run.stdout)).toBeTypeOf('object');
    }
  });

  it('sends the flags as the typed fields of the body, with the tenant where the endpoint takes it', async () => {
    const { fake, env } = await fakeCrm();
    const [account] = fake.store.accounts.values();
    const run = await runCrm(
      [
        'opportunities',
        'create',
        '--name',
        'Renewal',
        '--account-id',
        String(account?.id),
        '--amount',
        '12000',
        '--probability',
        '0.25',
        '--type',
        'renewal',
        '--expected-close-date',
        '2027-01-31T00:00:00Z',
      ],
      env,
    );
    expect(run.code).toBe(0);
    const sent = fake.requests.at(-1);
    expect(sent?.method).toBe('POST');
    expect(sent?.body).toEqual({
      tenantId: 'tenant_demo',
      name: 'Renewal',
      accountId: account?.id,
      amount: 12000,
      probability: 0.25,
      type: 'renewal',
      expectedCloseDate: '2027-01-31T00:00:00Z',
    });
    const printed = json(run.stdout) as { id: string; name: string };
    expect(printed).toEqual(expect.objectContaining({ name: 'Renewal', amount: 12000 }));
    expect(fake.store.opportunities.has(printed.id)).toBe(true);
  });

  it('puts the id in the path and the tenant in the query of an update, and sends booleans as booleans', async () => {
    const { fake, env } = await fakeCrm();
    const [contact] = fake.store.contacts.values();
    const run = await runCrm(
      ['contacts', 'update', String(contact?.id), '--no-is-primary', '--status', 'inactive'],
      env,
    );
    expect(run.code).toBe(0);
    const sent = fake.requests.at(-1);
    expect(sent?.path).toBe(`/integrations/v1/contacts/${contact?.id}`);
    expect(sent?.query).toEqual({ tenantId: 'tenant_demo' });
    expect(sent?.body).toEqual({ isPrimary: false, status: 'inactive' });
    expect(json(run.stdout)).toEqual(
      expect.objectContaining({ id: contact?.id, isPrimary: false, status: 'inactive' }),
    );
  });

  it('prints the first page of a list as { data, pagination }', async () => {
    const { fake, env } = await fakeCrm();
    const run = await runCrm(['contacts', 'list', '--limit', '2'], env);
    expect(run.code).toBe(0);
    const page = json(run.stdout) as { data: { id: string }[]; pagination: unknown };
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
    expect(page.data.map((c) => c.id)).toEqual([...fake.store.contacts.keys()].slice(0, 2));
  });

  it('prints one line of JSON when stdout is not a terminal', async () => {
    const { fake, env } = await fakeCrm();
    const [opportunity] = fake.store.opportunities.values();
    const run = await runCrm(['opportunities', 'get', String(opportunity?.id)], env);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it('takes the whole input as JSON from the argument, a file or standard input, with flags over it', async () => {
    const { fake, env } = await fakeCrm();
    const [account] = fake.store.accounts.values();
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'crm-json-'));
    const file = join(dir, 'contact.json');
    await writeFile(file, JSON.stringify({ accountId: account?.id, firstName: 'File', status: 'active' }));

    const fromFile = await runCrm(['contacts', 'create', '--json', `@${file}`, '--first-name', 'Flag'], env);
    expect(fromFile.code).toBe(0);
    expect(fake.requests.at(-1)?.body).toEqual({
      tenantId: 'tenant_demo',
      accountId: account?.id,
      firstName: 'Flag',
      status: 'active',
    });

    const fromStdin = await runCrm(['contacts', 'create', '--json', '-'], env, JSON.stringify({ firstName: 'Stdin' }));
    expect(fromStdin.code).toBe(0);
    expect(fake.requests.at(-1)?.body).toEqual({ tenantId: 'tenant_demo', firstName: 'Stdin' });

    const inline = await runCrm(['grants', 'resolve', '--json', '{"grantId":"grant_1"}'], env);
    expect(inline.code).toBe(0);
    expect(fake.requests.at(-1)?.query).toEqual({ tenantId: 'tenant_demo', grantId: 'grant_1' });
  });
});
