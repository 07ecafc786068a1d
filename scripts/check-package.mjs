// The consumer half of `npm run check:package` (publint and @arethetypeswrong/cli have checked the
// packed tarball before it): a temporary project installs the tarball and
//      (a) imports it as ESM and requires it as CJS,
//      (b) type-checks a strict consumer file with moduleResolution node16 and bundler,
//      (c) makes a real call against the fake server of crm-integration-sdk/testing, traced by
//          crm-integration-sdk/otel, paced through a store of crm-integration-sdk/redis (its
//          redisStore() type-checked over an ioredis client), with a SQLite journal of
//          crm-integration-sdk/sync opened, and a journal of crm-integration-sdk/postgres
//          (type-checked over a pg Pool) whose errors are the sync entry's SyncJournalError,
//      (d) runs the bins: `crm` exports from the fake, prints the OpenAPI document, and serves
//          `crm mcp` to the MCP SDK's client (its optional peer installed),
//      (e) type-checks every ```ts block of README.md as a file of its own (readme-snippets.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeReadmeProject } from './readme-snippets.mjs';

const root = new URL('..', import.meta.url).pathname;
const run = (command, args, cwd = root) => {
  process.stdout.write(`$ ${[command, ...args].join(' ')}\n`);
  execFileSync(command, args, { cwd, stdio: 'inherit' });
};

const work = mkdtempSync(join(tmpdir(), 'crm-sdk-package-'));
try {
  const [{ filename }] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root }).toString(),
  );
  const tarball = join(work, filename);

  const consumer = join(work, 'consumer');
  run('mkdir', ['-p', consumer]);
  const version = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      tarball,
      `msw@${version('msw')}`,
      `@opentelemetry/api@${version('@opentelemetry/api')}`,
      `@opentelemetry/sdk-trace@${version('@opentelemetry/sdk-trace')}`,
      `@modelcontextprotocol/sdk@${version('@modelcontextprotocol/sdk')}`,
      `ioredis@${version('ioredis')}`,
      `pg@${version('pg')}`,
      `@types/pg@${version('@types/pg')}`,
      `typescript@${version('typescript')}`,
      // The README's test snippet imports test and expect from vitest.
      `vitest@${version('vitest')}`,
      `@types/node@${version('@types/node')}`,
      // The README's queue-worker and proxy snippets, checked against the real packages: a stub of
      // their types once let a snippet that does not compile in a user's project through.
      'bullmq@6.7.6',
      'undici@7.29.1',
    ],
    consumer,
  );

  writeFileSync(
    join(consumer, 'consumer.ts'),
    `import { CrmClient, CrmNotFoundError, type Opportunity, type PagePromise, type Contact } from 'crm-integration-sdk';
import { instrumentCrm } from 'crm-integration-sdk/otel';
import { memoryStore, type PaceStore, redisStore } from 'crm-integration-sdk/redis';
import { CrmSync, memoryJournal, sqliteJournal, type SyncJournal, type SyncReport } from 'crm-integration-sdk/sync';
import { postgresJournal } from 'crm-integration-sdk/postgres';
import { startFakeCrmServer } from 'crm-integration-sdk/testing';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider as SdkTracerProvider } from '@opentelemetry/sdk-trace';
import { Redis } from 'ioredis';
import pg from 'pg';

/** An ioredis client fits redisStore() as it is (never connected here). */
export const shared = (): PaceStore => redisStore(new Redis({ lazyConnect: true }), { prefix: 'consumer:' });
export const journals: SyncJournal[] = [
  memoryJournal(),
  sqliteJournal('./consumer.sync.db'),
  // A pg Pool fits postgresJournal() as it is (never connected here).
  postgresJournal(new pg.Pool({ connectionString: 'postgres://localhost/app' }), { schema: 'crm_sync' }),
];
export const load = (crm: CrmClient): Promise<SyncReport> =>
  new CrmSync(crm, { journal: journals[0] as SyncJournal }).run({ accounts: [{ key: 'ERP-1', data: { name: 'Consumer Ltd' } }] });
export const paced = new CrmClient({ baseUrl: 'http://crm.test', throttle: { mode: 'auto', store: memoryStore() } });

export async function main(): Promise<string> {
  const server = await startFakeCrmServer();
  const exporter = new InMemorySpanExporter();
  const stop: () => void = instrumentCrm({
    tracerProvider: new SdkTracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  });
  try {
    const crm = new CrmClient({ ...server.fake.credentials, baseUrl: server.url });
    const account = await crm.accounts.create({ name: 'Consumer Ltd' });
    const created: Opportunity = await crm.opportunities.create({ name: 'Deal', accountId: account.id });
    const list: PagePromise<Contact> = crm.contacts.list({ limit: 10 });
    await list;
    try {
      await crm.opportunities.get('missing');
    } catch (error) {
      if (!(error instanceof CrmNotFoundError)) throw error;
    }
    if (exporter.getFinishedSpans().length === 0) throw new Error('no span');
    return created.id;
  } finally {
    stop();
    await server.close();
  }
}
`,
  );
  for (const resolution of ['node16', 'bundler']) {
    const module = resolution === 'node16' ? 'node16' : 'esnext';
    writeFileSync(
      join(consumer, `tsconfig.${resolution}.json`),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module,
          moduleResolution: resolution,
          target: 'es2023',
          lib: ['es2023', 'dom'],
          types: ['node'],
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
        },
        files: ['consumer.ts'],
      }),
    );
    run(
      process.execPath,
      [join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${resolution}.json`],
      consumer,
    );
  }

  const call = `const server = await sdkTesting.startFakeCrmServer();
const exporter = new otelSdk.InMemorySpanExporter();
const stop = sdkOtel.instrumentCrm({ tracerProvider: new otelSdk.TracerProvider({ spanProcessors: [new otelSdk.SimpleSpanProcessor({ exporter })] }) });
const crm = new sdk.CrmClient({ ...server.fake.credentials, baseUrl: server.url, throttle: { mode: 'auto', store: sdkRedis.memoryStore() } });
const account = await crm.accounts.create({ name: 'Acme' });
const refused = await sdkPostgres.postgresJournal({ connect: () => Promise.reject(new Error('down')) }).open().catch((e) => e);
if (!(refused instanceof sdkSync.SyncJournalError) || refused.reason !== 'unavailable') throw new Error('postgres: ' + refused);
stop();
const sync = new sdkSync.CrmSync(crm, { journal: sdkSync.sqliteJournal(':memory:') });
const synced = await sync.run({ accounts: [{ key: 'ERP-1', data: { name: 'Synced' } }] });
const again = await sync.run({ accounts: [{ key: 'ERP-1', data: { name: 'Synced' } }] });
if (synced.created !== 1 || again.unchanged !== 1) throw new Error('sync: ' + JSON.stringify([synced, again]));
await server.close();
if (!account.id) throw new Error('no id');
const names = exporter.getFinishedSpans().map((span) => span.name).sort().join();
if (names !== 'POST /integrations/v1/accounts,crm accounts.create') throw new Error('spans: ' + names);
console.log('ok', typeof sdk.CrmClient, account.id);`;
  writeFileSync(
    join(consumer, 'esm.mjs'),
    `import * as sdk from 'crm-integration-sdk';\nimport * as sdkTesting from 'crm-integration-sdk/testing';\nimport * as sdkOtel from 'crm-integration-sdk/otel';\nimport * as sdkRedis from 'crm-integration-sdk/redis';\nimport * as sdkSync from 'crm-integration-sdk/sync';\nimport * as sdkPostgres from 'crm-integration-sdk/postgres';\nimport * as otelSdk from '@opentelemetry/sdk-trace';\n${call}\n`,
  );
  writeFileSync(
    join(consumer, 'cjs.cjs'),
    `const sdk = require('crm-integration-sdk');\nconst sdkTesting = require('crm-integration-sdk/testing');\nconst sdkOtel = require('crm-integration-sdk/otel');\nconst sdkRedis = require('crm-integration-sdk/redis');\nconst sdkSync = require('crm-integration-sdk/sync');\nconst sdkPostgres = require('crm-integration-sdk/postgres');\nconst otelSdk = require('@opentelemetry/sdk-trace');\n(async () => {\n${call}\n})().catch((e) => { console.error(e); process.exit(1); });\n`,
  );
  run(process.execPath, ['esm.mjs'], consumer);
  run(process.execPath, ['cjs.cjs'], consumer);

  writeFileSync(
    join(consumer, 'bins.mjs'),
    `import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { generateFakeData, startFakeCrmServer } from 'crm-integration-sdk/testing';

const server = await startFakeCrmServer({ seed: generateFakeData({ contacts: 7 }) });
const env = { PATH: process.env.PATH, CRM_BASE_URL: server.url, CRM_TENANT_ID: server.fake.tenantId, CRM_API_KEY: server.fake.credentials.apiKey };
const crm = new URL('./node_modules/.bin/crm', import.meta.url).pathname;
// Asynchronous: the fake answers from this process.
const run = async (args, options) => (await promisify(execFile)(process.execPath, [crm, ...args], options)).stdout;
try {
  const exported = await run(['contacts', 'list', '--all', '--limit', '3'], { env });
  if (exported.trimEnd().split('\\n').length !== 7) throw new Error('crm --all: ' + exported);
  const openapi = JSON.parse(await run(['openapi']));
  const operations = Object.values(openapi.paths).flatMap((item) => Object.keys(item));
  if (openapi.openapi !== '3.1.0' || operations.length !== 13) throw new Error('crm openapi: ' + operations.length);
  const client = new Client({ name: 'check-package', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [crm, 'mcp'], env }));
  const { tools } = await client.listTools();
  const page = await client.callTool({ name: 'contacts_list', arguments: { limit: 2 } });
  await client.close();
  if (!tools.some((tool) => tool.name === 'contacts_list') || JSON.parse(page.content[0].text).data.length !== 2)
    throw new Error('crm mcp: ' + JSON.stringify(page));
  console.log('ok: crm exports, prints OpenAPI 3.1 and serves MCP (' + tools.length + ' read tools)');
} finally {
  await server.close();
}
`,
  );
  run(process.execPath, ['bins.mjs'], consumer);

  // README.md's snippets, each a file of the consumer project, strict as the consumer file is.
  const readme = join(consumer, 'readme');
  const { files, blocks } = writeReadmeProject(root, readme);
  writeFileSync(
    join(readme, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'node16',
        moduleResolution: 'node16',
        target: 'es2023',
        lib: ['es2023', 'dom'],
        types: ['node'],
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
      },
      files,
    }),
  );
  try {
    execFileSync(
      process.execPath,
      [join(consumer, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      {
        cwd: readme,
        stdio: 'pipe',
      },
    );
  } catch (error) {
    // tsc names readme-<line>.ts (row, col): said as README.md's own line.
    const said = String(error.stdout).replace(
      /readme-0*(\d+)\.ts\((\d+),(\d+)\)/g,
      (_, start, row, col) => `README.md:${Number(start) + Number(row) - 1}:${col}`,
    );
    throw new Error(
      `README.md's TypeScript blocks do not compile against the packed package:\n${said}\nFix the snippet, declare a name it takes from your code in test/package/readme-globals.d.ts, or put <!-- readme-check: skip (why) --> above a fragment.`,
    );
  }
  process.stdout.write(
    `README.md: ${files.length - 2} TypeScript blocks compile (${blocks.length - files.length + 2} skipped)\n`,
  );
  process.stdout.write(
    'check:package: the tarball is clean and works as ESM, CJS, node16 and bundler types, the otel, redis, sync and postgres entries and the bins included\n',
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
