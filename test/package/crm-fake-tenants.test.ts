import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, passthrough } from 'msw';
import { expect, test } from 'vitest';
import { server } from '../support/msw-server';
import { runNode } from '../support/run-node';

/* crm-fake serving several tenants from the shell, as the README's "Seeding crm-fake" shows. */

async function started(args: string[]) {
  const bin = runNode(['dist/crm-fake.js', ...args]);
  // The bin prints its lines in one write, after it listens.
  await new Promise<void>((resolve, reject) => {
    bin.child.stdout.on('data', () => {
      if (bin.output().stdout.includes('CRM_ADMIN_TOKEN=')) resolve();
    });
    void bin.exit.then(() => reject(new Error(bin.output().stderr)));
  });
  server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
  const lines = bin.output().stdout.split('\n');
  const url = lines.find((l) => l.startsWith('CRM_BASE_URL='))?.slice('CRM_BASE_URL='.length) ?? '';
  const tenants = lines
    .filter((l) => l.startsWith('tenant '))
    .map((l) =>
      Object.fromEntries(
        l
          .split(': ')[1]
          ?.split(' ')
          .map((pair) => pair.split('=') as [string, string]) ?? [],
      ),
    );
  return { bin, url, tenants };
}

const contacts = (url: string, tenant: string, key: string) =>
  fetch(`${url}/integrations/v1/contacts?tenantId=${tenant}&limit=1`, { headers: { 'x-api-key': key } });

test('--tenants serves each tenant with its own printed key, which opens that tenant alone', async () => {
  const { bin, url, tenants } = await started(['--tenants', 'acme,globex,initech', '--records', '2']);
  try {
    expect(tenants.map((t) => t.CRM_TENANT_ID)).toEqual(['acme', 'globex', 'initech']);
    for (const t of tenants) {
      const reply = await contacts(url, t.CRM_TENANT_ID ?? '', t.CRM_API_KEY ?? '');
      expect(((await reply.json()) as { pagination: { total: number } }).pagination.total).toBe(2);
    }
    expect((await contacts(url, 'globex', tenants[0]?.CRM_API_KEY ?? '')).status).toBe(401);
  } finally {
    bin.child.kill('SIGTERM');
    expect(await bin.exit).toBe(0);
  }
});

test('--seed serves the tenants and records of a file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-fake-seed-'));
  const file = join(dir, 'seed.json');
  writeFileSync(
    file,
    JSON.stringify({
      tenants: [
        { id: 'acme', apiKey: 'acme-key' },
        { id: 'globex', apiKey: 'globex-key' },
      ],
      contacts: [{ tenantId: 'globex', firstName: 'Grace' }],
    }),
  );
  const { bin, url, tenants } = await started(['--seed', file]);
  try {
    expect(tenants.map((t) => [t.CRM_TENANT_ID, t.CRM_API_KEY])).toEqual([
      ['acme', 'acme-key'],
      ['globex', 'globex-key'],
    ]);
    const reply = await contacts(url, 'globex', 'globex-key');
    expect(((await reply.json()) as { data: { firstName: string }[] }).data[0]?.firstName).toBe('Grace');
  } finally {
    bin.child.kill('SIGTERM');
    expect(await bin.exit).toBe(0);
  }
});

test('a bad seed file is wrong usage: exit 2, the reason on stderr, and no key from the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-fake-seed-'));
  const file = join(dir, 'seed.json');
  writeFileSync(file, '{"tenants": [{"id": "acme", "apiKey": "sk_live_SECRET"}, }');
  const bin = runNode(['dist/crm-fake.js', '--seed', file]);

  expect(await bin.exit).toBe(2);
  const { stdout, stderr } = bin.output();
  expect(stdout).toBe('');
  expect(stderr).toMatch(/^crm-fake: --seed .*seed\.json: not valid JSON/);
  expect(stderr).not.toContain('SECRET');
});

test('crm-fake takes the bounds of its request log, and refuses one that is no whole number', async () => {
  const { bin, url } = await started(['--log-requests', '100', '--log-bytes', '1048576']);
  expect((await fetch(`${url}/integrations/v1/contacts`)).status).toBe(401);
  bin.child.kill('SIGTERM');
  expect(await bin.exit).toBe(0);

  const wrong = runNode(['dist/crm-fake.js', '--log-bytes', '64MiB']);
  expect(await wrong.exit).toBe(2);
  expect(wrong.output().stderr).toMatch(/^crm-fake: --log-bytes must be a whole number, not "64MiB"/);
});
