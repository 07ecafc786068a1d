import { describe, expect, test } from 'vitest';
import { createFakeCrm } from '../../src/testing/index';
import { TenantsError, tenantsFromList, tenantsFromSeed } from '../../src/testing/tenants';

/* The tenants crm-fake serves from the shell: --tenants and seed files, and what each refuses. */

describe('tenantsFromList', () => {
  test('gives each tenant its own records, key and admin token; the first is the fake’s own', () => {
    const served = tenantsFromList('acme,globex,initech', 2);
    expect(served.tenantId).toBe('acme');
    expect(served.tenants).toEqual([
      { id: 'acme', apiKey: 'fake-api-key-acme', adminToken: 'fake-admin-token-acme' },
      { id: 'globex', apiKey: 'fake-api-key-globex', adminToken: 'fake-admin-token-globex' },
      { id: 'initech', apiKey: 'fake-api-key-initech', adminToken: 'fake-admin-token-initech' },
    ]);
    const fake = createFakeCrm({ tenantId: served.tenantId, seed: served.seed });
    for (const id of ['acme', 'globex', 'initech']) {
      expect([...fake.store.contacts.values()].filter((c) => c.tenantId === id)).toHaveLength(2);
      expect(fake.store.tenants.get(id)?.apiKey).toBe(`fake-api-key-${id}`);
    }
  });

  test.each([
    [',', '"" is not a tenant id'],
    ['acme,,globex', '"" is not a tenant id'],
    ['acme,acme', 'tenant "acme" is named twice'],
    ['a b', '"a b" is not a tenant id'],
    ['a=b', '"a=b" is not a tenant id'],
    ['-rf', '"-rf" is not a tenant id'],
    ['a\nCRM_API_KEY=stolen', '"a\\nCRM_API_KEY=stolen" is not a tenant id'],
    ['x'.repeat(65), 'is not a tenant id'],
  ])('refuses %j with a TenantsError that says why', (list, reason) => {
    expect(() => tenantsFromList(list, 1)).toThrow(TenantsError);
    expect(() => tenantsFromList(list, 1)).toThrow(reason);
  });
});

describe('tenantsFromSeed', () => {
  const seedFile = {
    tenants: [{ id: 'acme', apiKey: 'key-acme-123' }, { id: 'globex' }, { id: 'initech', apiKey: null }],
    accounts: [{ id: 'acc_1', tenantId: 'globex', name: 'Globex Ltd' }, { name: 'Acme Ltd' }],
  };

  test('serves the file’s tenants, defaulting keys and administrators, and its records', () => {
    const served = tenantsFromSeed(JSON.stringify(seedFile), 'seed.json');
    expect(served.tenants).toEqual([
      { id: 'acme', apiKey: 'key-acme-123', adminToken: 'fake-admin-token-acme' },
      { id: 'globex', apiKey: 'fake-api-key-globex', adminToken: 'fake-admin-token-globex' },
      { id: 'initech', apiKey: null, adminToken: 'fake-admin-token-initech' },
    ]);
    const fake = createFakeCrm({ tenantId: served.tenantId, seed: served.seed });
    expect(fake.credentials.apiKey).toBe('key-acme-123');
    expect(fake.store.accounts.get('acc_1')?.tenantId).toBe('globex');
    // A record that names no tenant is the first tenant's.
    expect([...fake.store.accounts.values()].find((a) => a.name === 'Acme Ltd')?.tenantId).toBe('acme');
  });

  test('says where a seed that is not valid JSON breaks, by line and column, and never quotes it', () => {
    const messages = [
      'sk_live_SECRET_9f8e7d6c',
      '{\n  "tenants": [{"id": "acme", "apiKey": sk_live_SECRET_9f8e7d6c}]\n}',
      '{"tenants": [{"id": "acme", "apiKey": "sk_live_SECRET_9f8e7d6c"',
    ].map((text) => {
      try {
        tenantsFromSeed(text, 'seed.json');
      } catch (error) {
        return (error as Error).message;
      }
      return 'loaded';
    });
    expect(messages).toEqual([
      '--seed seed.json: not valid JSON (line 1, column 1)',
      '--seed seed.json: not valid JSON (line 2, column 40)',
      '--seed seed.json: not valid JSON (line 1, column 64)',
    ]);
  });

  test('loads 160,000 records, 2,000 tenants and their users in time linear in the seed: no id is searched for in a list', () => {
    const tenants = Array.from({ length: 2_000 }, (_, i) => ({ id: `t${i}` }));
    const users = tenants.map(({ id }, i) => ({
      id: `u${i}`,
      tenantId: id,
      name: 'A',
      token: `tok_${i}`,
      role: 'admin',
    }));
    const kind = (prefix: string) =>
      Array.from({ length: 40_000 }, (_, i) => ({ id: `${prefix}_${i}`, tenantId: `t${i % 2_000}`, name: 'N' }));
    const text = JSON.stringify({
      tenants,
      users,
      accounts: kind('acc'),
      contacts: kind('con'),
      opportunities: kind('opp'),
      activities: kind('act'),
    });
    // Counts the elements each linear search is given: a search per record over every record
    // (indexOf inside find) gives 160,000 x 160,000 of them; a lookup by set or map, none.
    let scanned = 0;
    const searches = ['indexOf', 'lastIndexOf', 'includes', 'find', 'findIndex', 'findLast', 'some', 'every'] as const;
    const originals = searches.map((method) => [method, Array.prototype[method]] as const);
    for (const [method, original] of originals) {
      Object.defineProperty(Array.prototype, method, {
        configurable: true,
        writable: true,
        value(this: unknown[], ...args: unknown[]) {
          scanned += this.length;
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        },
      });
    }
    let served: ReturnType<typeof tenantsFromSeed>;
    try {
      served = tenantsFromSeed(text, 'seed.json');
    } finally {
      for (const [method, original] of originals) {
        Object.defineProperty(Array.prototype, method, { configurable: true, writable: true, value: original });
      }
    }

    expect(served.tenants).toHaveLength(2_000);
    expect(served.tenants[1_999]).toEqual({ id: 't1999', apiKey: 'fake-api-key-t1999', adminToken: 'tok_1999' });
    expect(served.seed.activities).toHaveLength(40_000);
    expect(served.seed.users).toHaveLength(2_000);
    expect(scanned).toBeLessThan(10 * 168_000);
  }, 120_000);

  test.each([
    ['{"tenants": [{"id": "acme", "apiKey": "sk_live_SECRET"', 'not valid JSON'],
    ['[]', '(the file)'],
    ['{"tenant": []}', 'tenant: Unknown field'],
    ['{"tenants": [{"id": "a b"}]}', 'tenants.0.id'],
    ['{"tenants": [{"id": "acme"}, {"id": "acme"}]}', 'tenant "acme" is listed twice'],
    ['{"tenants": [{"id": "acme"}], "accounts": [{"tenantId": "umbrella"}]}', 'accounts.0.tenantId names no tenant'],
    ['{"tenants": [{"id": "acme", "rateLimit": {"perSecond": 0, "burst": 1}}]}', 'rateLimit.perSecond'],
    ['{"accounts": [{"id": "x"}], "contacts": [{"id": "x"}]}', 'record id "x" is used twice'],
    ['{"tenants": [{"id": "acme", "apiKey": "has space SECRET"}]}', 'tenants.0.apiKey'],
    [
      '{"users": [{"id": "u1", "name": "A", "token": "SECRET-t"}, {"id": "u2", "name": "B", "token": "SECRET-t"}]}',
      'two users have the same token',
    ],
    ['{"users": [{"id": "u1", "name": "A"}, {"id": "u1", "name": "B"}]}', 'user id "u1" is used twice'],
  ])('refuses %s, naming the file and the fault, and never a key in it', (text, reason) => {
    let error: unknown;
    try {
      tenantsFromSeed(text, 'seed.json');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TenantsError);
    expect((error as Error).message).toContain('--seed seed.json: ');
    expect((error as Error).message).toContain(reason);
    expect((error as Error).message).not.toContain('SECRET');
  });
});

describe('createFakeCrm({ seed }) and crm-fake --seed', () => {
  const file = {
    tenants: [{ id: 'acme', apiKey: 'key-acme-123' }, { id: 'globex' }, { id: 'initech', apiKey: null }],
    users: [{ id: 'usr_1', tenantId: 'initech', name: 'Ada', token: 'initech-admin', role: 'admin' as const }],
    accounts: [{ id: 'acc_1', tenantId: 'globex', name: 'Globex Ltd' }, { name: 'Acme Ltd' }],
  };

  test('serve the same tenants, keys, administrators and grants from the same JSON', () => {
    const served = tenantsFromSeed(JSON.stringify(file), 'seed.json');
    // What crm-fake starts the fake with, and what a test passes.
    const bin = createFakeCrm({ tenantId: served.tenantId, seed: served.seed });
    const direct = createFakeCrm({ seed: JSON.parse(JSON.stringify(file)) });

    expect(direct.credentials).toEqual(bin.credentials);
    expect(direct.credentials).toMatchObject({ tenantId: 'acme', apiKey: 'key-acme-123' });
    expect([...direct.store.tenants.values()].map(({ id, apiKey }) => ({ id, apiKey }))).toEqual([
      { id: 'acme', apiKey: 'key-acme-123' },
      { id: 'globex', apiKey: 'fake-api-key-globex' },
      { id: 'initech', apiKey: null },
    ]);
    expect([...direct.store.users.values()]).toEqual([...bin.store.users.values()]);
    expect([...direct.store.grants.values()]).toEqual([...bin.store.grants.values()]);
    expect([...direct.store.users.values()].find((u) => u.tenantId === 'globex')?.token).toBe(
      'fake-admin-token-globex',
    );
    expect(direct.store.accounts.get('acc_1')?.tenantId).toBe('globex');
  });

  test("a seeded tenant's default key opens it through createFakeCrm({ seed }), as crm-fake prints it", async () => {
    const fake = createFakeCrm({ seed: { tenants: [{ id: 'acme' }, { id: 'globex' }] } });
    const reply = await fake.handle(
      new Request('https://crm.fake/integrations/v1/contacts?tenantId=globex', {
        headers: { 'x-api-key': 'fake-api-key-globex' },
      }),
    );
    expect(reply.status).toBe(200);
    const key = await fake.handle(
      new Request('https://crm.fake/integrations/api-key', {
        headers: { authorization: 'Bearer fake-admin-token-globex' },
      }),
    );
    expect(key.status).toBe(200);
  });

  test("a tenantId given beside the seed stays the fake's own, the seeded tenants beside it", () => {
    const fake = createFakeCrm({ tenantId: 'tenant_demo', apiKey: 'own-key', seed: { tenants: [{ id: 't2' }] } });
    expect(fake.credentials).toMatchObject({ tenantId: 'tenant_demo', apiKey: 'own-key' });
    expect(fake.store.tenants.get('t2')?.apiKey).toBe('fake-api-key-t2');
  });
});
