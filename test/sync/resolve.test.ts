import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/core/errors';
import { memoryJournal } from '../../src/sync/memory-journal';
import { syncHarness, withClaims } from '../support/sync';

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

  test('with an id the journal maps to another key is refused, even with force: one CRM record is one key', async () => {
    const { sync, fake, journal } = await syncHarness();
    await sync.run({ accounts });
    const idOfA0 = (await journal.get(fake.tenantId, 'accounts', ['A0'])).get('A0')?.crmId as string;
    fake.failNext({ endpoint: 'createAccount', applied: false, drop: true });
    expect((await sync.run({ accounts: [{ key: 'A2', data: { name: 'Account 2' } }] })).inDoubt).toHaveLength(1);

    for (const options of [{}, { force: true }]) {
      const error = await sync.resolve('accounts', 'A2', idOfA0, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrmValidationError);
      expect((error as Error).message).toMatch(new RegExp(`accounts id "${idOfA0}" is already "A0"'s in the journal`));
    }
    expect((await journal.get(fake.tenantId, 'accounts', ['A2'])).get('A2')).toMatchObject({ state: 'inDoubt' });
    // Settled to its own record instead, the same call is accepted.
    await sync.resolve('accounts', 'A2', null);
    expect(await sync.run({ accounts: [...accounts, { key: 'A2', data: { name: 'Account 2' } }] })).toMatchObject({
      created: 1,
      unchanged: 2,
    });
  });

  test('refuses a force that is not a boolean', async () => {
    const { sync } = await syncHarness();
    await expect(sync.resolve('accounts', 'A0', null, { force: 'yes' as never })).rejects.toThrow(CrmValidationError);
  });
});

/* sync.resolve([...]): many records at once, all or none (issue 46, 3). */

const many = Array.from({ length: 6 }, (_, i) => ({ key: `M${i}`, data: { name: `Many ${i}` } }));

/** Six accounts whose creates were stored and their answers lost: all in doubt. */
async function sixInDoubt() {
  const harness = await syncHarness();
  harness.fake.failNext({ endpoint: 'createAccount', applied: true, drop: true, times: 6 });
  const report = await harness.sync.run({ accounts: many });
  expect(report.inDoubt).toHaveLength(6);
  const idOfName = (name: string) =>
    [...harness.fake.store.accounts.values()].find((a) => a.name === name)?.id as string;
  return { ...harness, idOfName };
}

describe('sync.resolve(records)', () => {
  test('settles every record given in one change: the next run sends nothing and creates no second account', async () => {
    const { sync, fake, journal, idOfName, sent } = await sixInDoubt();
    await sync.resolve([
      ...many.slice(0, 5).map(({ key, data }) => ({ type: 'accounts' as const, key, crmId: idOfName(data.name) })),
      // Said not there (its create was in fact stored): the next run creates it, as asked.
      { type: 'accounts', key: 'M5', crmId: null },
    ]);
    expect(await journal.pending(fake.tenantId)).toEqual([]);
    expect(await sync.idOf('accounts', 'M3')).toBe(idOfName('Many 3'));
    sent();
    const report = await sync.run({ accounts: many });
    expect(sent()).toEqual(['POST createAccount']);
    expect(report).toMatchObject({ created: 1, unchanged: 5, inDoubt: [] });
  });

  test('refuses the whole list when one record is not in doubt, naming it by its index, and writes nothing', async () => {
    const { sync, fake, journal, idOfName } = await sixInDoubt();
    await sync.resolve('accounts', 'M0', idOfName('Many 0'));

    const error = await sync
      .resolve([
        { type: 'accounts', key: 'M1', crmId: idOfName('Many 1') },
        { type: 'accounts', key: 'M0', crmId: null },
        { type: 'accounts', key: 'never-synced', crmId: 'acc_x' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((issue) => issue.path)).toEqual([
      [1, 'crmId'],
      [2, 'crmId'],
    ]);
    expect((error as Error).message).toMatch(/accounts "M0" is synced as .*, not in doubt/);
    expect((error as Error).message).toMatch(/"never-synced" is not in the journal, not in doubt/);
    // M1 is not settled either: all or none.
    expect((await journal.pending(fake.tenantId)).map((e) => e.key)).toEqual(['M1', 'M2', 'M3', 'M4', 'M5']);
  });

  test('never gives a CRM id the journal maps to another key, even with force, nor one id to two keys', async () => {
    const { sync, fake, journal, idOfName } = await sixInDoubt();
    await sync.resolve('accounts', 'M0', idOfName('Many 0'));

    await expect(
      sync.resolve([{ type: 'accounts', key: 'M1', crmId: idOfName('Many 0') }], { force: true }),
    ).rejects.toThrow(/is already "M0"'s in the journal/);
    await expect(
      sync.resolve([
        { type: 'accounts', key: 'M1', crmId: idOfName('Many 1') },
        { type: 'accounts', key: 'M2', crmId: idOfName('Many 1') },
      ]),
    ).rejects.toThrow(/is given to two keys/);
    await expect(
      sync.resolve([
        { type: 'accounts', key: 'M1', crmId: idOfName('Many 1') },
        { type: 'accounts', key: 'M1', crmId: null },
      ]),
    ).rejects.toThrow(/given twice/);
    expect(await journal.pending(fake.tenantId)).toHaveLength(5);
  });

  test('accepts a record the journal already holds under the same id, and leaves it as it is', async () => {
    const { sync, fake, journal, idOfName } = await sixInDoubt();
    await sync.resolve('accounts', 'M0', idOfName('Many 0'));
    const before = (await journal.get(fake.tenantId, 'accounts', ['M0'])).get('M0');

    await sync.resolve([
      { type: 'accounts', key: 'M0', crmId: idOfName('Many 0') },
      { type: 'accounts', key: 'M1', crmId: idOfName('Many 1') },
    ]);
    expect((await journal.get(fake.tenantId, 'accounts', ['M0'])).get('M0')).toEqual(before);
    expect(await sync.idOf('accounts', 'M1')).toBe(idOfName('Many 1'));
  });

  test('with force, settles as absent a record that is synced', async () => {
    const { sync, idOfName } = await sixInDoubt();
    await sync.resolve('accounts', 'M0', idOfName('Many 0'));
    await sync.resolve([{ type: 'accounts', key: 'M0', crmId: null }], { force: true });
    expect(await sync.idOf('accounts', 'M0')).toBeUndefined();
  });

  test('refuses records of the wrong shape before reading the journal, each by its index', async () => {
    const { sync } = await syncHarness();
    const error = await sync
      .resolve([
        { type: 'accounts', key: 'ok', crmId: null },
        { type: 'deals' as never, key: '', crmId: '' },
      ])
      .catch((e: unknown) => e);
    expect((error as CrmValidationError).issues.map((issue) => issue.path)).toEqual([
      [1, 'type'],
      [1, 'key'],
      [1, 'crmId'],
    ]);
    await expect(sync.resolve('not an array' as never)).rejects.toThrow(CrmValidationError);
  });
});

/**
 * A shared journal where M0 and M1 were being created: M0's run died (no claim holds it), M1's
 * live run still claims it.
 */
async function sharedWithM1Claimed() {
  const store = memoryJournal();
  const { sync, fake } = await syncHarness({
    journal: withClaims(store, {
      held: async (_tenant, _runId, _type, keys) =>
        new Map(keys.filter((k) => k === 'M1').map((k) => [k, Date.now() + 30_000])),
    }),
  });
  await store.open();
  const sending = {
    state: 'sending' as const,
    crmId: undefined,
    hash: 'h',
    data: '{"name":"Many 1"}',
    attemptedAt: undefined,
    requestId: undefined,
    runId: 'run_other',
  };
  await store.write(fake.tenantId, {
    put: [
      { type: 'accounts', key: 'M0', ...sending, runId: 'run_dead' },
      { type: 'accounts', key: 'M1', ...sending },
    ],
  });
  return { sync, fake, store };
}

test("sync.resolve(records) on a shared journal refuses a key another live run's claim holds: it is being created now", async () => {
  const { sync, fake, store } = await sharedWithM1Claimed();

  await expect(
    sync.resolve([
      { type: 'accounts', key: 'M0', crmId: 'acc_0' },
      { type: 'accounts', key: 'M1', crmId: 'acc_1' },
    ]),
  ).rejects.toThrow(/\[1\]\.key: accounts "M1" is being created by a live run/);
  expect((await store.get(fake.tenantId, 'accounts', ['M0'])).get('M0')?.state).toBe('sending');
});

test("sync.resolve(type, key, …) on a shared journal refuses a key another live run's claim holds, as absent or found", async () => {
  const { sync, fake, store } = await sharedWithM1Claimed();

  for (const crmId of [null, 'acc_1']) {
    await expect(sync.resolve('accounts', 'M1', crmId, { force: true })).rejects.toThrow(
      /accounts "M1" is being created by a live run/,
    );
  }
  expect((await store.get(fake.tenantId, 'accounts', ['M1'])).get('M1')?.state).toBe('sending');
});
