// The contract of SyncJournal, written once (STYLE.md 22): every engine (memory, SQLite, and the
// Postgres journal that follows) runs this same suite. An engine of yours can too:
//
//   describeSyncJournal('myJournal()', async ({ leaseMs }) => ({ journal: myJournal(db, { leaseMs }), reopen: () => myJournal(db, { leaseMs }) }));
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { CrmValidationError } from '../../src/core/errors';
import type { SyncJournal, SyncJournalEntry, SyncJournalLock, SyncType } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { MAX_SYNC_KEY_BYTES } from '../../src/sync/keys';
import { syncHarness } from '../support/sync';

/** What the suite asks of the journals it makes. */
export interface JournalUnderTestOptions {
  /** The run locks' lease, in milliseconds (the lock rules use a short one). */
  readonly leaseMs: number;
}

/** A journal under test, and a second one on the same storage (another process, or after a restart). */
export interface JournalUnderTest {
  readonly journal: SyncJournal;
  /**
   * A new journal over the same storage, as a restarted process or another worker opens it. Its
   * `close()` stands for its process's death: the locks it holds are no longer renewed.
   */
  reopen(): SyncJournal | Promise<SyncJournal>;
  /** Frees the storage after the test (deletes the file, drops the schema). */
  cleanup?(): void | Promise<void>;
}

/** An entry with every field set, `overrides` over it. */
export function entry(
  type: SyncType,
  key: string,
  overrides: Partial<Omit<SyncJournalEntry, 'type' | 'key'>> = {},
): SyncJournalEntry {
  return {
    type,
    key,
    state: 'synced',
    crmId: `crm_${key}`,
    hash: `h_${key}`,
    data: JSON.stringify({ name: key }),
    attemptedAt: undefined,
    requestId: undefined,
    runId: 'run_1',
    ...overrides,
  };
}

const sorted = <T>(items: Iterable<T>, by: (item: T) => string): T[] =>
  [...items].sort((a, b) => (by(a) < by(b) ? -1 : by(a) > by(b) ? 1 : 0));

/**
 * Keys at the longest a sync takes (MAX_SYNC_KEY_BYTES of UTF-8, in characters of 1, 2, 3 and 4
 * bytes), and keys that differ only where a careless store would fold them: normalisation, case,
 * invisible characters, NUL, the ends of the BMP.
 */
const UNICODE_KEYS: readonly string[] = [
  'a'.repeat(MAX_SYNC_KEY_BYTES),
  '\u00e9'.repeat(MAX_SYNC_KEY_BYTES / 2),
  `${'\u20ac'.repeat((MAX_SYNC_KEY_BYTES - 1) / 3)}a`,
  '\u{1F600}'.repeat(MAX_SYNC_KEY_BYTES / 4),
  `${'\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'.repeat(56)}abcd`, // a ZWJ family: 18 bytes each
  '\u00e9t\u00e9', // NFC
  'e\u0301te\u0301', // NFD: another key
  'stra\u00dfe',
  'STRASSE',
  'strasse',
  '\u0130stanbul',
  'i\u0307stanbul',
  '\u05e9\u05dc\u05d5\u05dd \u202eevil',
  'zero\u200bwidth',
  'nul\u0000inside',
  '\ufeffbom',
  '\uffff',
  '\ufffd',
  '\u{10FFFF}',
  '\u{1D11E} clef',
  ' padded ',
];

/** A string of `length` letters that no compression shrinks (a Postgres index compresses a long key). */
function incompressible(length: number): string {
  let seed = 0x2545f491;
  let text = '';
  for (let i = 0; i < length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    text += String.fromCharCode(33 + ((seed >>> 0) % 94));
  }
  return text;
}

/**
 * Runs the SyncJournal contract against journals from `make`, one fresh storage per test.
 *
 * @param name - The describe block's title, such as `'sqliteJournal()'`.
 * @param make - Makes a journal on new, empty storage, whose run locks have the lease asked.
 */
export function describeSyncJournal(
  name: string,
  make: (options: JournalUnderTestOptions) => JournalUnderTest | Promise<JournalUnderTest>,
): void {
  describe(`${name} (SyncJournal conformance)`, () => {
    /** Runs `body` with an opened journal on fresh storage, and cleans up after it. */
    async function withJournal(body: (under: JournalUnderTest) => Promise<void>): Promise<void> {
      const under = await make({ leaseMs: LEASE_MS });
      try {
        await under.journal.open();
        await body(under);
      } finally {
        await under.journal.close();
        await under.cleanup?.();
      }
    }

    test('a second open() does nothing, and a new journal holds nothing', async () => {
      await withJournal(async ({ journal }) => {
        await journal.open();
        expect((await journal.get('acme', 'accounts', ['a1'])).size).toBe(0);
        expect(await journal.list('acme', 'accounts', undefined, 10)).toEqual([]);
        expect(await journal.pending('acme')).toEqual([]);
      });
    });

    test('gives back every field of an entry as it was put, undefined ones included', async () => {
      await withJournal(async ({ journal }) => {
        const full = entry('activities', 'e1', {
          state: 'inDoubt',
          crmId: undefined,
          hash: 'f00d',
          data: '{"subject":"Call \\u00e9t\\u00e9 ☎","type":"call"}',
          attemptedAt: 1_764_000_000_123,
          requestId: 'req_9',
          runId: 'run_7',
        });
        const bare = entry('accounts', 'a1');
        await journal.write('acme', { put: [full, bare] });

        expect((await journal.get('acme', 'activities', ['e1'])).get('e1')).toStrictEqual(full);
        expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')).toStrictEqual(bare);
      });
    });

    test('get() answers the keys it holds, by key, and leaves out the others', async () => {
      await withJournal(async ({ journal }) => {
        await journal.write('acme', {
          put: [entry('contacts', 'c1'), entry('contacts', 'c2'), entry('contacts', 'c3')],
        });
        const found = await journal.get('acme', 'contacts', ['c3', 'missing', 'c1']);

        expect(sorted(found.keys(), (k) => k)).toEqual(['c1', 'c3']);
        expect(found.get('c3')?.crmId).toBe('crm_c3');
      });
    });

    test('get() answers 1,000 keys in one call', async () => {
      await withJournal(async ({ journal }) => {
        const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
        await journal.write('acme', { put: keys.map((k) => entry('contacts', k)) });
        const found = await journal.get('acme', 'contacts', keys);

        expect(found.size).toBe(1000);
        expect(found.get('k999')?.crmId).toBe('crm_k999');
      });
    });

    test('a put replaces the entry of the same type and key, and a remove deletes it', async () => {
      await withJournal(async ({ journal }) => {
        await journal.write('acme', { put: [entry('accounts', 'a1', { state: 'sending', crmId: undefined })] });
        await journal.write('acme', { put: [entry('accounts', 'a1', { crmId: 'crm_new', hash: 'h2' })] });
        expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')).toMatchObject({
          state: 'synced',
          crmId: 'crm_new',
          hash: 'h2',
        });

        await journal.write('acme', {
          remove: [
            { type: 'accounts', key: 'a1' },
            { type: 'accounts', key: 'never' },
          ],
        });
        expect((await journal.get('acme', 'accounts', ['a1'])).size).toBe(0);
      });
    });

    test('one write puts and removes together', async () => {
      await withJournal(async ({ journal }) => {
        await journal.write('acme', { put: [entry('contacts', 'c1')] });
        await journal.write('acme', { put: [entry('contacts', 'c2')], remove: [{ type: 'contacts', key: 'c1' }] });

        expect(
          sorted(
            (await journal.list('acme', 'contacts', undefined, 10)).map((e) => e.key),
            (k) => k,
          ),
        ).toEqual(['c2']);
      });
    });

    test('keys are kept apart by tenant and by type', async () => {
      await withJournal(async ({ journal }) => {
        await journal.write('acme', { put: [entry('accounts', 'x', { crmId: 'acme_account' })] });
        await journal.write('acme', { put: [entry('contacts', 'x', { crmId: 'acme_contact' })] });
        await journal.write('globex', { put: [entry('accounts', 'x', { crmId: 'globex_account', state: 'sending' })] });

        expect((await journal.get('acme', 'accounts', ['x'])).get('x')?.crmId).toBe('acme_account');
        expect((await journal.get('acme', 'contacts', ['x'])).get('x')?.crmId).toBe('acme_contact');
        expect((await journal.get('globex', 'accounts', ['x'])).get('x')?.crmId).toBe('globex_account');
        expect((await journal.get('globex', 'contacts', ['x'])).size).toBe(0);
        expect(await journal.list('globex', 'contacts', undefined, 10)).toEqual([]);
        expect(await journal.pending('acme')).toEqual([]);
        expect((await journal.pending('globex')).map((e) => e.key)).toEqual(['x']);

        await journal.write('globex', { remove: [{ type: 'accounts', key: 'x' }] });
        expect((await journal.get('acme', 'accounts', ['x'])).size).toBe(1);
      });
    });

    test('list() pages through every entry of one type once, each page in ascending order', async () => {
      await withJournal(async ({ journal }) => {
        const keys = ['b', 'a', 'Z', '10', '9', '\u00e9', 'z', 'a0', 'a-1', '\u{1f600}', '\uffff'];
        await journal.write('acme', { put: keys.map((k) => entry('opportunities', k)) });
        await journal.write('acme', { put: [entry('accounts', 'a00')] });
        await journal.write('globex', { put: [entry('opportunities', 'g')] });

        const seen: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const page = await journal.list('acme', 'opportunities', after, 4);
          if (page.length === 0) break;
          expect(page.length).toBeLessThanOrEqual(4);
          seen.push(...page.map((e) => e.key));
          after = page.at(-1)?.key;
        }
        expect(sorted(seen, (k) => k)).toEqual(sorted(keys, (k) => k));
        // The first page of two is the first two of the whole order.
        expect((await journal.list('acme', 'opportunities', undefined, 2)).map((e) => e.key)).toEqual(seen.slice(0, 2));
      });
    });

    test("pending() holds the entries 'sending' and 'inDoubt' of every type, and no other", async () => {
      await withJournal(async ({ journal }) => {
        await journal.write('acme', {
          put: [
            entry('accounts', 'a1', { state: 'sending', crmId: undefined }),
            entry('accounts', 'a2'),
            entry('contacts', 'c1', { state: 'inDoubt', crmId: undefined, requestId: 'req_1' }),
            entry('contacts', 'c2', { state: 'deactivated' }),
            entry('activities', 'e1', { state: 'sending', crmId: undefined, attemptedAt: 5 }),
          ],
        });
        const pending = sorted(await journal.pending('acme'), (e) => `${e.type}/${e.key}`);

        expect(pending.map((e) => [e.type, e.key, e.state])).toEqual([
          ['accounts', 'a1', 'sending'],
          ['activities', 'e1', 'sending'],
          ['contacts', 'c1', 'inDoubt'],
        ]);
        expect(pending[1]?.attemptedAt).toBe(5);
      });
    });

    test('what was written is there for a journal opened again on the same storage', async () => {
      await withJournal(async ({ journal, reopen }) => {
        await journal.write('acme', { put: [entry('contacts', 'c1', { state: 'sending', crmId: undefined })] });
        const again = await reopen();
        try {
          await again.open();
          expect((await again.pending('acme')).map((e) => e.key)).toEqual(['c1']);
        } finally {
          if (again !== journal) await again.close();
        }
      });
    });

    test("a tenant's lock is held by one run at a time, and another tenant's is free", async () => {
      await withJournal(async ({ journal, reopen }) => {
        const held = await journal.lock('acme', 'run_1');
        const other = await reopen();
        try {
          await other.open();
          const refused = await Promise.resolve()
            .then(() => other.lock('acme', 'run_2'))
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          expect(refused).toBeInstanceOf(SyncJournalError);
          expect((refused as SyncJournalError).reason).toBe('locked');

          const globex = await other.lock('globex', 'run_3');
          await globex.release();
          await held.release();
          const next = await other.lock('acme', 'run_2');
          await next.release();
        } finally {
          if (other !== journal) await other.close();
        }
      });
    });

    test('keeps a pace per key fingerprint and base URL, replacing the same one, gives it back as kept, and never another tenant’s; a reopened journal still has it', async () => {
      const under = await make({ leaseMs: LEASE_MS });
      const { journal } = under;
      try {
        await journal.open();
        if (!journal.paces || !journal.keepPace) return;
        const pace = {
          key: '0123456789abcdef0123456789abcdef',
          baseUrl: 'https://crm.example',
          rate: 199.9512345,
          ceiling: 199.9512345,
          quietMs: 30_000,
          refusals: 1,
          learnedAt: 1_764_000_000_123,
          usedAt: 1_764_000_001_456,
        };
        expect(await journal.paces('acme')).toEqual([]);
        await journal.keepPace('acme', pace);
        await journal.keepPace('acme', { ...pace, baseUrl: 'https://sandbox.crm.example', rate: 20 });
        await journal.keepPace('acme', { ...pace, rate: 100, refusals: 2 });
        await journal.keepPace('other', { ...pace, rate: 5 });

        const kept = [...(await journal.paces('acme'))].sort((a, b) => a.baseUrl.localeCompare(b.baseUrl));
        expect(kept).toStrictEqual([
          { ...pace, rate: 100, refusals: 2 },
          { ...pace, baseUrl: 'https://sandbox.crm.example', rate: 20 },
        ]);
        const again = await under.reopen();
        await again.open();
        expect(await again.paces?.('other')).toStrictEqual([{ ...pace, rate: 5 }]);
        if (again !== journal) await again.close();
      } finally {
        await journal.close();
        await under.cleanup?.();
      }
    });

    test('forgets, when a run ends, the runs of its tenant past the last 1,000 (by start), and no other tenant’s', async () => {
      await withJournal(async ({ journal }) => {
        if (!journal.addRun || !journal.runs) return;
        const run = (i: number, finishedAt?: number) => ({
          runId: `run_${String(i).padStart(4, '0')}`,
          startedAt: i,
          finishedAt,
          recordedAt: i,
          summary: '{}',
        });
        await journal.addRun('other', run(0, 0));
        for (let i = 0; i < 1000; i++) await journal.addRun('alpha', run(i));
        expect(await journal.runs('alpha', 1000)).toHaveLength(1000);
        await journal.addRun('alpha', run(1000, 1001));

        const kept = await journal.runs('alpha', 1000);
        expect([kept.length, kept[0]?.runId, kept.at(-1)?.runId]).toEqual([1000, 'run_1000', 'run_0001']);
        expect(await journal.runs('other', 10)).toHaveLength(1);
      });
    }, 120_000);

    test('keeps a history of runs per tenant, the latest started first, a run not ended without an end, and lists the tenants of its entries and runs', async () => {
      await withJournal(async (under) => {
        const { journal } = under;
        if (!journal.addRun || !journal.runs || !journal.tenants) return;
        await journal.write('beta', { put: [entry('accounts', 'A-1')] });
        const started = { runId: 'run_1', startedAt: 1_000, finishedAt: undefined, recordedAt: 1_000, summary: '{}' };
        await journal.addRun('alpha', started);
        await journal.addRun('alpha', { ...started, runId: 'run_2', startedAt: 2_000, recordedAt: 2_000 });
        // A run's record is replaced as it goes, and at its end.
        await journal.addRun('alpha', { ...started, recordedAt: 1_200, summary: '{"done":1}' });
        await journal.addRun('alpha', { ...started, finishedAt: 1_500, recordedAt: 1_500, summary: '{"created":3}' });

        // ageMs, a database's own measure of a record's age, is left out of the comparison.
        const runs = (await journal.runs('alpha', 10)).map(({ ageMs: _age, ...run }) => run);
        expect(runs).toEqual([
          { runId: 'run_2', startedAt: 2_000, finishedAt: undefined, recordedAt: 2_000, summary: '{}' },
          { runId: 'run_1', startedAt: 1_000, finishedAt: 1_500, recordedAt: 1_500, summary: '{"created":3}' },
        ]);
        expect(await journal.runs('alpha', 1)).toHaveLength(1);
        expect(await journal.runs('beta', 10)).toEqual([]);
        expect(await journal.tenants()).toEqual(['alpha', 'beta']);
        const again = await under.reopen();
        await again.open();
        expect((await again.runs?.('alpha', 10))?.map((run) => run.runId)).toEqual(['run_2', 'run_1']);
        if (again !== journal) await again.close();
      });
    });

    test('keys at the longest a sync takes, 4-byte characters too, and assorted Unicode keys round-trip exactly', async () => {
      await withJournal(async (under) => {
        const { journal } = under;
        // A tenant beside each key, as the index holds them.
        const tenant = `tenant_${'t'.repeat(57)}`;
        for (const key of UNICODE_KEYS.slice(0, 5)) {
          expect(new TextEncoder().encode(key).length).toBeLessThanOrEqual(MAX_SYNC_KEY_BYTES);
        }
        await journal.write(tenant, { put: UNICODE_KEYS.map((k) => entry('accounts', k)) });

        const got = await journal.get(tenant, 'accounts', UNICODE_KEYS);
        expect(sorted(got.keys(), (k) => k)).toEqual(sorted(UNICODE_KEYS, (k) => k));
        for (const key of UNICODE_KEYS) expect(got.get(key)).toEqual(entry('accounts', key));
        const listed: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 20; pages++) {
          const page = await journal.list(tenant, 'accounts', after, 3);
          if (page.length === 0) break;
          listed.push(...page.map((e) => e.key));
          after = page.at(-1)?.key;
        }
        expect(sorted(listed, (k) => k)).toEqual(sorted(UNICODE_KEYS, (k) => k));
        const again = await under.reopen();
        await again.open();
        expect((await again.get(tenant, 'accounts', UNICODE_KEYS)).size).toBe(UNICODE_KEYS.length);
        if (again !== journal) await again.close();
      });
    });

    test('a run through it is in its history, whoever reads it: started, then ended with its counts', async () => {
      await withJournal(async (under) => {
        if (!under.journal.addRun || !under.journal.runs) return;
        const { sync, fake } = await syncHarness({ journal: under.journal });
        const report = await sync.run({ accounts: [{ key: 'H-1', data: { name: 'Hist' } }] });

        const [run] = await sync.history();
        expect(run).toMatchObject({ runId: report.runId, state: 'finished', created: 1, failed: 0, inDoubt: 0 });
        expect(run?.finishedAt?.getTime()).toBeGreaterThanOrEqual(run?.startedAt.getTime() ?? Number.NaN);
        const again = await under.reopen();
        await again.open();
        expect((await again.runs?.(fake.tenantId, 5))?.[0]).toMatchObject({ runId: report.runId });
        if (again !== under.journal) await again.close();
      });
    });

    test('a sync through it fails lone-surrogate and over-long keys as bad records, and syncs the others once', async () => {
      await withJournal(async ({ journal }) => {
        const { sync, fake } = await syncHarness({ journal });
        // Every Unicode key, NUL too, and an ERP's ids with an emoji: 30 records a sync must hold apart.
        const good = [...UNICODE_KEYS, ...Array.from({ length: 9 }, (_, i) => `erp-${i}-\u{1F600}`)].map((key, i) => ({
          key,
          data: { name: `Account ${i}` },
        }));
        const bad = [
          's\uD800',
          's\uD801',
          `\uDFFF${'x'.repeat(10)}`,
          incompressible(10_240),
          `${'a'.repeat(MAX_SYNC_KEY_BYTES)}b`,
        ];
        const source = {
          accounts: [...bad.slice(0, 2), ...good, ...bad.slice(2)].map((r) =>
            typeof r === 'string' ? { key: r, data: { name: 'Bad key' } } : r,
          ),
        };

        const first = await sync.run(source);
        expect(first).toMatchObject({ created: 30, inDoubt: [] });
        expect(first.failed.map((f) => f.key)).toEqual(bad);
        expect(first.failed.map((f) => (f.error as CrmValidationError).issues[0]?.field)).toEqual(bad.map(() => 'key'));

        const second = await sync.run(source);
        expect(second).toMatchObject({ created: 0, unchanged: 30 });
        expect(second.failed).toHaveLength(bad.length);
        expect(fake.store.accounts.size).toBe(30);
        for (const { key } of good) expect(await sync.idOf('accounts', key)).toMatch(/./);
      });
    });

    test('an entry with a 100 kB data and keys of any characters round-trips', async () => {
      await withJournal(async ({ journal }) => {
        const data = JSON.stringify({ description: 'x'.repeat(100_000) });
        const odd = ["'; DROP TABLE entries; --", 'key with\nnewline', '\u0000nul', '%_*?'];
        await journal.write('t\u00e9nant', {
          put: [entry('contacts', 'big', { data }), ...odd.map((k) => entry('contacts', k))],
        });

        expect((await journal.get('t\u00e9nant', 'contacts', ['big'])).get('big')?.data).toBe(data);
        expect(sorted((await journal.get('t\u00e9nant', 'contacts', odd)).keys(), (k) => k)).toEqual(
          sorted(odd, (k) => k),
        );
      });
    });

    describeLockRules(withJournal);
  });
}

/**
 * The lease of the lock rules. A holder and its contender share this test's process, whose event
 * loop a busy machine may stall: a holder whose renewal is late by a whole lease counts as
 * stalled, and is taken over. 5 s makes that a stall no loaded CI runner gives a test, where 1.5 s
 * was not.
 */
const LEASE_MS = 5000;

/** What `lock()` did: the lock, or the error it rejected with. */
async function tryLock(journal: SyncJournal, runId: string, signal?: AbortSignal): Promise<SyncJournalLock | unknown> {
  try {
    return await journal.lock('acme', runId, signal ? { signal } : undefined);
  } catch (error) {
    return error;
  }
}

const isRefusal = (outcome: unknown): boolean => outcome instanceof SyncJournalError && outcome.reason === 'locked';
const isLock = (outcome: unknown): outcome is SyncJournalLock =>
  typeof (outcome as SyncJournalLock | undefined)?.release === 'function';

/**
 * The run lock's rules (SyncJournal.lock, STYLE.md 25): a holder named by a token and proven alive
 * by renewing, a dead one taken over after its lease whatever its clock said, never two holders.
 */
function describeLockRules(withJournal: (body: (under: JournalUnderTest) => Promise<void>) => Promise<void>): void {
  describe('run lock', () => {
    afterEach(() => {
      vi.useRealTimers();
      vi.restoreAllMocks();
    });

    /** `body` with a second journal on the same storage, as another process opens it. */
    async function withTwo(body: (journal: SyncJournal, other: SyncJournal) => Promise<void>): Promise<void> {
      await withJournal(async ({ journal, reopen }) => {
        const other = await reopen();
        try {
          await other.open();
          await body(journal, other);
        } finally {
          if (other !== journal) await other.close();
        }
      });
    }

    test('a live holder, renewing its lock, is never taken over, however long another run tries', async () => {
      await withTwo(async (journal, other) => {
        const held = await journal.lock('acme', 'run_1');
        const outcomes: unknown[] = [];
        // Over two leases: the holder renews every third of one.
        for (let i = 0; i < 4; i++) {
          outcomes.push(await tryLock(other, `run_${i + 2}`));
          await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
        }

        expect(outcomes.filter(isRefusal)).toHaveLength(4);
        expect(held.signal?.aborted ?? false).toBe(false);
        await held.release();
        const next = await other.lock('acme', 'run_next');
        expect(next.takenOver).toBeUndefined();
        await next.release();
      });
    });

    test('a lock whose holder stopped renewing it (its process died) is taken over after its lease, saying whose it was', async () => {
      await withJournal(async ({ journal, reopen }) => {
        await journal.lock('acme', 'run_dead');
        // Its process dies: the lock stays, and is renewed no more.
        await journal.close();
        const next = await reopen();
        await next.open();
        const third = await reopen();
        try {
          const taken = await tryLock(next, 'run_next');

          expect(isLock(taken) && taken.takenOver?.runId).toBe('run_dead');
          // The new holder's lock is live: not taken over in turn.
          await third.open();
          expect(isRefusal(await tryLock(third, 'run_third'))).toBe(true);
          if (isLock(taken)) await taken.release();
        } finally {
          if (third !== next) await third.close();
          if (next !== journal) await next.close();
        }
      });
    });

    test("a clock stepped forward or back neither keeps a dead holder's lock nor frees a live one", async () => {
      await withTwo(async (journal, other) => {
        vi.useFakeTimers({ toFake: ['Date'] });
        // The holder's clock is an hour ahead when it takes the lock, then steps two hours back.
        vi.setSystemTime(Date.now() + 3_600_000);
        const held = await journal.lock('acme', 'run_ahead');
        vi.setSystemTime(Date.now() - 7_200_000);
        expect(isRefusal(await tryLock(other, 'run_2'))).toBe(true);
        await held.release();

        await other.lock('acme', 'run_ahead_again');
        // Its process dies, its lock stamped an hour ahead: the next run takes it after the lease.
        await other.close();
        vi.setSystemTime(Date.now() + 3_600_000);
        // Within a lease, as the contract says: a session lock (Postgres) is freed once the server
        // has ended the closed session, a moment after close(), and lock() refuses until then.
        let next = await tryLock(journal, 'run_next');
        for (let look = 0; look < LEASE_MS / 100 && !isLock(next); look++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          next = await tryLock(journal, 'run_next');
        }
        expect(isLock(next) && next.takenOver?.runId).toBe('run_ahead_again');
        if (isLock(next)) await next.release();
      });
    });

    test('after a stall past the lease, two runs never both hold the lock: the stalled holder learns it lost it, and its writes are refused', async () => {
      await withTwo(async (journal, other) => {
        const held = await journal.lock('acme', 'run_stalled');
        // The holder's process stalls past its lease, as another process's monotonic clock sees it.
        const monotonic = performance.now.bind(performance);
        vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + 3 * LEASE_MS);
        const contender = await tryLock(other, 'run_2');
        vi.restoreAllMocks();

        if (isRefusal(contender)) {
          // An engine whose locks a stall does not end (a session lock): the holder keeps it.
          expect(held.signal?.aborted ?? false).toBe(false);
          await held.release();
          return;
        }
        expect(isLock(contender)).toBe(true);
        if (other !== journal) {
          // Its process writes through its own journal: refused there (one journal object shared
          // by both runs, as a memory journal is, cannot tell whose write it is: the signal stops the run).
          const write = await Promise.resolve()
            .then(() => journal.write('acme', { put: [entry('accounts', 'late')] }))
            .then(
              () => 'written',
              (error: unknown) => error,
            );
          expect(write).toMatchObject({ reason: 'locked' });
          expect((await other.get('acme', 'accounts', ['late'])).size).toBe(0);
        }
        expect(held.signal?.aborted).toBe(true);
        expect(held.signal?.reason).toMatchObject({ reason: 'locked' });
        // Its release leaves the new holder's lock alone.
        await held.release();
        expect(isRefusal(await tryLock(journal, 'run_3'))).toBe(true);
        await (contender as SyncJournalLock).release();
      });
    });

    test('a holder stalled past its lease that no other run took over goes on: its next write renews its lock', async () => {
      await withTwo(async (journal, other) => {
        const held = await journal.lock('acme', 'run_stalled');
        const monotonic = performance.now.bind(performance);
        vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + 3 * LEASE_MS);

        await journal.write('acme', { put: [entry('accounts', 'after')] });
        const contender = await tryLock(other, 'run_2');
        vi.restoreAllMocks();

        expect(held.signal?.aborted ?? false).toBe(false);
        expect(isRefusal(contender)).toBe(true);
        expect((await other.get('acme', 'accounts', ['after'])).size).toBe(1);
        await held.release();
      });
    });

    test("a lock() whose signal is aborted rejects with the signal's reason and takes nothing", async () => {
      await withJournal(async ({ journal }) => {
        const reason = new Error('stopped');
        expect(await tryLock(journal, 'run_1', AbortSignal.abort(reason))).toBe(reason);
        const lock = await journal.lock('acme', 'run_2');
        await lock.release();
      });
    });
  });
}
