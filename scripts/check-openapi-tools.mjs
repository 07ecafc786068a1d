// `npm run check:openapi` (part of `npm run check`): the tools users run on `crm openapi`, at the
// versions pinned in devDependencies, on the document that the packed tarball's `crm` prints:
//      (a) swagger-parser validates it as it is (orval and many pipelines run it first);
//      (b) Redocly CLI and Spectral (its `spectral:oas` ruleset) find no error;
//      (c) orval (--client fetch), hey-api and openapi-typescript generate clients from it, which
//          compile with `tsc --strict`;
//      (d) Prism's dynamic mock of it answers every SDK call, 10 times each, with no 500 and no
//          SDK failure (a response the SDK refuses, or a request the mock refuses);
//      (e) a Prism proxy holding the document as the contract, in front of the fake CRM, sees no
//          violation in the 13 SDK calls, extraQuery and extraBody included.
// `npm run build` comes first (check:package builds too, and npm run check runs it first).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
/** A package's bin, run with this Node (found through its package.json, which knip reads as a use). */
function bin(manifest, name) {
  const { bin: bins } = JSON.parse(readFileSync(manifest, 'utf8'));
  return [process.execPath, join(dirname(manifest), typeof bins === 'string' ? bins : bins[name])];
}
const redocly = bin(require.resolve('@redocly/cli/package.json'), 'redocly');
const spectral = bin(require.resolve('@stoplight/spectral-cli/package.json'), 'spectral');
const orval = bin(require.resolve('orval/package.json'), 'orval');
const heyApi = bin(require.resolve('@hey-api/openapi-ts/package.json'), 'openapi-ts');
const openapiTypescript = bin(require.resolve('openapi-typescript/package.json'), 'openapi-typescript');
const prismCli = bin(require.resolve('@stoplight/prism-cli/package.json'), 'prism');
const tsc = bin(require.resolve('typescript/package.json'), 'tsc');
// No tool may phone home or nag from CI.
const env = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
};
const run = (command, args, cwd = root) => {
  process.stdout.write(`$ ${[command, ...args].join(' ')}\n`);
  execFileSync(command, args, { cwd, stdio: 'inherit', env });
};

const failures = [];
const work = mkdtempSync(join(tmpdir(), 'crm-sdk-openapi-'));
const children = [];
try {
  // The packed tarball, as users get it: its Node builds and bins are self-contained.
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root }));
  execFileSync('tar', ['xzf', join(work, filename), '-C', work]);
  const pkg = join(work, 'package');
  const document = join(work, 'crm.openapi.json');
  writeFileSync(document, execFileSync(process.execPath, [join(pkg, 'dist/cli/crm.js'), 'openapi']));
  const pristine = readFileSync(document, 'utf8');

  // (a) swagger-parser mutates what it validates: it gets a copy, and the file stays as printed.
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  process.stdout.write('$ swagger-parser validate crm.openapi.json\n');
  await SwaggerParser.validate(JSON.parse(pristine)).then(
    () => process.stdout.write('swagger-parser: valid\n'),
    (error) => failures.push(`swagger-parser: ${error.message}`),
  );

  // (b)
  const ruleset = join(work, '.spectral.yaml');
  writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
  for (const [name, args] of [
    ['Redocly', [...redocly, 'lint', document, '--format', 'stylish']],
    ['Spectral', [...spectral, 'lint', document, '--ruleset', ruleset, '--fail-severity', 'error']],
  ]) {
    try {
      run(args[0], args.slice(1), work);
    } catch {
      failures.push(`${name} reports errors (above)`);
    }
  }

  // (c)
  const generated = join(work, 'generated');
  mkdirSync(generated);
  for (const [name, args] of [
    ['orval', [...orval, '--input', document, '--output', join(generated, 'orval/api.ts'), '--client', 'fetch']],
    ['hey-api', [...heyApi, '--input', document, '--output', join(generated, 'hey-api')]],
    ['openapi-typescript', [...openapiTypescript, document, '--output', join(generated, 'oats/schema.d.ts')]],
  ]) {
    try {
      run(args[0], args.slice(1), work);
    } catch {
      failures.push(`${name} could not generate a client (above)`);
    }
  }
  writeFileSync(
    join(generated, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        allowImportingTsExtensions: true,
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
      },
      include: ['**/*.ts'],
    }),
  );
  try {
    run(tsc[0], [...tsc.slice(1), '-p', join(generated, 'tsconfig.json')], generated);
    process.stdout.write('tsc --strict: the three generated clients compile\n');
  } catch {
    failures.push('the generated clients do not compile with tsc --strict (above)');
  }

  // (d) and (e)
  const sdk = await import(pathToFileURL(join(pkg, 'dist/node/index.js')).href);
  const testing = await import(pathToFileURL(join(pkg, 'dist/node/testing.js')).href);
  const mockPort = await freePort();
  const mock = await prism(['mock', '--dynamic', '--port', String(mockPort), document], mockPort);
  const mocked = await everyCall(
    sdk,
    { baseUrl: `http://127.0.0.1:${mockPort}`, tenantId: 't1', apiKey: 'k1', adminToken: 'a1' },
    10,
  );
  const crashes = mock.output().match(/\b500\b/g)?.length ?? 0;
  process.stdout.write(
    `Prism dynamic mock: ${mocked.ok} SDK calls succeeded, ${mocked.failed.length} failed, ${crashes} answers 500\n`,
  );
  for (const failure of mocked.failed.slice(0, 10)) failures.push(`Prism mock: ${failure}`);
  if (crashes) failures.push(`Prism mock answered 500 ${crashes} times`);

  const fake = await testing.startFakeCrmServer({
    seed: testing.generateFakeData({ accounts: 2, contacts: 2, opportunities: 2, activities: 4 }),
  });
  try {
    const proxyPort = await freePort();
    const proxy = await prism(['proxy', '--errors', '--port', String(proxyPort), document, fake.url], proxyPort);
    const credentials = { ...fake.fake.credentials, baseUrl: `http://127.0.0.1:${proxyPort}` };
    const proxied = await everyCall(sdk, credentials, 1, fake.fake.store);
    const violations = proxy.output().match(/violation/gi)?.length ?? 0;
    process.stdout.write(
      `Prism proxy in front of the fake: ${proxied.ok} calls succeeded, ${proxied.failed.length} failed, ${violations} violations\n`,
    );
    for (const failure of proxied.failed) failures.push(`Prism proxy: ${failure}`);
    if (violations) failures.push(`Prism proxy saw ${violations} violations:\n${proxy.output()}`);
  } finally {
    await fake.close();
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}

if (failures.length) {
  process.stderr.write(`check:openapi: ${failures.length} failure(s):\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write('check:openapi: every tool takes the document as it is\n');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Starts Prism and resolves once it answers on `port`; its output is kept for the checks. */
async function prism(args, port) {
  process.stdout.write(`$ prism ${args.join(' ')}\n`);
  const child = spawn(prismCli[0], [...prismCli.slice(1), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`prism exited ${child.exitCode}:\n${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (up) return { output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prism did not listen on ${port} within 60 s:\n${output}`);
}

/**
 * Every SDK method, `times` times each, through the packed SDK; with the fake's store, on records
 * that exist. The README's extraQuery and extraBody ride along: the document must accept them.
 */
async function everyCall({ CrmClient }, credentials, times, store) {
  const crm = new CrmClient({ ...credentials, maxRetries: 0 });
  const first = (table) => (store ? [...store[table].values()][0]?.id : undefined);
  const opportunity = first('opportunities') ?? 'opp_1';
  const account = first('accounts') ?? 'acc_1';
  const contact = first('contacts') ?? 'con_1';
  const grant = store ? [...store.grants.keys()][0] : 'grant_1';
  const calls = {
    'opportunities.get': () => crm.opportunities.get(opportunity),
    'opportunities.create': () => crm.opportunities.create({ name: 'Renewal', accountId: account, amount: 12000 }),
    'opportunities.update': () => crm.opportunities.update(opportunity, { probability: 60 }),
    'activities.list': () => crm.activities.list({ opportunityId: opportunity, limit: 5 }),
    'activities.create': () => crm.activities.create({ opportunityId: opportunity, type: 'call', subject: 'Kick-off' }),
    'accounts.create': () => crm.accounts.create({ name: 'Acme Ltd', status: 'prospect' }),
    'accounts.update': () => crm.accounts.update(account, { city: 'Lyon' }),
    'contacts.create': () => crm.contacts.create({ email: 'ada@example.com' }, { extraBody: { loyaltyTier: 'gold' } }),
    'contacts.update': () => crm.contacts.update(contact, { lastName: 'Lovelace' }),
    'contacts.list': () => crm.contacts.list({ limit: 100 }, { extraQuery: { updatedSince: '2026-11-01T00:00:00Z' } }),
    'grants.resolve': () => crm.grants.resolve(grant),
    'apiKey.status': () => crm.apiKey.status(),
    'apiKey.generate': () => crm.apiKey.generate(),
  };
  let ok = 0;
  const failed = [];
  for (const [name, call] of Object.entries(calls)) {
    for (let i = 0; i < times; i++) {
      try {
        await call();
        ok += 1;
      } catch (error) {
        failed.push(`${name}: ${error.name}: ${error.message}`);
      }
    }
  }
  return { ok, failed };
}
