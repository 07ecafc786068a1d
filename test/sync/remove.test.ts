import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { refusalOf } from '../../src/sync/remove';
import type { SyncAccountRecord, SyncRefusedRemoval } from '../../src/sync/types';
import { erpSource, syncHarness } from '../support/sync';

/** `n` accounts, A0 to A(n-1). */
const accounts = (n: number): SyncAccountRecord[] => erpSource(n).accounts;

/** A harness whose journal holds `n` synced accounts, and the requests sent since. */
async function synced(n: number) {
  const harness = await syncHarness();
  const first = await harness.sync.run({ accounts: accounts(n) });
  expect(first.created).toBe(n);
  harness.sent();
  return harness;
}

const refused = (over: Partial<SyncRefusedRemoval>): SyncRefusedRemoval => ({
  type: 'accounts',
  wouldDeactivate: 50,
  synced: 50,
  limit: 10,
  reason: 'limit',
  unusableKeys: 0,
  ...over,
});

describe('the removal guard', () => {
  test('an empty list deactivates nothing of 50 synced accounts, and the report says why', async () => {
    const { sync, sent, fake } = await synced(50);
    const report = await sync.run({ accounts: [] }, { removed: 'deactivate' });

    expect(sent()).toEqual([]);
    expect(report.deactivated).toBe(0);
    expect(report.refusedRemovals).toEqual([refused({})]);
    expect([...fake.store.accounts.values()].filter((a) => a.status === 'inactive')).toEqual([]);
  });

  test('a list cut after 5 of its 50 records deactivates none of the 45, and the rest of the run goes on', async () => {
    const { sync, sent } = await synced(50);
    const cut = accounts(5).map((a, i) => (i === 0 ? { ...a, data: { ...a.data, industry: 'Energy' } } : a));
    const report = await sync.run(
      { accounts: [...cut, { key: 'NEW', data: { name: 'New customer' } }], contacts: [] },
      { removed: 'deactivate' },
    );

    expect(sent().sort()).toEqual(['POST createAccount', 'PUT updateAccount']);
    expect(report).toMatchObject({ created: 1, updated: 1, unchanged: 4, deactivated: 0 });
    expect(report.refusedRemovals).toEqual([refused({ wouldDeactivate: 45 })]);
  });

  test("a list whose records' keys all failed is incomplete: it removes nothing, whatever maxRemoved allows", async () => {
    const { sync, sent } = await synced(50);
    const unusable = [
      ...accounts(47).map((a) => ({ ...a, key: 42 })),
      { data: { name: 'No key' } },
      { key: '', data: { name: 'Empty key' } },
      { key: 'cut \uD83D', data: { name: 'A lone surrogate' } },
    ];
    const options = { removed: 'deactivate', maxRemoved: '100%' } as const;
    const plan = await sync.plan({ accounts: unusable as never }, options);
    const report = await sync.run({ accounts: unusable as never }, options);

    expect(sent()).toEqual([]);
    expect(report.failed).toHaveLength(50);
    expect(report.deactivated).toBe(0);
    expect(report.refusedRemovals).toEqual([
      refused({ limit: 50, reason: 'incomplete', unusableKeys: 50, wouldDeactivate: 50 }),
    ]);
    expect(plan.refusedRemovals).toEqual(report.refusedRemovals);
    expect(plan.counts).toMatchObject({ invalid: 50, deactivate: 50 });
  });

  test('a record whose key was read counts as present, though its data failed', async () => {
    const { sync, sent } = await synced(20);
    const report = await sync.run(
      { accounts: accounts(20).map((a) => ({ ...a, data: { name: '' } })) },
      { removed: 'deactivate' },
    );

    expect(sent()).toEqual([]);
    expect(report.failed).toHaveLength(20);
    expect(report.refusedRemovals).toEqual([]);
  });

  test('the plan shows the refusal, and still counts every deactivate entry', async () => {
    const { sync } = await synced(50);
    const plan = await sync.plan({ accounts: [] }, { removed: 'deactivate' });

    expect(plan.counts.deactivate).toBe(50);
    expect(plan.entries.filter((e) => e.action === 'deactivate')).toHaveLength(50);
    expect(plan.refusedRemovals).toEqual([refused({})]);
    expect((await sync.plan({ accounts: [] }, { removed: 'deactivate', maxRemoved: 50 })).refusedRemovals).toEqual([]);
  });

  test("a small tenant's nightly removals go through: 10 records, or 10 % of those synced", async () => {
    const small = await synced(8);
    const few = await small.sync.run({ accounts: accounts(3) }, { removed: 'deactivate' });
    expect(few).toMatchObject({ deactivated: 5, refusedRemovals: [] });

    const large = await synced(120);
    // 12 of 120: more than 10 records, and not more than 10 %.
    const report = await large.sync.run({ accounts: accounts(108) }, { removed: 'deactivate' });
    expect(report).toMatchObject({ deactivated: 12, refusedRemovals: [] });
    expect(large.sent()).toEqual(Array(12).fill('PUT updateAccount'));
  });

  test("maxRemoved as a count or a share of the synced records: past it the type's removals are refused", async () => {
    const { sync, sent } = await synced(100);
    const kept = { accounts: accounts(88) }; // 12 removed of 100 synced

    const byDefault = await sync.plan(kept, { removed: 'deactivate' });
    expect(byDefault.refusedRemovals).toEqual([refused({ wouldDeactivate: 12, synced: 100, limit: 10 })]);
    const share = await sync.plan(kept, { removed: 'deactivate', maxRemoved: '11.9%' });
    expect(share.refusedRemovals).toEqual([refused({ wouldDeactivate: 12, synced: 100, limit: 11 })]);
    const count = await sync.run(kept, { removed: 'deactivate', maxRemoved: 11 });
    expect(count).toMatchObject({
      deactivated: 0,
      refusedRemovals: [refused({ wouldDeactivate: 12, synced: 100, limit: 11 })],
    });
    expect(sent()).toEqual([]);

    const allowed = await sync.run(kept, { removed: 'deactivate', maxRemoved: '12%' });
    expect(allowed).toMatchObject({ deactivated: 12, refusedRemovals: [] });
    expect(sent()).toEqual(Array(12).fill('PUT updateAccount'));
  });

  test("the synced figure is the journal's before the run: the run's own creates do not dilute it, as in its plan", async () => {
    const { sync, sent } = await synced(20);
    // 12 of 20 removed, 30 new: 50 synced after the run, but 12 is 60 % of what was there.
    const source = {
      accounts: [
        ...accounts(8),
        ...Array.from({ length: 30 }, (_, i) => ({ key: `N${i}`, data: { name: `New ${i}` } })),
      ],
    };
    const plan = await sync.plan(source, { removed: 'deactivate' });
    const report = await sync.run(source, { removed: 'deactivate' });

    expect(plan.refusedRemovals).toEqual([refused({ wouldDeactivate: 12, synced: 20 })]);
    expect(report.refusedRemovals).toEqual(plan.refusedRemovals);
    expect(report.created).toBe(30);
    expect(sent()).toEqual(Array(30).fill('POST createAccount'));
  });

  test('opportunities and activities, which are only reported, are guarded the same: a refused type lists none in skipped', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(12));
    sent();
    const report = await sync.run({ opportunities: [], activities: [] }, { removed: 'deactivate' });

    expect(sent()).toEqual([]);
    expect(report.skipped).toEqual([]);
    expect(report.refusedRemovals).toEqual([
      refused({ type: 'opportunities', wouldDeactivate: 12, synced: 12 }),
      refused({ type: 'activities', wouldDeactivate: 24, synced: 24 }),
    ]);
  });

  test('a share is taken exactly, not as floating point rounds it', () => {
    const refusedAt = (synced: number, maxRemoved: `${number}%`) =>
      refusalOf('accounts', { wouldDeactivate: 57, synced, unusableKeys: 0 }, maxRemoved);
    // 0.57 * 10,000 / 100 is 56.99999999999999 in floating point.
    expect(refusedAt(10_000, '0.57%')).toBeUndefined();
    expect(refusedAt(10_000, '0.569%')).toMatchObject({ limit: 56 });
  });

  test('a bad maxRemoved is refused before anything is read or sent', async () => {
    const { sync, sent } = await syncHarness();
    for (const maxRemoved of [
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      '5',
      '101%',
      '-5%',
      '5 %',
      '%',
      '.5%',
      5n,
    ]) {
      await expect(sync.run({ accounts: [] }, { removed: 'deactivate', maxRemoved } as never)).rejects.toBeInstanceOf(
        CrmValidationError,
      );
      await expect(sync.plan({ accounts: [] }, { maxRemoved } as never)).rejects.toThrow(/maxRemoved/);
    }
    expect(sent()).toEqual([]);
  });
});
