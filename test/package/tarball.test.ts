import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { http, passthrough } from 'msw';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { server } from '../support/msw-server';

/*
 * The packed tarball, as an app installs it: one `npm pack` for this file, installed in two
 * temporary projects, one without msw (the optional peer) and one with it. `npm test` builds
 * dist/ before the suite runs.
 */

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const versionOf = (name: string): string =>
  JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

/**
 * A folder to work in whose parents hold no node_modules: Node and tsc look for a package up the
 * tree, so a node_modules in a parent would lend msw to the project that must not have it.
 */
function hermeticTmpdir(): string {
  const parentsOf = (dir: string): string[] => (dirname(dir) === dir ? [dir] : [dir, ...parentsOf(dirname(dir))]);
  const clean = [tmpdir(), '/var/tmp', '/dev/shm'].find(
    (base) => existsSync(base) && parentsOf(base).every((dir) => !existsSync(join(dir, 'node_modules'))),
  );
  if (!clean) throw new Error('every temporary folder has a node_modules above it');
  return clean;
}

let work = '';
let bare = '';
let withMsw = '';

async function project(name: string, packages: string[]): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir);
  // No "type": a CommonJS project, as most TypeScript projects on node16 resolution still are.
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true }));
  await exec('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...packages], { cwd: dir });
  return dir;
}

beforeAll(async () => {
  work = await mkdtemp(join(hermeticTmpdir(), 'crm-sdk-tarball-'));
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', work], { cwd: root });
  const tarball = join(work, (JSON.parse(stdout) as [{ filename: string }])[0].filename);
  [bare, withMsw] = await Promise.all([
    project('bare', [tarball]),
    project('with-msw', [tarball, `msw@${versionOf('msw')}`]),
  ]);
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const node = async (cwd: string, file: string) => (await exec(process.execPath, [file], { cwd })).stdout;
const tsc = (cwd: string) =>
  exec(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd }).then(
    () => 'no errors',
    (error: { stdout?: string }) => String(error.stdout),
  );

// The same steps as ESM and as CJS: what works without msw, and what createFakeCrm() says.
const WITHOUT_MSW = `
const out = {};
try {
  testing.createFakeCrm();
  out.createFakeCrm = 'returned';
} catch (error) {
  out.createFakeCrm = error.message;
}
const srv = await testing.startFakeCrmServer({ seed: testing.generateFakeData({ accounts: 3 }) });
try {
  const crm = new sdk.CrmClient({ ...srv.fake.credentials, baseUrl: srv.url });
  out.accounts = (await crm.accounts.create({ name: 'Acme' })).name;
  out.seeded = srv.fake.store.accounts.size;
} finally {
  await srv.close();
}
const core = new testing.FakeCrmCore();
const answer = await core.handle(
  new Request('https://crm.fake/integrations/v1/contacts?tenantId=tenant_demo', {
    headers: { 'x-api-key': core.credentials.apiKey },
  }),
);
out.core = answer.status;
console.log(JSON.stringify(out));
`;

describe('the tarball without msw installed', () => {
  beforeAll(async () => {
    await writeFile(
      join(bare, 'esm.mjs'),
      `import * as sdk from 'crm-integration-sdk';\nimport * as testing from 'crm-integration-sdk/testing';\n${WITHOUT_MSW}`,
    );
    await writeFile(
      join(bare, 'cjs.cjs'),
      `const sdk = require('crm-integration-sdk');\nconst testing = require('crm-integration-sdk/testing');\n(async () => {${WITHOUT_MSW}})().catch((e) => { console.error(e); process.exit(1); });\n`,
    );
  });

  test.each([
    ['ESM', 'esm.mjs'],
    ['CJS', 'cjs.cjs'],
  ])(
    '%s: the testing entry loads, the server and the core work, and createFakeCrm() says to install msw',
    async (_format, file) => {
      expect(existsSync(join(bare, 'node_modules', 'msw'))).toBe(false);

      const out = JSON.parse(await node(bare, file));

      expect(out).toEqual({
        createFakeCrm: expect.stringContaining('npm install --save-dev msw'),
        accounts: 'Acme',
        seeded: 4,
        core: 200,
      });
      expect(out.createFakeCrm).toMatch(/^createFakeCrm\(\) needs msw, an optional peer dependency/);
    },
  );

  test('the crm-fake bin serves and answers, and the crm bin exports from it', async () => {
    const child = spawn(process.execPath, [join(bare, 'node_modules/.bin/crm-fake'), '--port', '0', '--records', '2']);
    try {
      let stdout = '';
      await new Promise<void>((resolve, reject) => {
        child.on('exit', (code) => reject(new Error(`crm-fake exited with ${code}`)));
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('CRM_ADMIN_TOKEN=')) resolve();
        });
      });
      const vars = Object.fromEntries(stdout.split('\n').map((line) => line.split('=') as [string, string]));

      server.use(http.all(/^http:\/\/127\.0\.0\.1:\d+\//, () => passthrough()));
      const answer = await fetch(`${vars.CRM_BASE_URL}/integrations/v1/contacts?tenantId=${vars.CRM_TENANT_ID}`, {
        headers: { 'x-api-key': vars.CRM_API_KEY ?? '' },
      });

      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { data: unknown[] }).data).toHaveLength(2);

      const crmVars = Object.fromEntries(Object.entries(vars).filter(([name]) => name.startsWith('CRM_')));
      const crm = (...args: string[]) =>
        exec(process.execPath, [join(bare, 'node_modules/.bin/crm'), ...args], {
          cwd: bare,
          env: { PATH: process.env.PATH, ...crmVars },
        }).catch((error: { code: number; stdout: string; stderr: string }) => error);

      // The crm bin, as installed, exports them (it needs neither msw nor the MCP SDK).
      const exported = await crm('contacts', 'list', '--all', '--limit', '1');
      expect(
        exported.stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line).id),
      ).toHaveLength(2);

      // crm mcp needs the MCP SDK, an optional peer this project lacks: it says how to install it.
      expect(existsSync(join(bare, 'node_modules', '@modelcontextprotocol'))).toBe(false);
      const mcp = await crm('mcp');
      expect({ code: 'code' in mcp ? mcp.code : 0, stdout: mcp.stdout }).toEqual({ code: 1, stdout: '' });
      expect(JSON.parse(mcp.stderr)).toEqual({
        name: 'McpSdkMissingError',
        message: expect.stringMatching(/^crm mcp needs .+: npm install @modelcontextprotocol\/sdk$/),
      });
    } finally {
      child.kill('SIGTERM');
    }
  });
});

// A strict consumer as a CommonJS project compiles it (consumer.ts: no "type" in package.json),
// and as ESM (consumer.mts), with the declarations checked (skipLibCheck: false).
const CONSUMER = `import { CrmClient, type Opportunity } from 'crm-integration-sdk';
import {
  createFakeCrm,
  type FakeCrm,
  FakeCrmCore,
  type FakeRequest,
  generateFakeData,
  startFakeCrmServer,
} from 'crm-integration-sdk/testing';

export async function main(): Promise<Opportunity> {
  const srv = await startFakeCrmServer({ seed: generateFakeData({ accounts: 1 }) });
  const crm = new CrmClient({ ...srv.fake.credentials, baseUrl: srv.url });
  const account = await crm.accounts.create({ name: 'Acme' });
  const last: FakeRequest | undefined = srv.fake.requests.at(-1);
  const id: string | undefined = last?.requestId;
  void id;
  await srv.close();
  const fake: FakeCrm = createFakeCrm();
  const core: FakeCrmCore = fake;
  void core;
  return crm.opportunities.create({ name: 'Deal', accountId: account.id });
}
`;

const tsconfig = {
  compilerOptions: {
    module: 'node16',
    moduleResolution: 'node16',
    target: 'es2023',
    lib: ['es2023', 'dom'],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
  },
};

describe('TypeScript, module node16, skipLibCheck false', () => {
  test('a CommonJS project (and an ESM file) type-checks against both entries without msw', async () => {
    await writeFile(join(bare, 'consumer.ts'), CONSUMER);
    await writeFile(join(bare, 'consumer.mts'), CONSUMER);
    await writeFile(
      join(bare, 'tsconfig.json'),
      JSON.stringify({ ...tsconfig, files: ['consumer.ts', 'consumer.mts'] }),
    );

    expect(await tsc(bare)).toBe('no errors');
  }, 180_000);

  test("with msw, the same project compiles and sees fake.handlers as msw's RequestHandler[]", async () => {
    const handlers = `import type { RequestHandler } from 'msw' with { 'resolution-mode': 'import' };
import { createFakeCrm } from 'crm-integration-sdk/testing';

export const typed: RequestHandler[] = createFakeCrm().handlers;
// @ts-expect-error the handlers are msw's, not anything
export const wrong: string[] = createFakeCrm().handlers;
`;
    await writeFile(join(withMsw, 'consumer.ts'), CONSUMER);
    await writeFile(join(withMsw, 'consumer.mts'), CONSUMER);
    await writeFile(join(withMsw, 'handlers.ts'), handlers);
    await writeFile(join(withMsw, 'handlers.mts'), handlers.replace(" with { 'resolution-mode': 'import' }", ''));
    const files = ['consumer.ts', 'consumer.mts', 'handlers.ts', 'handlers.mts'];
    await writeFile(join(withMsw, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files }));

    expect(await tsc(withMsw)).toBe('no errors');
  }, 180_000);
});

describe('esbuild --bundle --platform=browser', () => {
  // An import of a Node built-in, by either name, that a bundle might have left for run time.
  const nodeImport = /\b(?:from|import|require)\s*\(?\s*["'](?:node:[\w/]+|http|https|net|fs|module|url|util|path)["']/;

  test.each([
    ['createFakeCrm', "import { createFakeCrm } from 'crm-integration-sdk/testing';\nwindow.fake = createFakeCrm();\n"],
    ['the whole kit', "import * as testing from 'crm-integration-sdk/testing';\nwindow.testing = testing;\n"],
  ])('bundles %s from the package exports, with no Node built-in left to import', async (_what, source) => {
    await writeFile(join(withMsw, 'page.mjs'), source);

    const result = await build({
      absWorkingDir: withMsw,
      entryPoints: ['page.mjs'],
      bundle: true,
      platform: 'browser',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });

    expect(result.errors).toEqual([]);
    // Resolved through the exports map to the build for bundlers, as an app's bundler does.
    expect(Object.keys(result.metafile.inputs)).toContain('node_modules/crm-integration-sdk/dist/testing.js');
    const [output] = result.outputFiles;
    expect(Object.values(result.metafile.outputs).flatMap((o) => o.imports)).toEqual([]);
    expect(output?.text).not.toMatch(nodeImport);
  });
});
