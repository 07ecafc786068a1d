import { createRequire } from 'node:module';
import { describe, expect, test } from 'vitest';
import { API_KEY, BASE_URL, capture, ok, TENANT } from '../support/capture';

// `npm test` builds dist/ before running the suite; these tests load the built entries as a consumer would.
type Entry = typeof import('../../src/index');
const require = createRequire(import.meta.url);

const entries: [string, () => Promise<Entry>][] = [
  // By URL, as a consumer's runtime finds it: the type check does not need a build.
  ['the ESM entry (import)', async () => (await import(new URL('../../dist/index.js', import.meta.url).href)) as Entry],
  [
    'the ESM entry for Node (import, node condition)',
    async () => (await import(new URL('../../dist/node/index.js', import.meta.url).href)) as unknown as Entry,
  ],
  ['the CJS entry (require)', async () => require('../../dist/index.cjs') as Entry],
];

describe.each(entries)('%s', (_name, load) => {
  test('exports the client, the errors and the schemas', async () => {
    const sdk = await load();
    expect(typeof sdk.CrmClient).toBe('function');
    expect(typeof sdk.CrmNotFoundError).toBe('function');
    expect(typeof sdk.isCrmError).toBe('function');
    expect(sdk.OpportunitySchema.safeParse({ id: 'o1' }).success).toBe(true);
  });

  test('makes a real call and maps a 404 to CrmNotFoundError', async () => {
    const sdk = await load();
    const seen = capture('get', '/integrations/v1/opportunities/:id', (_request, index) =>
      index === 0 ? ok({ id: 'o1', name: 'Deal' }) : new Response('{"message":"gone"}', { status: 404 }),
    );
    const crm = new sdk.CrmClient({ baseUrl: BASE_URL, apiKey: API_KEY, tenantId: TENANT });

    await expect(crm.opportunities.get('o1')).resolves.toEqual({ id: 'o1', name: 'Deal' });
    const error = await crm.opportunities.get('o2').catch((e: unknown) => e);

    expect(error).toBeInstanceOf(sdk.CrmNotFoundError);
    expect(sdk.isCrmApiError(error)).toBe(true);
    expect(seen[0]?.url.searchParams.get('tenantId')).toBe(TENANT);
  });
});

describe('the testing entry', () => {
  test('loads as ESM, as ESM for Node and as CJS, and createFakeCrm() builds the handlers in each (msw is ESM-only: the Node and CJS builds load it with require(esm), Node >= 22.12)', async () => {
    const esm = (await import(
      new URL('../../dist/testing.js', import.meta.url).href
    )) as typeof import('../../src/testing/index');
    const node = (await import(
      new URL('../../dist/node/testing.js', import.meta.url).href
    )) as unknown as typeof import('../../src/testing/index');
    const cjs = require('../../dist/testing.cjs') as typeof import('../../src/testing/index');
    for (const testing of [esm, node, cjs]) {
      const fake = testing.createFakeCrm();
      expect(fake.handlers).toHaveLength(1);
      expect(fake.credentials.tenantId).toBe('tenant_demo');
    }
  });
});

describe('the package', () => {
  test('declares exactly ky and zod as runtime dependencies', async () => {
    const { readFile } = await import('node:fs/promises');
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));

    expect(Object.keys(manifest.dependencies).sort()).toEqual(['ky', 'zod']);
  });

  test('resolves to the self-contained build in Node and to the shareable build elsewhere', async () => {
    const { readFile } = await import('node:fs/promises');
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));

    for (const [subpath, name] of [
      ['.', 'index'],
      ['./testing', 'testing'],
    ] as const) {
      expect(Object.entries(manifest.exports[subpath].import)).toEqual([
        ['types', `./dist/${name}.d.ts`],
        ['node', `./dist/node/${name}.js`],
        ['default', `./dist/${name}.js`],
      ]);
    }
    expect(import.meta.resolve('crm-integration-sdk')).toMatch(/\/dist\/node\/index\.js$/);
  });
});

describe('the main entry', () => {
  test('imports neither msw nor any Node built-in, so it runs wherever fetch exists', async () => {
    const { readFile } = await import('node:fs/promises');
    // The entry and the chunks it shares with the testing entry, followed through relative imports.
    const externalImports = async (file: string | URL, seen = new Set<string>()): Promise<Set<string>> => {
      const out = new Set<string>();
      const url = new URL(file, import.meta.url);
      if (seen.has(url.href)) return out;
      seen.add(url.href);
      const code = await readFile(url, 'utf8');
      for (const [, name] of code.matchAll(/(?:from\s*|import\(|require\()\s*["']([^"']+)["']/g)) {
        if (!name) continue;
        if (name.startsWith('./')) for (const inner of await externalImports(new URL(name, url), seen)) out.add(inner);
        else out.add(name);
      }
      return out;
    };

    const packageOf = (specifier: string) => specifier.split('/')[0];
    const esm = await externalImports('../../dist/index.js');
    expect(new Set([...esm].map(packageOf))).toEqual(new Set(['ky', 'zod']));
    expect(esm).not.toContain('zod'); // zod/mini and zod/v4/core only: importing 'zod' loads zod classic
    // The Node and CJS builds inline ky and zod: Node loads a few files rather than about a hundred.
    expect(await externalImports('../../dist/node/index.js')).toEqual(new Set());
    expect(await externalImports('../../dist/index.cjs')).toEqual(new Set());
  });
});

describe('the built package', () => {
  test('never generates code at run time, so it runs under a CSP without unsafe-eval', async () => {
    const { readFile, readdir } = await import('node:fs/promises');
    const checked: string[] = [];
    for (const dir of ['dist/', 'dist/node/']) {
      const url = new URL(`../../${dir}`, import.meta.url);
      for (const file of await readdir(url)) {
        if (!/\.c?js$/.test(file) || file === 'crm-fake.js') continue;
        const code = await readFile(new URL(file, url), 'utf8');
        expect({ file, generatesCode: /\bFunction\b|\beval\(/.test(code) }).toEqual({
          file,
          generatesCode: false,
        });
        checked.push(`${dir}${file.replace(/-[\w]+\.js$/, '.js')}`);
      }
    }
    // The entries of both builds, which hold the response validators, were among the files read.
    expect(checked).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.cjs', 'dist/node/index.js']));
  });
});
