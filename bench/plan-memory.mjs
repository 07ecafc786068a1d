// The memory of a plan (issue 45, item 9), each figure from a fresh process:
//   sdk      sync.plan() over an async generator of 50,000 accounts of 4 KiB of text, no journal
//            entries: peak heap growth (heapUsed sampled every 100 records), entries kept and
//            handed out (onEntry), and whether it completes in a 256 MiB heap;
//   csv      crm sync plan of a 200,000-row CSV (~35 MB): peak RSS, NDJSON (piped) and on a terminal;
//   million  crm sync plan of a 1,000,000-row CSV: peak RSS, NDJSON (piped) and on a terminal.
// Not part of npm run bench (minutes, and RESULTS.md does not carry it).
//   npm run build && node bench/plan-memory.mjs [sdk|csv|million ...]
// CRM_DIST=dir measures another build (the one before a change); PLAN_HEAP=160 runs crm with
// --max-old-space-size=160, to show the heap a plan needs rather than what V8 lets it grow to.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = resolve(process.env.CRM_DIST ?? fileURLToPath(new URL('../dist', import.meta.url)));
const MiB = 2 ** 20;

if (process.argv[2] === 'sdk-child') {
  // In the child: one plan, its peak heap growth printed as JSON.
  const [, , , records, handOut] = process.argv;
  const { CrmClient } = await import(join(dist, 'index.js'));
  const { CrmSync, memoryJournal } = await import(join(dist, 'sync.js'));
  const crm = new CrmClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'bench-key', tenantId: 'tenant_bench' });
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  globalThis.gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  async function* accounts() {
    for (let i = 0; i < Number(records); i++) {
      if (i % 100 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
      // 4 KiB of text of its own per record, as an export's notes are.
      const text = `${i}:${'lorem ipsum dolor sit amet '.repeat(160)}`.slice(0, 4096);
      yield { key: `ERP-${i}`, data: { name: `Account ${i}`, industry: 'Retail', description: text } };
    }
  }
  let handed = 0;
  const plan = await sync.plan(
    { accounts: accounts() },
    handOut === 'onEntry'
      ? {
          onEntry: () => {
            handed++;
          },
        }
      : {},
  );
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  process.stdout.write(
    `${JSON.stringify({ create: plan.counts.create, entries: plan.entries.length + handed, peakMiB: (peak - base) / MiB })}\n`,
  );
  process.exit(0);
}

/** Runs a command to its end; its stdout counted, not kept. */
function run(command, args, env = {}) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let tail = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
      tail = (tail + chunk.toString()).slice(-300);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, bytes, tail, stderr }));
  });
}

async function sdk() {
  for (const handOut of ['kept', 'onEntry']) {
    const child = fileURLToPath(import.meta.url);
    const args = ['--expose-gc', '--max-old-space-size=256', child, 'sdk-child', '50000', handOut];
    const { code, tail, stderr } = await run(process.execPath, args);
    const result = code === 0 ? JSON.parse(tail.trim().split('\n').at(-1)) : { code, error: stderr.slice(-300) };
    console.log(`sdk 50,000 x 4 KiB, entries ${handOut}, --max-old-space-size=256:`, JSON.stringify(result));
  }
}

/** A CSV of `rows` accounts, ~175 bytes a row (a 200,000-row file is ~35 MB). */
async function csv(dir, rows) {
  const path = join(dir, `accounts-${rows}.csv`);
  const out = createWriteStream(path);
  out.write('key,name,industry,phone,website,city,description\n');
  for (let i = 0; i < rows; i++) {
    const line = `ERP-${String(i).padStart(7, '0')},Account ${i} Holdings Ltd,Manufacturing,+44 20 7946 ${String(i % 10000).padStart(4, '0')},https://account-${i}.example.com,London,Customer since ${2000 + (i % 25)}: ${'x'.repeat(60 + (i % 7))}\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  return path;
}

/** crm sync plan of `file`, piped (NDJSON) or on a terminal (script(1)'s pty): its peak RSS. */
async function cliPlan(dir, file, rendering) {
  const rssFile = join(dir, `rss-${rendering}`);
  // Read in the crm process itself as it exits: its own peak, not script(1)'s.
  const preload = `data:text/javascript,process.on('exit',()=>require('node:fs').writeFileSync(process.env.PLAN_RSS_FILE,String(process.resourceUsage().maxRSS*1024)))`;
  const crm = [
    process.execPath,
    '--import',
    preload.replace('require(', 'process.getBuiltinModule('),
    join(dist, 'cli', 'crm.js'),
    'sync',
    'plan',
    '--journal',
    join(dir, `journal-${rendering}.db`),
    '--accounts',
    file,
  ];
  const env = {
    CRM_TENANT_ID: 'tenant_bench',
    PLAN_RSS_FILE: rssFile,
    ...(process.env.PLAN_HEAP && { NODE_OPTIONS: `--max-old-space-size=${process.env.PLAN_HEAP}` }),
  };
  const quoted = crm.map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  const result =
    rendering === 'ndjson'
      ? await run(crm[0], crm.slice(1), env)
      : await run('script', ['-qec', `stty cols 200; ${quoted}`, '/dev/null'], env);
  const rss = Number(readFileSync(rssFile, 'utf8'));
  const summary = result.tail.trim().split(/\r?\n/).at(-1);
  return { code: result.code, peakRssMiB: Math.round((rss / MiB) * 10) / 10, stdoutMiB: result.bytes / MiB, summary };
}

async function cli(rows) {
  const dir = mkdtempSync(join(tmpdir(), 'plan-memory-'));
  try {
    const file = await csv(dir, rows);
    for (const rendering of ['ndjson', 'terminal']) {
      const figures = await cliPlan(dir, file, rendering);
      console.log(`crm sync plan, ${rows.toLocaleString('en')} rows, ${rendering}:`, JSON.stringify(figures));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const which = process.argv.slice(2);
const all = which.length === 0;
if (all || which.includes('sdk')) await sdk();
if (all || which.includes('csv')) await cli(200_000);
if (all || which.includes('million')) await cli(1_000_000);
