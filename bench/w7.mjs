// W7: crm-integration-sdk/sync (issue 35).
//
// W7a, the initial load: 500 accounts, 1,000 contacts, 250 opportunities and 500 activities into
// the fake at 200/s, burst 20, answering after 20 ms, with throttle 'auto', by CrmSync on a SQLite
// journal, and by `crm sync apply` of the same records as CSV files (issue 36: a process, its
// files checked then streamed), beside W5-style plain creates of the same 2,250 records (each list at once with
// Promise.all, parents first, the ids kept in a Map), interleaved, a fresh fake in a process of its
// own (bench/w5-server.mjs) each time. The ideal is the bucket's pace: (2,250 - 20) / 200 = 11.15 s.
//
// W7b, an unchanged re-run of 100,000 records (20,000 accounts, 40,000 contacts, 20,000
// opportunities, 20,000 activities, from generators) whose SQLite journal is already filled: no
// request may be sent, and its time is compared with a loop that only hashes each record's JSON
// (sha1, as a hand-written job would). The journal is filled by a first run through a fetch that
// answers at once. The re-run goes in a process of its own (this file, W7B_CHILD=1), whose peak
// heap is sampled every 1,000 records.
import { execFile, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CrmClient } from '../dist/index.js';
import { CrmSync, sqliteJournal } from '../dist/sync.js';
import { median, sleep } from './measure.mjs';

const run = promisify(execFile);
const LATENCY_MS = 20;
const TENANT = { id: 'tenant_w7', key: 'w7-key' };
const RATE = { perSecond: 200, burst: 20 };
const W7A = { accounts: 500, contacts: 1000, opportunities: 250, activities: 500 };
const W7A_RECORDS = Object.values(W7A).reduce((a, b) => a + b, 0);
const IDEAL_S = (W7A_RECORDS - RATE.burst) / RATE.perSecond;
const W7B = { accounts: 20_000, contacts: 40_000, opportunities: 20_000, activities: 20_000 };

/** The source's records, built as they are read (W8 takes its slices of W7a's from here). */
export function* records(type, sizes, probe) {
  const n = sizes[type];
  for (let i = 0; i < n; i++) {
    if (probe && i % 1000 === 0) probe();
    if (type === 'accounts') yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail', city: 'Lyon' } };
    else if (type === 'contacts') {
      yield {
        key: `C${i}`,
        accountKey: `A${i % sizes.accounts}`,
        data: { email: `person${i}@w7.test`, firstName: `First${i}`, lastName: 'Bench' },
      };
    } else if (type === 'opportunities') {
      yield {
        key: `O${i}`,
        accountKey: `A${i % sizes.accounts}`,
        contactKey: `C${i % sizes.contacts}`,
        data: { name: `Deal ${i}`, amount: 1000 + i, stage: 'proposal' },
      };
    } else {
      yield {
        key: `E${i}`,
        opportunityKey: `O${i % sizes.opportunities}`,
        data: { type: 'note', subject: `Note ${i}`, activityDate: '2026-11-01T09:00:00.000Z' },
      };
    }
  }
}
const sourceOf = (sizes, probe) =>
  Object.fromEntries(Object.keys(sizes).map((type) => [type, records(type, sizes, probe)]));

const TYPES = ['accounts', 'contacts', 'opportunities', 'activities'];

/** W5-style: each list at once, parents first, the parents' ids in a Map. */
async function plainCreates(crm) {
  const ids = { accounts: new Map(), contacts: new Map(), opportunities: new Map() };
  const create = {
    accounts: (r) => crm.accounts.create(r.data),
    contacts: (r) => crm.contacts.create({ ...r.data, accountId: ids.accounts.get(r.accountKey) }),
    opportunities: (r) =>
      crm.opportunities.create({
        ...r.data,
        accountId: ids.accounts.get(r.accountKey),
        contactId: ids.contacts.get(r.contactKey),
      }),
    activities: (r) => crm.activities.create({ ...r.data, opportunityId: ids.opportunities.get(r.opportunityKey) }),
  };
  let failed = 0;
  for (const type of TYPES) {
    const settled = await Promise.allSettled(
      [...records(type, W7A)].map(async (r) => {
        const created = await create[type](r);
        ids[type]?.set(r.key, created.id);
      }),
    );
    failed += settled.filter((s) => s.status === 'rejected').length;
  }
  return { failed };
}

/** W7a's records as the CSV files an ERP would export, for `crm sync apply` (issue 36). */
const CSV_COLUMNS = {
  accounts: ['key', 'name', 'industry', 'city'],
  contacts: ['key', 'accountKey', 'email', 'firstName', 'lastName'],
  opportunities: ['key', 'accountKey', 'contactKey', 'name', 'amount', 'stage'],
  activities: ['key', 'opportunityKey', 'type', 'subject', 'activityDate'],
};

function writeCsvFiles(dir) {
  const files = {};
  for (const type of TYPES) {
    const columns = CSV_COLUMNS[type];
    const rows = [...records(type, W7A)].map((r) => columns.map((c) => String(r[c] ?? r.data[c] ?? '')).join(','));
    files[type] = join(dir, `${type}.csv`);
    writeFileSync(files[type], `${[columns.join(','), ...rows].join('\n')}\n`);
  }
  return files;
}

/** `crm sync apply` of the CSV files, in a process of its own, as a person runs it from a shell. */
async function cliLoad(url, dir, round, files) {
  const args = ['sync', 'apply', '--journal', join(dir, `w7a-cli-${round}.db`)];
  for (const type of TYPES) args.push(`--${type}`, files[type]);
  const env = { PATH: process.env.PATH, CRM_BASE_URL: url, CRM_TENANT_ID: TENANT.id, CRM_API_KEY: TENANT.key };
  const { stdout } = await run(
    process.execPath,
    [fileURLToPath(new URL('../dist/cli/crm.js', import.meta.url)), ...args],
    {
      env,
      maxBuffer: 64 * 2 ** 20,
    },
  ).catch((error) => error);
  const report = JSON.parse(stdout);
  return { failed: report.failed.length + report.inDoubt.length };
}

async function syncLoad(crm, dir, round) {
  const sync = new CrmSync(crm, { journal: sqliteJournal(join(dir, `w7a-${round}.db`)) });
  const report = await sync.run(sourceOf(W7A));
  return { failed: report.failed.length + report.inDoubt.length };
}

/** The fake in a child process, one fresh fake per run (bench/w5-server.mjs). */
function childServer() {
  const child = fork(fileURLToPath(new URL('./w5-server.mjs', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const gone = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const ask = (message) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      void gone.then((code) => reject(new Error(`bench/w5-server.mjs exited (${code})`)));
      child.send(message);
    });
  return {
    start: (options) => ask({ type: 'start', options }),
    stop: () => ask({ type: 'stop', tenants: [TENANT.id] }),
    close: () => {
      child.disconnect();
      return gone;
    },
  };
}

const say = (line) => process.stderr.write(`${line}\n`);

async function runW7a(record, runs) {
  const server = childServer();
  const dir = mkdtempSync(join(tmpdir(), 'crm-w7a-'));
  const files = writeCsvFiles(dir);
  const subjects = {
    "plain creates, throttle: 'auto'": (crm) => plainCreates(crm),
    "CrmSync, sqliteJournal, throttle: 'auto'": (crm, round) => syncLoad(crm, dir, round),
    'crm sync apply of CSV files (a process)': (_, round, url) => cliLoad(url, dir, round, files),
  };
  const samples = Object.fromEntries(Object.keys(subjects).map((name) => [name, []]));
  try {
    for (let round = 1; round <= runs; round++) {
      for (const [name, subject] of Object.entries(subjects)) {
        await sleep(1000);
        const { url } = await server.start({
          latencyMs: LATENCY_MS,
          rateLimit: RATE,
          seed: { tenants: [{ id: TENANT.id, apiKey: TENANT.key }] },
        });
        const crm = new CrmClient({ baseUrl: url, apiKey: TENANT.key, tenantId: TENANT.id, throttle: 'auto' });
        const t0 = performance.now();
        const { failed } = await subject(crm, round, url);
        const ms = performance.now() - t0;
        const seen = await server.stop();
        const t = seen.tenants[TENANT.id];
        samples[name].push(ms);
        say(
          `W7a round ${round}/${runs}, ${name}: ${(ms / 1000).toFixed(2)} s (${(ms / 1000 / IDEAL_S).toFixed(3)}x ideal), ${failed} failed, ${t.refused} of ${t.requests} requests answered 429`,
        );
      }
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const workload = `W7a initial load, 2,250 records at 200/s (ideal ${IDEAL_S.toFixed(2)} s)`;
  const plain = median(samples["plain creates, throttle: 'auto'"]);
  const synced = median(samples["CrmSync, sqliteJournal, throttle: 'auto'"]);
  record(workload, "plain creates, throttle: 'auto'", plain / 1000, 's', plain / 1000 / IDEAL_S, '');
  record(workload, "CrmSync, sqliteJournal, throttle: 'auto'", synced / 1000, 's', synced / 1000 / IDEAL_S, '<= 1.12x');
  record(workload, 'CrmSync over the plain creates', synced / plain, 'x', undefined, '<= 1.05x');
  const cli = median(samples['crm sync apply of CSV files (a process)']);
  record(workload, 'crm sync apply of CSV files (a process)', cli / 1000, 's', cli / 1000 / IDEAL_S, '');
  record(workload, 'crm sync apply over CrmSync in code', cli / synced, 'x', undefined, '<= 1.05x');
}

/** A fetch that answers every create at once, with an id: fills W7b's journal without a server. */
function instantFetch() {
  let next = 0;
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === 'POST' ? await request.json() : {};
    next += 1;
    return new Response(JSON.stringify({ success: true, data: { ...body, id: `id_${next}` } }), {
      status: 201,
      headers: { 'content-type': 'application/json' },
    });
  };
}

/** In the child: the re-run of a filled journal, its time, requests and peak heap. */
async function w7bChild(path) {
  let requests = 0;
  const crm = new CrmClient({
    baseUrl: 'https://crm.w7b.test',
    apiKey: TENANT.key,
    tenantId: TENANT.id,
    fetch: async () => {
      requests += 1;
      return new Response('{"success":false}', { status: 500 });
    },
  });
  globalThis.gc?.();
  let peak = process.memoryUsage().heapUsed;
  const probe = () => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const sync = new CrmSync(crm, { journal: sqliteJournal(path) });
  const t0 = performance.now();
  const report = await sync.run(sourceOf(W7B, probe));
  const ms = performance.now() - t0;
  probe();

  // The same records' JSON, hashed, and nothing else.
  const h0 = performance.now();
  let digest = 0;
  for (const type of TYPES) {
    for (const r of records(type, W7B)) {
      digest ^= createHash('sha1').update(JSON.stringify(r)).digest().readUInt32LE(0);
    }
  }
  const hashMs = performance.now() - h0;
  process.send({ ms, hashMs, requests, unchanged: report.unchanged, peak, digest });
}

async function runW7b(record, runs) {
  const dir = mkdtempSync(join(tmpdir(), 'crm-w7b-'));
  const path = join(dir, 'w7b.db');
  try {
    const filler = new CrmClient({
      baseUrl: 'https://crm.w7b.test',
      apiKey: TENANT.key,
      tenantId: TENANT.id,
      fetch: instantFetch(),
    });
    const f0 = performance.now();
    const filled = await new CrmSync(filler, { journal: sqliteJournal(path) }).run(sourceOf(W7B), { concurrency: 64 });
    say(`W7b: journal filled with ${filled.created} records in ${((performance.now() - f0) / 1000).toFixed(1)} s`);
    const samples = [];
    for (let round = 1; round <= runs; round++) {
      const child = fork(fileURLToPath(import.meta.url), [], {
        env: { ...process.env, W7B_CHILD: path },
        execArgv: ['--expose-gc'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const result = await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`W7b child exited (${code})`)));
      });
      child.kill();
      samples.push(result);
      say(
        `W7b round ${round}/${runs}: ${(result.ms / 1000).toFixed(3)} s, ${result.requests} requests, ${result.unchanged} unchanged; hash-only ${(result.hashMs / 1000).toFixed(3)} s (${(result.ms / result.hashMs).toFixed(2)}x); peak heap ${(result.peak / 2 ** 20).toFixed(1)} MiB`,
      );
    }
    const workload = 'W7b unchanged re-run, 100,000 records, filled SQLite journal';
    const ms = median(samples.map((s) => s.ms));
    const hashMs = median(samples.map((s) => s.hashMs));
    record(workload, 'CrmSync.run()', ms / 1000, 's', ms / hashMs, '<= 5x hash-only');
    record(workload, 'a loop hashing each record (sha1 of its JSON)', hashMs / 1000, 's', undefined, '');
    record(workload, 'requests sent', Math.max(...samples.map((s) => s.requests)), 'requests', undefined, '0');
    record(workload, 'peak heap', Math.max(...samples.map((s) => s.peak)) / 2 ** 20, 'MiB', undefined, '<= 150 MiB');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs W7a and W7b `runs` times each and records their rows (bench/run.mjs's `record`). */
export async function runW7(record, runs) {
  await runW7a(record, runs);
  await runW7b(record, runs);
}

if (process.env.W7B_CHILD) {
  await w7bChild(process.env.W7B_CHILD);
}
