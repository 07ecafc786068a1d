// Issue 46, item 1: how many records a kill -9 leaves in doubt, against the requests truly in
// flight at the kill. A fake at 100 requests/s (burst 10), answering after 20 ms, over real
// sockets; a process (bench/intent-kills-child.mjs) syncs 150 accounts with throttle 'auto'
// (THROTTLE=off: not paced), concurrency 8, on a SQLite journal, and is killed -9 once a random number of
// its creates (1 to 100) have reached the server, after a random 0 to 15 ms more: a random
// moment of the accounts phase. Each kill is a trial of its own (a fresh fake and journal).
//
// Per kill: the accounts the journal holds in doubt, against the creates the fake received
// and had not answered at the kill (its own log of each create's arrival and answer); the accounts in
// doubt that never reached the fake; every account the fake created mapped or in doubt. Then the
// ones in doubt are resolved by hand (the fake's store, by name) and the sync run to its end: no
// account twice. `node bench/intent-kills.mjs` prints the figures (KILLS, default 20; SEED).
import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrmClient } from '../dist/index.js';
import { startFakeCrmServer } from '../dist/node/testing.js';
import { CrmSync, sqliteJournal } from '../dist/sync.js';

const CHILD = fileURLToPath(new URL('./intent-kills-child.mjs', import.meta.url));

/** A small seeded generator (mulberry32), so that a run can be repeated with its seed. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One sync process, killed after `killAfter` creates reached the fake and `delayMs` more (or never). */
function runChild(server, journalPath, records, throttle, watch, killAfter, delayMs) {
  return new Promise((resolve) => {
    const { fake } = server;
    watch.running = true;
    const child = spawn(process.execPath, [CHILD], {
      env: {
        ...process.env,
        CRM_BASE_URL: server.url,
        CRM_API_KEY: String(fake.credentials.apiKey),
        CRM_TENANT_ID: fake.tenantId,
        KILLS_JOURNAL: journalPath,
        KILLS_RECORDS: String(records),
        KILLS_THROTTLE: throttle,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    let killedAt;
    let timer;
    watch.onCreate = (count) => {
      if (killAfter === undefined || count !== killAfter) return;
      timer = setTimeout(() => {
        killedAt = performance.now();
        child.kill('SIGKILL');
      }, delayMs);
    };
    child.on('close', async (code, signal) => {
      clearTimeout(timer);
      watch.onCreate = undefined;
      watch.running = false;
      await watch.settled();
      resolve({ killed: signal === 'SIGKILL', killedAt, code, stdout, stderr });
    });
  });
}

/**
 * `kills` trials; resolves to one row per kill: in doubt, in flight at the kill, in doubt that
 * never reached the fake, accounts created but neither mapped nor in doubt, duplicates at the end.
 */
export async function killTrials({ kills = 20, records = 150, throttle = 'auto', seed = Date.now() % 100_000 } = {}) {
  const rand = random(seed);
  const rows = [];
  let tries = 0;
  while (rows.length < kills && tries++ < kills * 3) {
    const dir = mkdtempSync(join(tmpdir(), 'crm-intent-kills-'));
    const journalPath = join(dir, 'kills.sync.db');
    const server = await startFakeCrmServer({ rateLimit: { perSecond: 100, burst: 10 }, latencyMs: 20 });
    const { fake } = server;
    // The fake's own log of each create: when it arrived, when its answer was ready.
    const creates = [];
    let handling = 0;
    const sockets = [];
    const watch = {
      running: false,
      onCreate: undefined,
      async settled() {
        // A killed child's requests may still be unread in the server's sockets: looked at once all are handled.
        await Promise.all(
          sockets.splice(0).map((s) => (s.closed ? undefined : new Promise((closed) => s.once('close', closed)))),
        );
        while (handling > 0) await new Promise((turn) => setTimeout(turn, 10));
      },
    };
    const onSocket = ({ socket }) => {
      if (watch.running) sockets.push(socket);
    };
    subscribe('net.server.socket', onSocket);
    const handle = fake.handle.bind(fake);
    fake.handle = (request) => {
      const isCreate = request.method === 'POST' && new URL(request.url).pathname.endsWith('/accounts');
      const entry = isCreate ? { received: performance.now(), answered: undefined, status: 0 } : undefined;
      if (entry) {
        creates.push(entry);
        request
          .clone()
          .json()
          .then(
            (body) => {
              entry.name = body.name;
            },
            () => {},
          );
      }
      handling++;
      if (entry) watch.onCreate?.(creates.length);
      return handle(request)
        .then((response) => {
          if (entry) {
            entry.answered = performance.now();
            entry.status = response.status;
          }
          return response;
        })
        .finally(() => {
          handling--;
        });
    };
    try {
      const killAfter = 1 + Math.floor(rand() * 100);
      const delayMs = Math.floor(rand() * 16);
      const killed = await runChild(server, journalPath, records, throttle, watch, killAfter, delayMs);
      if (!killed.killed) continue;
      const at = killed.killedAt;
      // Creates on their way at the kill: received by the fake (one received after the kill was
      // sent before it), their answer not heard by the process (it tells each one it hears).
      const heard = new Map();
      for (const line of killed.stderr.split('\n')) {
        if (!line.startsWith('read ')) continue;
        const name = JSON.parse(line.slice(5));
        heard.set(name, (heard.get(name) ?? 0) + 1);
      }
      const received = new Map();
      for (const c of creates) received.set(c.name, (received.get(c.name) ?? 0) + 1);
      let inFlight = 0;
      for (const [name, count] of received) inFlight += Math.max(0, count - (heard.get(name) ?? 0));
      // The fake's own view: its answer not ready at the kill.
      const unanswered = creates.filter((c) => c.answered === undefined || c.answered > at).length;
      const journal = sqliteJournal(journalPath);
      await journal.open();
      const tenant = fake.tenantId;
      const pending = (await journal.pending(tenant)).filter((e) => e.type === 'accounts');
      const byName = new Map([...fake.store.accounts.values()].map((a) => [String(a.name), a.id]));
      const keys = Array.from({ length: records }, (_, i) => `A${i}`);
      const entries = await journal.get(tenant, 'accounts', keys);
      await journal.close();
      const pendingKeys = new Set(pending.map((e) => e.key));
      // In doubt though the fake never received it: its intent written, it had not left.
      const neverReached = pending.filter((e) => !received.has(`Account ${e.key.slice(1)}`)).length;

      // In doubt though the process had heard its create's answer: its outcome not yet written.
      const answered = pending.filter((e) => {
        const name = `Account ${e.key.slice(1)}`;
        return (heard.get(name) ?? 0) > 0 && (heard.get(name) ?? 0) >= (received.get(name) ?? 0);
      }).length;
      let unaccounted = 0;
      for (const [name, id] of byName) {
        const key = `A${name.split(' ')[1]}`;
        const entry = entries.get(key);
        if (!(entry?.state === 'synced' && entry.crmId === id) && !pendingKeys.has(key)) unaccounted++;
      }
      // The operator's part, then the sync to its end.
      const operator = new CrmSync(new CrmClient({ ...fake.credentials, baseUrl: server.url }), {
        journal: sqliteJournal(journalPath),
      });
      for (const { key } of pending)
        await operator.resolve('accounts', key, byName.get(`Account ${key.slice(1)}`) ?? null);
      const last = await runChild(server, journalPath, records, throttle, watch, undefined, 0);
      if (last.code !== 0) throw new Error(`the sync after the kill failed: ${last.stderr.slice(-2000)}`);
      const names = [...fake.store.accounts.values()].map((a) => String(a.name));
      rows.push({
        killAfter,
        inDoubt: pending.length,
        inFlight,
        unanswered,
        neverReached,
        answered,
        unaccounted,
        duplicates: names.length - new Set(names).size,
        missing: records - new Set(names).size,
      });
    } finally {
      unsubscribe('net.server.socket', onSocket);
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { seed, rows };
}

/** The figures of the trials: per kill on average, and the worst excess of in doubt over in flight. */
export function summary(rows) {
  const sum = (f) => rows.reduce((a, r) => a + f(r), 0);
  return {
    kills: rows.length,
    inDoubtPerKill: sum((r) => r.inDoubt) / rows.length,
    inFlightPerKill: sum((r) => r.inFlight) / rows.length,
    neverReachedPerKill: sum((r) => r.neverReached) / rows.length,
    answeredPerKill: sum((r) => r.answered) / rows.length,
    worstOverInFlight: Math.max(...rows.map((r) => r.inDoubt - r.inFlight)),
    unaccounted: sum((r) => r.unaccounted),
    duplicates: sum((r) => r.duplicates),
    missing: sum((r) => r.missing),
  };
}

/** W9 in bench/RESULTS.md: `kills` kills, as `record` (bench/run.mjs) takes its rows. */
export async function runKills(record, kills) {
  const { rows } = await killTrials({ kills, seed: 46 });
  const s = summary(rows);
  const workload = `W9 kill -9 in the accounts phase, 100/s, 20 ms, concurrency 8 (${s.kills} kills)`;
  const log = (subject, value, unit, target) => record(workload, subject, value, unit, undefined, target);
  log('accounts in doubt per kill', s.inDoubtPerKill, 'records', '<= 4');
  log('creates in flight at the kill (the fake received, the process never heard back)', s.inFlightPerKill, 'requests');
  log('in doubt over in flight, per kill', s.inDoubtPerKill - s.inFlightPerKill, 'records', '<= 1');
  log('in doubt over in flight, the worst kill', s.worstOverInFlight, 'records', '<= 1');
  log('in doubt, never received by the fake, per kill', s.neverReachedPerKill, 'records');
  log('accounts made, neither mapped nor in doubt', s.unaccounted, 'records', '0');
  log('duplicates after settling and a last run', s.duplicates, 'records', '0');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { seed, rows } = await killTrials({
    kills: Number(process.env.KILLS ?? 20),
    throttle: process.env.THROTTLE ?? 'auto',
    seed: process.env.SEED === undefined ? undefined : Number(process.env.SEED),
  });
  for (const row of rows) console.log(JSON.stringify(row));
  console.log(JSON.stringify({ seed, ...summary(rows) }));
}
