import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal, SyncJournalGenerations } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { sqliteJournal } from '../../src/sync/sqlite-journal';
import type { SyncReport, SyncRunOptions, SyncSource } from '../../src/sync/types';
import type { FakeCrmCore } from '../../src/testing/index';
import { throughMsw } from '../support/fake-harness';
import { countingPool, startPostgres, type TestPostgres } from '../support/postgres';
import { erpSource } from '../support/sync';

/*
 * Generations on a real Postgres: a tenant's nightly pass split into 12 overlapping slices that 4
 * workers (each a CrmSync on a journal and pool of its own) take from a queue, retrying a slice
 * whose run failed, as a BullMQ queue does. The removals are counted as the fake received them:
 * its PUTs that set an account or a contact inactive, per record.
 */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const fresh = () => `g_${Math.random().toString(36).slice(2)}`;
const ACCOUNTS = 100;
const SLICES = 12;

/** Accounts and contacts of `erpSource(ACCOUNTS)` less the `dropped` keys. */
function nightly(dropped: ReadonlySet<string> = new Set()) {
  const all = erpSource(ACCOUNTS);
  return {
    accounts: all.accounts.filter((a) => !dropped.has(a.key)),
    contacts: all.contacts.filter((c) => !dropped.has(c.key)),
  };
}
type Nightly = ReturnType<typeof nightly>;

/** Slice `s` of `slices`: accounts i with i % slices of s or s - 1 (every account in two slices), with their contacts. */
function sliceOf(source: Nightly, s: number, slices = SLICES): Nightly {
  const mine = (key: string, per: number) => {
    const i = Math.floor(Number(key.slice(1)) / per) % slices;
    return i === s || (i + 1) % slices === s;
  };
  return {
    accounts: source.accounts.filter((a) => mine(a.key, 1)),
    contacts: source.contacts.filter((c) => mine(c.key, 2)),
  };
}

/** The keys `ACCOUNTS` accounts' share drops: accounts `A<i>` with their two contacts. */
function dropOf(indices: readonly number[]): Set<string> {
  return new Set(indices.flatMap((i) => [`A${i}`, `C${2 * i}`, `C${2 * i + 1}`]));
}

async function tenant(leaseMs = 2000) {
  const { fake, baseUrl } = await throughMsw({ latencyMs: 1 });
  const schema = fresh();
  const worker = () => {
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const journal = postgresJournal(postgres.pool(), { schema, leaseMs });
    return { sync: new CrmSync(crm, { journal, settleMs: 0 }), journal };
  };
  // The first night: every record created by one run.
  const first = await worker().sync.run(nightly(), { concurrency: 8 });
  expect(first).toMatchObject({ created: 3 * ACCOUNTS, failed: [] });
  return { fake, schema, worker, from: fake.requests.length };
}

/** The records set inactive since request `from`, by key, with how many PUTs each received. */
async function deactivations(fake: FakeCrmCore, journal: SyncJournal, from: number): Promise<Map<string, number>> {
  await journal.open();
  const keyOf = new Map<string, string>();
  for (const type of ['accounts', 'contacts'] as const) {
    for (const e of await journal.list(fake.tenantId, type, undefined, 1000)) keyOf.set(e.crmId as string, e.key);
  }
  const counts = new Map<string, number>();
  for (const r of fake.requests.slice(from)) {
    if (r.endpoint !== 'updateAccount' && r.endpoint !== 'updateContact') continue;
    if ((r.body as { status?: unknown }).status !== 'inactive') continue;
    const key = keyOf.get(r.path.split('/').pop() as string) ?? `?${r.path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * 4 workers take the slices from a queue; a slice whose run rejects goes back to the queue's end
 * (a queue's retry). `runOf(slice, attempt)` gives each run's source and options.
 */
async function fleet(
  workers: readonly CrmSync[],
  slices: readonly number[],
  runOf: (slice: number, attempt: number) => { source: SyncSource; options: SyncRunOptions },
): Promise<{ reports: (SyncReport & { slice: number })[]; failures: number }> {
  const queue = slices.map((slice) => ({ slice, attempt: 0 }));
  const reports: (SyncReport & { slice: number })[] = [];
  let failures = 0;
  await Promise.all(
    workers.map(async (sync) => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const { source, options } = runOf(job.slice, job.attempt);
        try {
          reports.push({ ...(await sync.run(source, options)), slice: job.slice });
        } catch {
          failures++;
          queue.push({ slice: job.slice, attempt: job.attempt + 1 });
        }
      }
    }),
  );
  return { reports, failures };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** `list`, whose run is aborted by `controller` once it has given `after` records. */
function* abortedAfter<T>(list: readonly T[], after: number, controller: AbortController): Generator<T> {
  for (const [i, item] of list.entries()) {
    if (i === after) controller.abort(new Error('worker killed'));
    yield item;
  }
}

describe('a generation over 12 slices of a tenant on postgresJournal()', () => {
  test('4 workers, 2 % of the keys dropped, a worker killed mid-slice and its slice retried: exactly the dropped records are deactivated, once, by the run that completes the generation', {
    timeout: 120_000,
  }, async () => {
    const { fake, worker, from } = await tenant();
    const dropped = dropOf([10, 55]);
    const source = nightly(dropped);
    const workers = range(4).map(() => worker());
    const generation = (slice: number) => ({ id: '2026-12-03', slices: SLICES, slice });

    const { reports, failures } = await fleet(
      workers.map((w) => w.sync),
      range(SLICES),
      (slice, attempt) => {
        const part = sliceOf(source, slice);
        if (slice !== 5 || attempt > 0) {
          return { source: part, options: { removed: 'deactivate', generation: generation(slice) } };
        }
        // The worker dies in its contacts, its accounts read: its slice does not finish.
        const killed = new AbortController();
        return {
          source: { accounts: part.accounts, contacts: abortedAfter(part.contacts, 3, killed) },
          options: { removed: 'deactivate', generation: generation(slice), signal: killed.signal },
        };
      },
    );

    expect(failures).toBe(1);
    expect(reports).toHaveLength(SLICES);
    const counts = await deactivations(fake, workers[0]?.journal as SyncJournal, from);
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries([...dropped].map((key) => [key, 1])));
    const completing = reports.filter((r) => r.generation?.state === 'completed');
    expect(completing).toHaveLength(1);
    expect(completing[0]).toMatchObject({ deactivated: dropped.size, refusedRemovals: [], failed: [] });
    for (const r of reports.filter((r) => r !== completing[0])) {
      expect(r).toMatchObject({ deactivated: 0, refusedRemovals: [], failed: [] });
    }
    expect([...fake.store.accounts.values()].filter((a) => a.status === 'inactive')).toHaveLength(2);

    // A slice run again after completion syncs as usual and removes nothing more.
    const late = await workers[1]?.sync.run(sliceOf(source, 3), {
      removed: 'deactivate',
      generation: generation(3),
    });
    expect(late).toMatchObject({ deactivated: 0, generation: { state: 'complete' } });
    expect((await deactivations(fake, workers[0]?.journal as SyncJournal, from)).size).toBe(dropped.size);
  });

  test('with one slice never run, the generation stays open, deactivates nothing, and lists the slice missing', {
    timeout: 60_000,
  }, async () => {
    const { fake, worker, from } = await tenant();
    const source = nightly(dropOf([10, 55]));
    const workers = range(4).map(() => worker());
    const { reports } = await fleet(
      workers.map((w) => w.sync),
      range(SLICES).filter((s) => s !== 9),
      (slice) => ({
        source: sliceOf(source, slice),
        options: { removed: 'deactivate', generation: { id: 'night', slices: SLICES, slice } },
      }),
    );

    expect(reports.every((r) => r.deactivated === 0 && r.generation?.state === 'open')).toBe(true);
    expect(reports.at(-1)?.generation?.missingSlices).toEqual([9]);
    const journal = workers[0]?.journal as SyncJournal;
    expect((await deactivations(fake, journal, from)).size).toBe(0);
    const open = await (journal.generations as SyncJournalGenerations).open(fake.tenantId);
    expect(open).toEqual([expect.objectContaining({ id: 'night', slices: SLICES, state: 'open', missing: [9] })]);
  });

  test('a generation whose slices dropped 60 % of the accounts is refused by the removal guard, and no slice run again removes them', {
    timeout: 60_000,
  }, async () => {
    const { fake, worker, from } = await tenant();
    const source = nightly(dropOf(range(60)));
    const workers = range(4).map(() => worker());
    const { reports } = await fleet(
      workers.map((w) => w.sync),
      range(SLICES),
      (slice) => ({
        source: sliceOf(source, slice),
        options: { removed: 'deactivate', generation: { id: 'cut', slices: SLICES, slice } },
      }),
    );

    const completing = reports.find((r) => r.generation?.state === 'completed');
    expect(completing?.refusedRemovals).toEqual([
      { type: 'accounts', wouldDeactivate: 60, synced: 100, limit: 10, reason: 'limit', unusableKeys: 0 },
      { type: 'contacts', wouldDeactivate: 120, synced: 200, limit: 20, reason: 'limit', unusableKeys: 0 },
    ]);
    expect(reports.reduce((n, r) => n + r.deactivated, 0)).toBe(0);
    const again = await workers[0]?.sync.run(sliceOf(source, 0), {
      removed: 'deactivate',
      generation: { id: 'cut', slices: SLICES, slice: 0 },
    });
    expect(again).toMatchObject({ deactivated: 0, refusedRemovals: [] });
    expect((await deactivations(fake, workers[0]?.journal as SyncJournal, from)).size).toBe(0);
  });

  test("with removed: 'keep' a complete generation removes nothing", async () => {
    const { fake, worker, from } = await tenant();
    const source = nightly(dropOf([1, 2]));
    const w = worker();
    for (const slice of range(3)) {
      await w.sync.run(sliceOf(source, slice, 3), { generation: { id: 'kept', slices: 3, slice } });
    }
    expect((await deactivations(fake, w.journal, from)).size).toBe(0);
    expect(await (w.journal.generations as SyncJournalGenerations).open(fake.tenantId)).toEqual([]);
  });

  test('the same slice run twice at once counts once: the generation completes only with every slice, and removes once', async () => {
    const { fake, worker, from } = await tenant();
    const dropped = dropOf([7]);
    const source = nightly(dropped);
    const [a, b] = [worker(), worker()];
    const run = (w: typeof a, slice: number) =>
      w.sync.run(sliceOf(source, slice, 2), {
        removed: 'deactivate',
        generation: { id: 'twice', slices: 2, slice },
      });
    const twice = await Promise.all([run(a, 0), run(b, 0)]);
    expect(twice.map((r) => r.generation)).toEqual([
      expect.objectContaining({ state: 'open', missingSlices: [1] }),
      expect.objectContaining({ state: 'open', missingSlices: [1] }),
    ]);
    const last = await Promise.all([run(a, 1), run(b, 1)]);
    expect(last.map((r) => r.deactivated).sort()).toEqual([0, 3]);
    expect(Object.fromEntries(await deactivations(fake, a.journal, from))).toEqual({ A7: 1, C14: 1, C15: 1 });
  });

  test('a run killed in the removal step gives its claim up, and the next run of the generation removes the rest', async () => {
    const { fake, worker, from } = await tenant();
    const dropped = dropOf([3, 4, 5, 6]);
    const source = nightly(dropped);
    const w = worker();
    const generation = (slice: number) => ({ id: 'killed-removing', slices: 2, slice });
    await w.sync.run(sliceOf(source, 0, 2), { removed: 'deactivate', generation: generation(0) });
    // Killed at its first deactivation: the PUT on the wire is answered, nothing more is sent.
    const killed = new AbortController();
    const handle = fake.handle.bind(fake);
    fake.handle = (request: Request) => {
      if (request.method === 'PUT') killed.abort(new Error('worker killed'));
      return handle(request);
    };
    await expect(
      w.sync.run(sliceOf(source, 1, 2), {
        removed: 'deactivate',
        generation: generation(1),
        concurrency: 1,
        signal: killed.signal,
      }),
    ).rejects.toThrow('worker killed');
    fake.handle = handle;
    expect((await deactivations(fake, w.journal, from)).size).toBe(1);
    const open = await (w.journal.generations as SyncJournalGenerations).open(fake.tenantId);
    expect(open).toEqual([expect.objectContaining({ state: 'removing', missing: [] })]);

    const retried = await worker().sync.run(sliceOf(source, 1, 2), {
      removed: 'deactivate',
      generation: generation(1),
    });
    expect(retried).toMatchObject({ deactivated: dropped.size - 1, generation: { state: 'completed' } });
    expect(Object.fromEntries(await deactivations(fake, w.journal, from))).toEqual(
      Object.fromEntries([...dropped].map((key) => [key, 1])),
    );
  });

  test("a worker that dies holding the removal (its claim never renewed nor released): the queue's retry of its slice waits out the claim's lease and takes the removal over", async () => {
    const { fake, schema, worker, from } = await tenant(1000);
    const dropped = dropOf([20]);
    const source = nightly(dropped);
    const w = worker();
    const generation = (slice: number) => ({ id: 'dead-remover', slices: 2, slice });
    await w.sync.run(sliceOf(source, 0, 2), { removed: 'deactivate', generation: generation(0) });
    // The dead worker finished slice 1 and claimed the removal, then died: its pool is gone.
    const deadPool = postgres.pool();
    const dead = postgresJournal(deadPool, { schema, leaseMs: 1000 });
    await dead.open();
    const claimed = await (dead.generations as SyncJournalGenerations).finish(fake.tenantId, 'run_dead', {
      id: 'dead-remover',
      slice: 1,
      remove: true,
      lists: [
        { type: 'accounts', unusableKeys: 0 },
        { type: 'contacts', unusableKeys: 0 },
      ],
    });
    expect(claimed.outcome).toBe('remove');
    dead.close();
    await deadPool.end();

    const retried = await w.sync.run(sliceOf(source, 1, 2), { removed: 'deactivate', generation: generation(1) });
    expect(retried).toMatchObject({ deactivated: 3, generation: { state: 'completed' } });
    expect(Object.fromEntries(await deactivations(fake, w.journal, from))).toEqual({ A20: 1, C40: 1, C41: 1 });
    // A slice run after that removes nothing more.
    const late = await w.sync.run(sliceOf(source, 0, 2), { removed: 'deactivate', generation: generation(0) });
    expect(late).toMatchObject({ deactivated: 0, generation: { state: 'complete' } });
  });

  test('a run that finds the removal under way by a live run waits for it to end, and removes nothing itself', async () => {
    const { fake, worker, from } = await tenant();
    const dropped = dropOf([40, 41, 42]);
    const source = nightly(dropped);
    const [a, b] = [worker(), worker()];
    const generation = (slice: number) => ({ id: 'waits', slices: 2, slice });
    await a.sync.run(sliceOf(source, 0, 2), { removed: 'deactivate', generation: generation(0) });
    // The remover's deactivations are slow (one at a time, each answered late); the other comes meanwhile.
    const handle = fake.handle.bind(fake);
    let other: Promise<unknown> | undefined;
    fake.handle = async (request: Request) => {
      if (request.method === 'PUT') {
        other ??= b.sync.run(sliceOf(source, 1, 2), { removed: 'deactivate', generation: generation(1) });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return handle(request);
    };
    const remover = await a.sync.run(sliceOf(source, 1, 2), {
      removed: 'deactivate',
      generation: generation(1),
      concurrency: 1,
    });
    const waited = await other;
    fake.handle = handle;
    expect(remover).toMatchObject({ deactivated: dropped.size, generation: { state: 'completed' } });
    expect(waited).toMatchObject({ deactivated: 0, generation: { state: 'complete' } });
    expect(Object.fromEntries(await deactivations(fake, a.journal, from))).toEqual(
      Object.fromEntries([...dropped].map((key) => [key, 1])),
    );
  });

  test('a list one slice did not give is not removed, and a slice with an unusable key makes its list incomplete: refused', async () => {
    const { fake, worker, from } = await tenant();
    const source = nightly(dropOf([30, 31]));
    const w = worker();
    const generation = (slice: number) => ({ id: 'partial', slices: 2, slice });
    // Slice 0 gives its accounts, one with no key, and no contacts.
    const zero = sliceOf(source, 0, 2);
    await w.sync.run(
      { accounts: [...zero.accounts, { key: '', data: { name: 'No key' } }] },
      {
        removed: 'deactivate',
        generation: generation(0),
      },
    );
    const last = await w.sync.run(sliceOf(source, 1, 2), { removed: 'deactivate', generation: generation(1) });
    expect(last).toMatchObject({
      deactivated: 0,
      generation: { state: 'completed' },
      refusedRemovals: [{ type: 'accounts', wouldDeactivate: 2, reason: 'incomplete', unusableKeys: 1 }],
    });
    expect((await deactivations(fake, w.journal, from)).size).toBe(0);
  });

  test('a slice records the keys it read with one write a batch of its lists, not one a record', async () => {
    const { fake, schema, worker, from } = await tenant();
    const statements: string[] = [];
    const journal = postgresJournal(countingPool(postgres.pool(), statements), { schema });
    const crm = new CrmClient({ ...fake.credentials, baseUrl: fake.baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal, settleMs: 0 });
    // 100 accounts (one batch of 500) and 200 contacts (one batch), all unchanged.
    const report = await sync.run(nightly(), {
      removed: 'deactivate',
      generation: { id: 'cheap', slices: 1, slice: 0 },
    });
    expect(report).toMatchObject({ unchanged: 3 * ACCOUNTS, generation: { state: 'completed' } });
    expect(statements.filter((text) => text.includes('INSERT INTO') && text.includes('generation_keys'))).toHaveLength(
      2,
    );
    expect((await deactivations(fake, worker().journal, from)).size).toBe(0);
  });

  test('a newer generation supersedes an open older one, and one older than its age expires: neither removes', async () => {
    const { fake, schema, worker, from } = await tenant();
    const source = nightly(dropOf([8]));
    const w = worker();
    const run = (id: string, slice: number) =>
      w.sync.run(sliceOf(source, slice, 2), { removed: 'deactivate', generation: { id, slices: 2, slice } });
    await run('monday', 0);
    await run('tuesday', 0);
    expect(await run('monday', 1)).toMatchObject({ deactivated: 0, generation: { state: 'superseded' } });

    const pool = postgres.pool();
    await pool.query(`UPDATE ${schema}.generations SET started_at = started_at - interval '8 days' WHERE id = $1`, [
      Buffer.from('tuesday'),
    ]);
    expect(await run('tuesday', 1)).toMatchObject({ deactivated: 0, generation: { state: 'expired' } });
    expect((await deactivations(fake, w.journal, from)).size).toBe(0);
    expect(await (w.journal.generations as SyncJournalGenerations).open(fake.tenantId)).toEqual([]);
  });
});

describe('a generation refused before anything is sent', () => {
  test.each([
    ['a slice past the last', { id: 'g', slices: 12, slice: 12 }, 'generation.slice'],
    ['a negative slice', { id: 'g', slices: 12, slice: -1 }, 'generation.slice'],
    ['a slice that is not whole', { id: 'g', slices: 12, slice: 1.5 }, 'generation.slice'],
    ['no slices', { id: 'g', slices: 0, slice: 0 }, 'generation.slices'],
    ['too many slices', { id: 'g', slices: 100_001, slice: 0 }, 'generation.slices'],
    ['an empty id', { id: '', slices: 2, slice: 0 }, 'generation.id'],
    ['an id of 201 characters', { id: 'x'.repeat(201), slices: 2, slice: 0 }, 'generation.id'],
    ['an id that is not a string', { id: 7, slices: 2, slice: 0 }, 'generation.id'],
    ['an id with a lone surrogate', { id: 'night\uD800', slices: 2, slice: 0 }, 'generation.id'],
    ['an unknown field', { id: 'g', slices: 2, slice: 0, slize: 1 }, 'generation.slize'],
    ['no object', 'g', 'generation'],
  ])('%s', async (_, generation, field) => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema: fresh() }) });
    const run = sync.run(nightly(), { removed: 'deactivate', generation: generation as never });
    await expect(run).rejects.toBeInstanceOf(CrmValidationError);
    await expect(run).rejects.toMatchObject({ issues: [expect.objectContaining({ field })] });
    expect(fake.requests).toHaveLength(0);
  });

  test('an id the journal holds with another slice count is refused, nothing sent', async () => {
    const { fake, worker } = await tenant();
    const w = worker();
    const source = nightly();
    await w.sync.run(sliceOf(source, 0, 12), { generation: { id: 'g', slices: 12, slice: 0 } });
    const before = fake.requests.length;
    const run = w.sync.run(sliceOf(source, 0, 6), {
      removed: 'deactivate',
      generation: { id: 'g', slices: 6, slice: 0 },
    });
    await expect(run).rejects.toMatchObject({
      name: 'CrmValidationError',
      issues: [
        expect.objectContaining({ field: 'generation.slices', message: expect.stringContaining('has 12 slices') }),
      ],
    });
    expect(fake.requests.length).toBe(before);
  });

  test.each([
    ['memoryJournal()', () => memoryJournal()],
    ['sqliteJournal()', () => sqliteJournal(join(mkdtempSync(join(tmpdir(), 'gen-')), 'sync.db'))],
  ])('%s refuses a generation with a CrmValidationError naming the journal that keeps them', async (_, journal) => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: journal() });
    const run = sync.run(nightly(), { removed: 'deactivate', generation: { id: 'g', slices: 2, slice: 0 } });
    await expect(run).rejects.toMatchObject({
      name: 'CrmValidationError',
      issues: [expect.objectContaining({ field: 'generation', message: expect.stringContaining('postgresJournal()') })],
    });
    expect(fake.requests).toHaveLength(0);
  });

  test("removed: 'deactivate' on a shared journal without a generation is still refused, and says how to join one", async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema: fresh() }) });
    await expect(sync.run(nightly(), { removed: 'deactivate' })).rejects.toThrow(/generation: \{ id, slices, slice \}/);
    expect(fake.requests).toHaveLength(0);
  });
});
