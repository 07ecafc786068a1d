import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import type { SyncAccountRecord, SyncPlanEntry } from '../../src/sync/types';
import { erpSource, syncHarness } from '../support/sync';

/** `n` accounts, as an async generator that counts what it has given (`read.count`). */
function countedAccounts(n: number) {
  const read = { count: 0 };
  async function* accounts(): AsyncGenerator<SyncAccountRecord> {
    for (let i = 0; i < n; i++) {
      read.count++;
      yield { key: `A${i}`, data: { name: `Account ${i}` } };
    }
  }
  return { read, accounts: accounts() };
}

/** Lets the plan go on as far as it can without the test: event-loop turns, not time. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('CrmSync.plan() with onEntry', () => {
  test('hands out every entry, removals too, in the order plan().entries has them, keeps none, and counts them all', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(3));
    sent();
    const source = () => {
      const s = erpSource(3, (type, i) => (type === 'accounts' && i === 0 ? { industry: 'Energy' } : {}));
      return { accounts: [...s.accounts.slice(0, 2), { key: 'A9', data: { name: 'New' } }], contacts: s.contacts };
    };
    const kept = await sync.plan(source(), { removed: 'deactivate' });

    const handed: SyncPlanEntry[] = [];
    const plan = await sync.plan(source(), { removed: 'deactivate', onEntry: (entry) => void handed.push(entry) });

    expect(handed).toEqual(kept.entries);
    expect(handed.map((e) => e.action)).toEqual(expect.arrayContaining(['update', 'create', 'deactivate']));
    expect(plan.entries).toEqual([]);
    expect(plan.counts).toEqual(kept.counts);
    expect(sent()).toEqual([]);
  });

  test('hands out the first entries before the source is read to its end', async () => {
    const { sync } = await syncHarness();
    const { read, accounts } = countedAccounts(3000);
    const readAtEntry: number[] = [];
    const plan = await sync.plan({ accounts }, { onEntry: () => void readAtEntry.push(read.count) });

    expect(plan.counts.create).toBe(3000);
    expect(readAtEntry).toHaveLength(3000);
    // Each batch of 500 records is handed out before the next is read.
    expect(readAtEntry[0]).toBe(500);
    expect(readAtEntry[2999]).toBe(3000);
  });

  test('reads no further batch while a promise onEntry returned is pending', async () => {
    const { sync } = await syncHarness();
    const { read, accounts } = countedAccounts(1500);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let handed = 0;
    const planned = sync.plan({ accounts }, { onEntry: () => (handed++ === 0 ? held : undefined) });

    await turns(50);
    expect([read.count, handed]).toEqual([500, 500]);
    release();
    const plan = await planned;
    expect([read.count, handed, plan.counts.create]).toEqual([1500, 1500, 1500]);
  });

  test('rejects with what onEntry threw, or its promise rejected with, and reads no further batch', async () => {
    const { sync } = await syncHarness();
    const thrown = new Error('disk full');
    const first = countedAccounts(2000);
    await expect(
      sync.plan(
        { accounts: first.accounts },
        {
          onEntry: () => {
            throw thrown;
          },
        },
      ),
    ).rejects.toBe(thrown);
    expect(first.read.count).toBe(500);

    const second = countedAccounts(2000);
    let calls = 0;
    await expect(
      sync.plan(
        { accounts: second.accounts },
        { onEntry: () => (calls++ === 10 ? Promise.reject(thrown) : Promise.resolve()) },
      ),
    ).rejects.toBe(thrown);
    expect(second.read.count).toBe(500);
  });

  test('an onEntry that is not a function is refused before the journal is read', async () => {
    const { sync } = await syncHarness();
    const { read, accounts } = countedAccounts(10);
    const refused = await sync.plan({ accounts }, { onEntry: 'stdout' as never }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CrmValidationError);
    expect(refused).toMatchObject({ issues: [{ field: 'onEntry', message: 'A function' }] });
    expect(read.count).toBe(0);
  });
});
