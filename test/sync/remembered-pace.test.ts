import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { CrmClient } from '../../src/index';
import { paceMemoryOf } from '../../src/internal/waiting/pace-memory';
import { CrmSync, memoryJournal, type SyncJournal, type SyncJournalPace, sqliteJournal } from '../../src/sync/index';
import { keyFingerprint, recallPace } from '../../src/sync/remembered-pace';
import type { FakeCrmCore } from '../../src/testing/index';
import { throughMsw } from '../support/fake-harness';
import { settle } from '../support/paced';

/*
 * The pace remembered in the sync journal between runs (issue 48), for a client that paces alone
 * (throttle: 'auto', no store): run 1 learns the rate, a day passes, and run 2, in a new process
 * (a new client, the journal opened anew), starts at it. The fake's bucket and the pacer run on
 * the fake clock; what is asserted is what the fake received and refused.
 */

const TENANT = 'tenant_nightly';
const KEY = 'sk_nightly_5d1e2f3a4b5c6d7e8f9a0b1c';
const DAY_MS = 24 * 3_600_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'remembered-pace-'));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

async function fakeAt(perSecond: number, burst: number): Promise<{ fake: FakeCrmCore; baseUrl: string }> {
  return throughMsw({ seed: { tenants: [{ id: TENANT, apiKey: KEY, rateLimit: { perSecond, burst } }] } });
}

/** A pace of KEY kept in `journal` for `baseUrl`, as a run a moment ago would have left it; `change` over it. */
function remember(journal: SyncJournal, baseUrl: string, change: Partial<SyncJournalPace> = {}): void {
  journal.keepPace?.(TENANT, {
    key: keyFingerprint(KEY),
    baseUrl: baseUrl.replace(/\/+$/, ''),
    rate: 200,
    ceiling: 200,
    quietMs: 30_000,
    refusals: 1,
    learnedAt: Date.now(),
    usedAt: Date.now(),
    ...change,
  });
}

/** `n` new accounts (keys from `from`) synced by a new client (a new process) on `journal`: what the fake saw of them (firstSecond: within a second of the first). */
async function night(
  fake: FakeCrmCore,
  baseUrl: string,
  journal: SyncJournal,
  from: number,
  n: number,
  options: { rememberPaceMs?: number } = {},
) {
  const before = fake.requests.length;
  const crm = new CrmClient({ baseUrl, apiKey: KEY, tenantId: TENANT, throttle: 'auto', maxRetries: 10 });
  const accounts = Array.from({ length: n }, (_, i) => ({
    key: `A${from + i}`,
    data: { name: `Account ${from + i}` },
  }));
  const report = await settle(new CrmSync(crm, { journal, settleMs: 0, ...options }).run({ accounts }));
  const seen = fake.requests.slice(before).filter((request) => request.method === 'POST');
  // From the first request's arrival: a file journal's work before it moves the fake clock on.
  const started = seen[0]?.receivedAt ?? 0;
  return {
    created: report.created,
    refused: seen.filter((request) => request.status === 429).length,
    firstSecond: seen.filter((request) => request.receivedAt - started < 1000).length,
  };
}

describe('a pace remembered in the sync journal', () => {
  test('run 2, a day later in a new process on the same SQLite file, sends at the 200/s run 1 learned, and is refused nothing', async () => {
    const { fake, baseUrl } = await fakeAt(200, 20);
    const path = join(dir, 'nightly.db');

    const first = await night(fake, baseUrl, sqliteJournal(path), 0, 600);
    await vi.advanceTimersByTimeAsync(DAY_MS);
    const second = await night(fake, baseUrl, sqliteJournal(path), 600, 600);

    expect(first.created).toBe(600);
    expect(first.refused).toBeGreaterThan(0);
    expect(second.created).toBe(600);
    expect(second.refused).toBe(0);
    expect(second.firstSecond).toBeGreaterThanOrEqual(180);
    expect(first.firstSecond).toBeLessThan(180);
    // The file names the key by its fingerprint only.
    const bytes = readFileSync(path);
    expect(bytes.includes(KEY)).toBe(false);
    expect(bytes.includes(KEY.slice(0, 12))).toBe(false);
  }, 120_000);

  test('with memoryJournal() the same: the pace is kept per key fingerprint and base URL', async () => {
    const { fake, baseUrl } = await fakeAt(200, 20);
    const journal = memoryJournal();

    await night(fake, baseUrl, journal, 0, 600);
    await vi.advanceTimersByTimeAsync(DAY_MS);
    const second = await night(fake, baseUrl, journal, 600, 600);

    expect(second.refused).toBe(0);
    const [pace, ...others] = await (journal.paces?.(TENANT) ?? []);
    expect(others).toEqual([]);
    expect(pace).toMatchObject({ key: keyFingerprint(KEY), baseUrl: baseUrl.replace(/\/+$/, '') });
    // The refusals of run 1 (one or two phases ramping up), and none since.
    expect(pace?.refusals).toBeGreaterThanOrEqual(1);
    expect(pace?.key).toMatch(/^[0-9a-f]{32}$/);
    expect(pace?.rate).toBeGreaterThan(180);
    expect(pace?.rate).toBeLessThan(220);
  }, 120_000);

  test('rememberPaceMs: 0 remembers nothing: run 2 starts cold', async () => {
    const { fake, baseUrl } = await fakeAt(200, 20);
    const journal = memoryJournal();

    await night(fake, baseUrl, journal, 0, 600, { rememberPaceMs: 0 });
    await vi.advanceTimersByTimeAsync(DAY_MS);
    const second = await night(fake, baseUrl, journal, 600, 600, { rememberPaceMs: 0 });

    expect(second.refused).toBeGreaterThan(0);
    expect(second.firstSecond).toBeLessThan(180);
  }, 120_000);

  test.each([
    ['another key (the tenant rotated it)', { key: keyFingerprint('sk_rotated_away_00000000') }],
    ['another base URL', { baseUrl: 'https://sandbox.crm.test' }],
    ['a week and a day ago', { usedAt: -8 * DAY_MS }],
    ['a rate no server could set', { rate: 1e-9 }],
    // A journal of one's own over a driver that reads NUMERIC back as text: not guessed at.
    ['a rate its journal gave back as text', { rate: '200' as unknown as number }],
  ])(
    'a pace remembered for %s is not used: the run starts cold',
    async (_, change) => {
      const { fake, baseUrl } = await fakeAt(200, 20);
      const journal = memoryJournal();
      const { usedAt = 0, ...rest } = change as { usedAt?: number };
      remember(journal, baseUrl, { learnedAt: Date.now() + usedAt, usedAt: Date.now() + usedAt, ...rest });

      const run = await night(fake, baseUrl, journal, 0, 600);

      expect(run.refused).toBeGreaterThan(0);
      expect(run.firstSecond).toBeLessThan(180);
    },
    120_000,
  );

  test('a journal whose paces fail to read or to keep (or answer garbage) costs the run nothing: it starts cold and ends as usual', async () => {
    const { fake, baseUrl } = await fakeAt(200, 20);
    const inner = memoryJournal();
    /** `inner`, its paces replaced by `paces`. */
    const over = (paces: Pick<SyncJournal, 'paces' | 'keepPace'>): SyncJournal =>
      new Proxy(inner, {
        get: (target, name) => {
          if (name === 'paces' || name === 'keepPace') return paces[name];
          const value = Reflect.get(target, name);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const failing = over({
      paces: () => Promise.reject(new Error('paces table gone')),
      keepPace: () => {
        throw new Error('disk full');
      },
    });
    const garbage = over({
      paces: () => [null, 'x', { key: keyFingerprint(KEY), baseUrl, rate: '200' }] as never,
      keepPace: () => {},
    });

    const first = await night(fake, baseUrl, failing, 0, 200);
    const second = await night(fake, baseUrl, garbage, 200, 200);

    expect(first.created).toBe(200);
    expect(second.created).toBe(200);
    expect(second.refused).toBeGreaterThan(0);
  }, 120_000);

  test('a limit lowered to 100/s since the remembered pace costs the run a refusal, and the pace then keeps to it', async () => {
    const { fake, baseUrl } = await fakeAt(100, 10);
    const journal = memoryJournal();
    remember(journal, baseUrl);

    const run = await night(fake, baseUrl, journal, 0, 600);

    expect(run.created).toBe(600);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.refused).toBeLessThanOrEqual(12);
    const [pace] = await (journal.paces?.(TENANT) ?? []);
    expect(pace?.rate).toBeLessThan(110);
    expect(pace?.refusals).toBeGreaterThanOrEqual(2);
  }, 120_000);

  test("two tenants on one transport (a client and its withTenant() client): each journal keeps its own key's pace only, and each next run starts at its own", async () => {
    const OTHER = 'tenant_other';
    const OTHER_KEY = 'sk_other_9a8b7c6d5e4f3a2b1c0d9e8f';
    const { fake, baseUrl } = await throughMsw({
      seed: {
        tenants: [
          { id: TENANT, apiKey: KEY, rateLimit: { perSecond: 200, burst: 20 } },
          { id: OTHER, apiKey: OTHER_KEY, rateLimit: { perSecond: 100, burst: 10 } },
        ],
      },
    });
    const accounts = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ key: `A${from + i}`, data: { name: `Account ${from + i}` } }));
    const mine = memoryJournal();
    const theirs = memoryJournal();
    const nightOf = async () => {
      const crm = new CrmClient({ baseUrl, apiKey: KEY, tenantId: TENANT, throttle: 'auto', maxRetries: 10 });
      const other = crm.withTenant(OTHER, { apiKey: OTHER_KEY });
      await settle(new CrmSync(crm, { journal: mine, settleMs: 0 }).run({ accounts: accounts(0, 400) }));
      const before = fake.requests.length;
      await settle(new CrmSync(other, { journal: theirs, settleMs: 0 }).run({ accounts: accounts(1000, 400) }));
      return fake.requests.slice(before).filter((request) => request.status === 429).length;
    };

    const firstRefused = await nightOf();
    await vi.advanceTimersByTimeAsync(DAY_MS);
    const secondRefused = await nightOf();

    // The other tenant's journal holds its key's pace, never the first key's, though one transport paced both.
    const [own, ...more] = await (theirs.paces?.(OTHER) ?? []);
    expect(more).toEqual([]);
    expect(own?.key).toBe(keyFingerprint(OTHER_KEY));
    expect(own?.rate).toBeLessThan(110);
    const kept = await (mine.paces?.(TENANT) ?? []);
    expect(kept.map((pace) => pace.key)).toEqual([keyFingerprint(KEY)]);
    expect(kept[0]?.rate).toBeGreaterThan(180);
    expect(firstRefused).toBeGreaterThan(0);
    // Seeded with its own 100/s, not the 200/s of the first key.
    expect(secondRefused).toBe(0);
  }, 120_000);

  test('a hook another copy of the sync entry set on the client (its ESM and CJS builds in one process) is kept: the pacer is seeded by this one and handed to that one', async () => {
    const { baseUrl } = await fakeAt(200, 20);
    const journal = memoryJournal();
    remember(journal, baseUrl, { rate: 150, ceiling: 150 });
    const crm = new CrmClient({ baseUrl, apiKey: KEY, tenantId: TENANT, throttle: 'auto' });
    const pacers = paceMemoryOf(crm);
    const handed: string[] = [];
    if (pacers) pacers.memory.onMade = (credential) => handed.push(credential);

    await recallPace(crm, journal, TENANT, 60_000);
    await crm.accounts.create({ name: 'First' });

    expect(handed).toEqual([KEY]);
    expect(pacers?.memory.made.get(KEY)?.remembered()?.rate).toBe(150);
  }, 120_000);

  test.each([
    ['an object of another shape', () => ({ learned: () => new Map(), seed: () => {} })],
    ['nothing', () => undefined],
    [
      'frozen pacers, which take no hook',
      () => Object.freeze({ memory: Object.freeze({ made: new Map() }), only: undefined }),
    ],
    [
      'a throwing getter of made',
      () => ({
        get memory() {
          return {
            get made() {
              throw new Error('boom');
            },
          };
        },
        only: undefined,
      }),
    ],
  ])(
    'a client whose pace memory is %s (another version, a stand-in) costs the run nothing: it starts cold and ends as usual',
    async (_, answer) => {
      const { fake, baseUrl } = await fakeAt(200, 20);
      const journal = memoryJournal();
      remember(journal, baseUrl);
      const crm = new CrmClient({ baseUrl, apiKey: KEY, tenantId: TENANT, throttle: 'auto', maxRetries: 10 });
      Object.defineProperty(crm, Symbol.for('crm-integration-sdk.pace-memory'), { value: answer });
      const accounts = Array.from({ length: 200 }, (_, i) => ({ key: `A${i}`, data: { name: `Account ${i}` } }));

      const report = await settle(new CrmSync(crm, { journal, settleMs: 0 }).run({ accounts }));

      expect(report.created).toBe(200);
      expect(fake.requests.some((request) => request.status === 429)).toBe(true);
    },
    120_000,
  );
});
