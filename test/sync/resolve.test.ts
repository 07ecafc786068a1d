import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/core/errors';
import { syncHarness } from '../support/sync';

/* sync.resolve(): settling as absent a record the CRM holds is a slip, refused without force (issue 45, 7). */

const accounts = [
  { key: 'A0', data: { name: 'Account 0' } },
  { key: 'A1', data: { name: 'Account 1' } },
];

describe('sync.resolve(type, key, null)', () => {
  test('of a synced record is refused, naming its state and the flag, and the journal keeps it', async () => {
    const { sync, fake, journal } = await syncHarness();
    await sync.run({ accounts });

    const error = await sync.resolve('accounts', 'A0', null).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as Error).message).toMatch(/accounts "A0" is synced, not in doubt/);
    expect((error as Error).message).toMatch(/force: true.*--force/);
    expect((await journal.get(fake.tenantId, 'accounts', ['A0'])).get('A0')).toMatchObject({ state: 'synced' });
    // The next run creates no second A0.
    expect(await sync.run({ accounts })).toMatchObject({ created: 0, unchanged: 2 });
    expect(fake.store.accounts.size).toBe(2);
  });

  test('of a deactivated record is refused the same way', async () => {
    const { sync, fake } = await syncHarness();
    await sync.run({ accounts });
    await sync.run({ accounts: accounts.slice(1) }, { removed: 'deactivate' });

    await expect(sync.resolve('accounts', 'A0', null)).rejects.toThrow(/accounts "A0" is deactivated, not in doubt/);
    expect(fake.store.accounts.size).toBe(2);
  });

  test('with { force: true } forgets a synced record, which the next run creates again', async () => {
    const { sync, fake, journal } = await syncHarness();
    await sync.run({ accounts });

    await sync.resolve('accounts', 'A0', null, { force: true });
    expect((await journal.get(fake.tenantId, 'accounts', ['A0'])).get('A0')).toBeUndefined();
    expect(await sync.run({ accounts })).toMatchObject({ created: 1, unchanged: 1 });
  });

  test('of a record in doubt, or one the journal does not hold, needs no force', async () => {
    const { sync, fake, journal } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: false, drop: true });
    const report = await sync.run({ accounts: accounts.slice(0, 1) });
    expect(report.inDoubt).toEqual([expect.objectContaining({ key: 'A0' })]);

    await sync.resolve('accounts', 'A0', null);
    await sync.resolve('accounts', 'never-synced', null);
    expect(await journal.pending(fake.tenantId)).toEqual([]);
  });

  test('refuses a force that is not a boolean', async () => {
    const { sync } = await syncHarness();
    await expect(sync.resolve('accounts', 'A0', null, { force: 'yes' as never })).rejects.toThrow(CrmValidationError);
  });
});
