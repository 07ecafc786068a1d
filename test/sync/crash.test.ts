import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournalEntry, SyncType } from '../../src/sync/journal';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import type { FakeEndpointName } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';
import { seededRandom } from '../support/seeded-random';

/*
 * kill -9 at random moments, many times, a process syncing into the fake over real sockets, with
 * 5% of creates stored and then their connection dropped; then re-run it until it finishes, and
 * check the outcome against the fake's store. CRASH_KILLS (default 12; the issue asks 50 or more
 * once) and CRASH_RECORDS (default 30 accounts, so 180 records) size it. A kill lands either after
 * a random number of requests since the process started (in flight, by construction) or after a
 * random time (startup, the journal's writes); nothing asserted depends on when. Between runs, the
 * accounts and opportunities left in doubt are resolved by hand (but after the last 3 kills).
 */
const KILLS = Number(process.env.CRASH_KILLS ?? 12);
const RECORDS = Number(process.env.CRASH_RECORDS ?? 30);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);

const DIST = fileURLToPath(new URL('../../dist/sync.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./crash-child.mjs', import.meta.url));

let dir: string | undefined;
let stopWatching: (() => void) | undefined;
afterEach(() => {
  stopWatching?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const CREATES: Record<string, FakeEndpointName> = {
  accounts: 'createAccount',
  contacts: 'createContact',
  opportunities: 'createOpportunity',
  activities: 'createActivity',
};

interface ChildReport {
  failed: { type: SyncType; key: string; message: string }[];
  inDoubt: { type: SyncType; key: string }[];
  skipped: { type: SyncType; key: string; reason: string }[];
}

test.skipIf(!existsSync(DIST))(
  `a sync killed -9 ${KILLS} times, with 5% of creates stored then dropped, never duplicates and accounts for every record`,
  { timeout: 600_000 },
  async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-crash-'));
    const journalPath = join(dir, 'crash.sync.db');
    const server = await startedServer({ latencyMs: 2 });
    const { fake } = server;
    const rand = seededRandom(SEED);

    let onRequest: (() => void) | undefined;
    let handling = 0;
    const handle = fake.handle.bind(fake);
    fake.handle = (request: Request) => {
      const path = new URL(request.url).pathname.split('/').pop() ?? '';
      const endpoint = request.method === 'POST' ? CREATES[path] : undefined;
      if (endpoint && rand() < 0.05) fake.failNext({ endpoint, applied: true, drop: true });
      onRequest?.();
      handling++;
      return handle(request).finally(() => {
        handling--;
      });
    };
    // A killed child's requests can still be in the server's socket, unread, when the child is
    // reported closed: the store is looked at by hand only once every connection the child opened
    // is closed and every request read from them handled (under load, an account the operator
    // marked absent was then created by the dead child's last request, and again by the next run).
    let childRunning = false;
    const childSockets: Socket[] = [];
    const onSocket = (message: unknown) => {
      if (childRunning) childSockets.push((message as { socket: Socket }).socket);
    };
    subscribe('net.server.socket', onSocket);
    stopWatching = () => unsubscribe('net.server.socket', onSocket);
    const childSettled = async () => {
      await Promise.all(
        childSockets
          .splice(0)
          .map((socket) => (socket.closed ? undefined : new Promise((closed) => socket.once('close', closed)))),
      );
      while (handling > 0) await new Promise((turn) => setTimeout(turn, 10));
    };

    const run = (killAfter: { requests: number } | { ms: number } | undefined) =>
      new Promise<{ killed: boolean; code: number | null; stdout: string; stderr: string }>((resolve) => {
        childRunning = true;
        const child = spawn(process.execPath, [CHILD], {
          env: {
            ...process.env,
            CRM_BASE_URL: server.url,
            CRM_API_KEY: String(fake.credentials.apiKey),
            CRM_TENANT_ID: fake.tenantId,
            CRASH_JOURNAL: journalPath,
            CRASH_RECORDS: String(RECORDS),
            CRASH_LEASE_MS: '500',
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk;
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
        });
        let timer: NodeJS.Timeout | undefined;
        if (killAfter && 'requests' in killAfter) {
          let seen = 0;
          onRequest = () => {
            if (++seen === killAfter.requests) child.kill('SIGKILL');
          };
        } else if (killAfter) {
          timer = setTimeout(() => child.kill('SIGKILL'), killAfter.ms);
        }
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          onRequest = undefined;
          childRunning = false;
          childSettled().then(() => resolve({ killed: signal === 'SIGKILL', code, stdout, stderr }));
        });
      });

    // The operator's part: accounts and opportunities in doubt are looked up by hand (here, in the
    // store by name) and resolved, as README's nightly job says, so that their children go too and
    // every type meets the kills; those of the last kills are left in doubt, to be listed.
    const operator = new CrmSync(new CrmClient({ ...fake.credentials, baseUrl: server.url }), {
      journal: sqliteJournal(journalPath),
    });
    const resolveByHand = async () => {
      const journal = sqliteJournal(journalPath);
      await journal.open();
      const pending = await journal.pending(fake.tenantId);
      await journal.close();
      for (const { type, key } of pending) {
        if (type !== 'accounts' && type !== 'opportunities') continue;
        const name = type === 'accounts' ? `Account ${key.slice(1)}` : `Deal ${key.slice(1)}`;
        const found = [...fake.store[type].values()].find((record) => record.name === name);
        await operator.resolve(type, key, found ? found.id : null);
        resolved++;
      }
    };

    let kills = 0;
    let attempts = 0;
    let resolved = 0;
    while (kills < KILLS && attempts < KILLS * 4) {
      attempts++;
      const moment = rand() < 0.7 ? { requests: 1 + Math.floor(rand() * 40) } : { ms: Math.floor(rand() * 600) };
      const outcome = await run(moment);
      if (outcome.killed) kills++;
      else expect(outcome, outcome.stderr).toMatchObject({ code: 0 });
      if (kills < KILLS - 3) await resolveByHand();
    }
    let final: ChildReport | undefined;
    for (let i = 0; i < 5 && !final; i++) {
      const outcome = await run(undefined);
      expect(outcome, outcome.stderr).toMatchObject({ code: 0, killed: false });
      final = JSON.parse(outcome.stdout) as ChildReport;
    }
    if (!final) throw new Error('the sync never finished');
    // How many kills land before the sync is done depends on the machine's speed (a run that ends before
    // its kill moment is not killed, and a finished sync leaves nothing to kill): the claim is about
    // the outcomes below, after at least one kill.
    expect(kills, `seed ${SEED}`).toBeGreaterThan(0);

    const store = fake.store;
    const tenant = fake.tenantId;
    // No record is in the CRM twice: accounts and opportunities in doubt are never re-sent, contacts and activities are found.
    const twice = (names: string[]) => names.filter((name, i) => names.indexOf(name) !== i);
    expect(twice([...store.accounts.values()].map((a) => String(a.name))), `seed ${SEED}`).toEqual([]);
    expect(twice([...store.contacts.values()].map((c) => String(c.email))), `seed ${SEED}`).toEqual([]);
    expect(twice([...store.opportunities.values()].map((o) => String(o.name))), `seed ${SEED}`).toEqual([]);
    expect(twice([...store.activities.values()].map((a) => `${a.relatedToId} ${a.subject}`)), `seed ${SEED}`).toEqual(
      [],
    );

    const journal = sqliteJournal(journalPath);
    await journal.open();
    try {
      const listed = (list: { type: SyncType; key: string }[]) => new Set(list.map((r) => `${r.type}/${r.key}`));
      const failed = listed(final.failed);
      const inDoubt = listed(final.inDoubt);
      const skipped = listed(final.skipped);
      const tables = {
        accounts: store.accounts,
        contacts: store.contacts,
        opportunities: store.opportunities,
        activities: store.activities,
      };
      const expected: Record<SyncType, (i: number) => Record<string, unknown>> = {
        accounts: (i) => ({ name: `Account ${i}` }),
        contacts: (i) => ({ email: `person${i}@example.test` }),
        opportunities: (i) => ({ name: `Deal ${i}` }),
        activities: (i) => ({ subject: `Note ${i}` }),
      };
      const ids = new Set<string>();
      const counts = { synced: 0, inDoubt: 0, failed: 0, skipped: 0 };
      for (const [type, prefix, count] of [
        ['accounts', 'A', RECORDS],
        ['contacts', 'C', 2 * RECORDS],
        ['opportunities', 'O', RECORDS],
        ['activities', 'E', 2 * RECORDS],
      ] as const) {
        const keys = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
        const entries = await journal.get(tenant, type, keys);
        keys.forEach((key, i) => {
          const entry = entries.get(key) as SyncJournalEntry | undefined;
          const id = `${type}/${key}`;
          if (entry?.state === 'synced') {
            // The journal agrees with the store: the record it maps is there, is this one, and is no other key's.
            const record = tables[type].get(String(entry.crmId));
            expect({ id, record }).toMatchObject({ id, record: { tenantId: tenant, ...expected[type](i) } });
            expect(ids.has(String(entry.crmId)), id).toBe(false);
            ids.add(String(entry.crmId));
            counts.synced++;
          } else if (entry?.state === 'sending' || entry?.state === 'inDoubt') {
            // Every record in doubt is listed (accounts and opportunities are the ones left so).
            expect(inDoubt.has(id), `${id} in doubt but not listed (seed ${SEED})`).toBe(true);
            counts.inDoubt++;
          } else {
            expect(failed.has(id) || skipped.has(id), `${id} neither in the CRM nor listed (seed ${SEED})`).toBe(true);
            counts[failed.has(id) ? 'failed' : 'skipped']++;
          }
        });
      }
      // Every record listed in doubt is an account or an opportunity: contacts and activities were found or created again.
      expect(final.inDoubt.filter((r) => r.type === 'contacts' || r.type === 'activities')).toEqual([]);
      // Nothing in the CRM that the journal does not map: a create whose answer was lost was adopted, or is in doubt.
      const unmapped = Object.values(tables).reduce((sum, table) => sum + table.size, 0) - ids.size;
      expect(unmapped).toBeLessThanOrEqual(counts.inDoubt);
      console.info(
        `crash test: ${kills} kills in ${attempts} runs (seed ${SEED}), ${RECORDS * 6} records: ${counts.synced} synced, ${counts.inDoubt} in doubt, ${counts.skipped} skipped behind them, ${counts.failed} failed; ${resolved} resolved by hand between runs; ${fake.requests.length} requests`,
      );
    } finally {
      await journal.close();
    }
  },
);
