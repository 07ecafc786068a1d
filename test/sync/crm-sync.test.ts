import { describe, expect, test } from 'vitest';
import { CrmAuthenticationError, CrmValidationError } from '../../src/index';
import { memoryJournal } from '../../src/sync/memory-journal';
import { erpSource, syncHarness } from '../support/sync';

describe('CrmSync.run()', () => {
  test('an initial load creates every record, parents first, with the references resolved', async () => {
    const { sync, fake, sent } = await syncHarness();
    const report = await sync.run(erpSource(3));

    expect(report).toMatchObject({
      created: 18,
      updated: 0,
      unchanged: 0,
      deactivated: 0,
      failed: [],
      inDoubt: [],
      skipped: [],
    });
    expect(report.byType.contacts).toEqual({ created: 6, updated: 0, unchanged: 0, deactivated: 0 });
    const calls = sent();
    expect(calls).toHaveLength(18);
    expect(calls.slice(0, 3)).toEqual(Array(3).fill('POST createAccount'));
    const accountId = await sync.idOf('accounts', 'A1');
    const contact = [...fake.store.contacts.values()].find((c) => c.email === 'person3@example.test');
    expect(contact?.accountId).toBe(accountId);
    const opportunity = fake.store.opportunities.get(String(await sync.idOf('opportunities', 'O1')));
    expect(opportunity).toMatchObject({
      accountId,
      contactId: contact?.id === undefined ? undefined : await sync.idOf('contacts', 'C2'),
    });
    expect([...fake.store.activities.values()].filter((a) => a.relatedToId === opportunity?.id)).toHaveLength(2);
  });

  test('an unchanged re-run sends no request', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(5));
    sent();
    const report = await sync.run(erpSource(5));

    expect(sent()).toEqual([]);
    expect(report).toMatchObject({ created: 0, updated: 0, unchanged: 30, failed: [], skipped: [] });
  });

  test('a changed record is updated with a PUT of only its changed fields; a changed activity is skipped', async () => {
    const { sync, fake } = await syncHarness();
    await sync.run(erpSource(10));
    fake.requests.length = 0;
    const report = await sync.run(
      erpSource(10, (type, i) =>
        i % 10 === 3
          ? type === 'accounts'
            ? { industry: 'Energy' }
            : type === 'contacts'
              ? { firstName: 'Renamed' }
              : type === 'opportunities'
                ? { amount: 99 }
                : { subject: 'Edited' }
          : {},
      ),
    );

    const puts = fake.requests.map((r) => ({ endpoint: r.endpoint, path: r.path, body: r.body }));
    expect(puts).toEqual([
      {
        endpoint: 'updateAccount',
        path: `/integrations/v1/accounts/${await sync.idOf('accounts', 'A3')}`,
        body: { industry: 'Energy' },
      },
      {
        endpoint: 'updateContact',
        path: `/integrations/v1/contacts/${await sync.idOf('contacts', 'C3')}`,
        body: { firstName: 'Renamed' },
      },
      {
        endpoint: 'updateContact',
        path: `/integrations/v1/contacts/${await sync.idOf('contacts', 'C13')}`,
        body: { firstName: 'Renamed' },
      },
      {
        endpoint: 'updateOpportunity',
        path: `/integrations/v1/opportunities/${await sync.idOf('opportunities', 'O3')}`,
        body: { amount: 99 },
      },
    ]);
    expect(report).toMatchObject({ updated: 4, created: 0 });
    expect(report.skipped).toEqual([
      { type: 'activities', key: 'E3', reason: expect.stringMatching(/changed \(subject\).*cannot update/) },
      { type: 'activities', key: 'E13', reason: expect.stringMatching(/changed \(subject\)/) },
    ]);
    // Updated once: the next run finds them unchanged.
    fake.requests.length = 0;
    await sync.run(erpSource(10, (type, i) => (i % 10 === 3 && type === 'accounts' ? { industry: 'Energy' } : {})));
    expect(fake.requests.map((r) => r.endpoint)).toEqual(['updateContact', 'updateContact', 'updateOpportunity']);
  });

  test('a key repeated in a later batch, once its first record is created, still fails as repeated, and its first keeps its id', async () => {
    const { sync, fake } = await syncHarness();
    // A list is read in batches of 500: the repeat comes once the first A0 has its id.
    const accounts = Array.from({ length: 500 }, (_, i) => ({ key: `A${i}`, data: { name: `Account ${i}` } }));
    const report = await sync.run({
      accounts: [...accounts, { key: 'A0', data: { name: 'Again' } }],
      contacts: [{ key: 'C0', accountKey: 'A0', data: { firstName: 'Child' } }],
    });

    expect(report.created).toBe(501);
    expect(report.failed.map((f) => [f.key, f.error.message])).toEqual([['A0', expect.stringMatching(/Repeated/)]]);
    const child = [...fake.store.contacts.values()][0];
    expect(child?.accountId).toBe(await sync.idOf('accounts', 'A0'));
  });

  test('bad records are failed entries that send nothing, and the others go on', async () => {
    const { sync, sent } = await syncHarness();
    const report = await sync.run({
      accounts: [
        { key: 'A1', data: { name: 'Good' } },
        { key: 'A1', data: { name: 'Repeated key' } },
        { key: '', data: { name: 'Empty key' } },
        { key: 'A2', data: { name: '' } },
        { key: 'A3', data: { name: 'Unknown field', colour: 'red' } as never },
      ],
      contacts: [
        { key: 'C1', accountKey: 'A1', data: { email: 'not-an-email' } },
        { key: 'C2', accountKey: 'nope', data: { firstName: 'Orphan' } },
        { key: 'C3', accountKey: 'A1', data: { accountId: 'acc_x', firstName: 'Both' } },
        { key: 'C4', accountKey: 'A2', data: { firstName: 'Child of a failed account' } },
        { key: 'C5', accountKey: 'A1', data: { firstName: 'Fine' } },
      ],
    });

    expect(sent()).toEqual(['POST createAccount', 'POST createContact']);
    expect(report.created).toBe(2);
    const why = Object.fromEntries(report.failed.map((f) => [`${f.type}/${f.key}`, f.error]));
    expect(Object.keys(why).sort()).toEqual([
      'accounts/',
      'accounts/A1',
      'accounts/A2',
      'accounts/A3',
      'contacts/C1',
      'contacts/C2',
      'contacts/C3',
    ]);
    for (const error of Object.values(why)) expect(error).toBeInstanceOf(CrmValidationError);
    expect(why['accounts/A1']?.message).toMatch(/Repeated/);
    expect(why['accounts/']?.message).toMatch(/key: Required/);
    expect(why['accounts/A2']?.message).toMatch(/data\.name/);
    expect(why['accounts/A3']?.message).toMatch(/data\.colour/);
    expect(why['contacts/C1']?.message).toMatch(/data\.email/);
    expect(why['contacts/C2']?.message).toMatch(/accountKey.*No account has key "nope"/);
    expect(why['contacts/C3']?.message).toMatch(/accountKey and data\.accountId/);
    expect(report.skipped).toEqual([
      { type: 'contacts', key: 'C4', reason: expect.stringMatching(/account "A2" failed/) },
    ]);
    expect(await sync.idOf('accounts', 'A1')).toEqual(expect.any(String));
  });

  test('the first call refused 401 rejects the run, and leaves the journal without an intent', async () => {
    const { sync, fake, journal } = await syncHarness();
    fake.failNext({ status: 401 });

    await expect(sync.run(erpSource(2))).rejects.toBeInstanceOf(CrmAuthenticationError);
    expect(await journal.pending(fake.tenantId)).toEqual([]);
  });

  test('bad run options and sources are refused before anything is read or sent', async () => {
    const { sync, sent } = await syncHarness();
    await expect(sync.run(erpSource(1), { concurrency: 0 })).rejects.toBeInstanceOf(CrmValidationError);
    await expect(sync.run({ leads: [] } as never)).rejects.toThrow(/Unknown list/);
    await expect(sync.run({ accounts: 5 } as never)).rejects.toThrow(/Iterable/);
    await expect(sync.run({ accounts: 'A1,A2' } as never)).rejects.toThrow(/Iterable/);
    expect(sent()).toEqual([]);
  });
});

describe('CrmSync.plan()', () => {
  test('says what a run would do, and sends nothing', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(2));
    sent();
    const plan = await sync.plan(
      {
        accounts: [
          { key: 'A0', data: { name: 'Account 0', industry: 'Energy' } },
          { key: 'A9', data: { name: 'New' } },
        ],
        contacts: [{ key: 'C9', accountKey: 'A9', data: { firstName: 'New' } }],
      },
      { removed: 'deactivate' },
    );

    expect(sent()).toEqual([]);
    expect(plan.entries).toEqual([
      { type: 'accounts', key: 'A0', action: 'update', changes: { industry: { from: 'Retail', to: 'Energy' } } },
      { type: 'accounts', key: 'A9', action: 'create' },
      { type: 'accounts', key: 'A1', action: 'deactivate' },
      { type: 'contacts', key: 'C9', action: 'create' },
      { type: 'contacts', key: 'C0', action: 'deactivate' },
      { type: 'contacts', key: 'C1', action: 'deactivate' },
      { type: 'contacts', key: 'C2', action: 'deactivate' },
      { type: 'contacts', key: 'C3', action: 'deactivate' },
    ]);
    expect(plan.counts).toEqual({ create: 2, update: 1, unchanged: 0, skip: 0, deactivate: 5, blocked: 0, invalid: 0 });
  });

  test('an invalid, blocked or skipped entry says why, in the words the run would use', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(1));
    sent();
    const source = erpSource(1);
    const records = {
      accounts: [...source.accounts, { key: 'A2', data: { name: '' } }],
      contacts: [
        ...source.contacts,
        { key: 'C8', accountKey: 'nope', data: { firstName: 'Orphan' } },
        { key: 'C9', accountKey: 'A2', data: { firstName: 'Child of a bad account' } },
      ],
      opportunities: source.opportunities,
      activities: source.activities.map((a, i) => (i === 0 ? { ...a, data: { ...a.data, subject: 'Edited' } } : a)),
    };
    const plan = await sync.plan(records);
    const run = await sync.run(records);

    const why = Object.fromEntries(plan.entries.filter((e) => e.reason).map((e) => [`${e.type}/${e.key}`, e]));
    expect(Object.keys(why).sort()).toEqual(['accounts/A2', 'activities/E0', 'contacts/C8', 'contacts/C9']);
    expect(why['accounts/A2']).toMatchObject({ action: 'invalid', reason: expect.stringMatching(/data\.name/) });
    expect(why['contacts/C8']).toMatchObject({
      action: 'invalid',
      reason: expect.stringMatching(/No account has key "nope"/),
    });
    expect(why['contacts/C9']).toMatchObject({
      action: 'blocked',
      reason: expect.stringMatching(/account "A2" failed/),
    });
    expect(why['activities/E0']).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(/changed \(subject\)/),
    });
    // The same words as the run's own report.
    for (const f of run.failed) expect(why[`${f.type}/${f.key}`]?.reason).toBe(f.error.message);
    for (const s of run.skipped) expect(why[`${s.type}/${s.key}`]?.reason).toBe(s.reason);
    expect(run.failed.length + run.skipped.length).toBe(4);
  });

  test('an account in doubt is a blocked entry that says how to settle it', async () => {
    const { sync, fake } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: true, status: 502 });
    await sync.run(erpSource(1));

    const plan = await sync.plan(erpSource(1));
    expect(plan.entries.find((e) => e.key === 'A0')).toEqual({
      type: 'accounts',
      key: 'A0',
      action: 'blocked',
      reason: expect.stringMatching(/in doubt.*sync\.resolve\(\).*inDoubt: 'recreate'/),
    });
    expect(plan.entries.find((e) => e.key === 'C0')).toMatchObject({
      action: 'blocked',
      reason: expect.stringMatching(/account "A0" is in doubt/),
    });
  });
});

describe('removed records', () => {
  test("with removed: 'deactivate', a complete list's missing accounts and contacts are set inactive; others reported", async () => {
    const { sync, fake, sent } = await syncHarness();
    await sync.run(erpSource(3));
    sent();
    const source = erpSource(3);
    const report = await sync.run(
      {
        accounts: source.accounts.filter((r) => r.key !== 'A2'),
        contacts: source.contacts.filter((r) => r.key !== 'C0'),
        opportunities: source.opportunities.filter((r) => r.key !== 'O1'),
      },
      { removed: 'deactivate' },
    );

    expect(sent()).toEqual(['PUT updateAccount', 'PUT updateContact']);
    expect(fake.store.accounts.get(String(await sync.idOf('accounts', 'A2')))?.status).toBe('inactive');
    expect(fake.store.contacts.get(String(await sync.idOf('contacts', 'C0')))?.status).toBe('inactive');
    expect(report).toMatchObject({
      deactivated: 2,
      byType: { accounts: { deactivated: 1 }, contacts: { deactivated: 1 } },
    });
    expect(report.skipped).toEqual([
      { type: 'opportunities', key: 'O1', reason: expect.stringMatching(/cannot remove/) },
    ]);

    // Back in its list: active again.
    const back = await sync.run(erpSource(3).accounts ? { accounts: erpSource(3).accounts } : {}, {
      removed: 'deactivate',
    });
    expect(back.updated).toBe(1);
    expect(fake.store.accounts.get(String(await sync.idOf('accounts', 'A2')))?.status).toBe('active');
  });

  test("with removed: 'keep' (the default), or a list not given, nothing is removed", async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(2));
    sent();
    await sync.run({ accounts: [] });
    await sync.run({ accounts: [], contacts: undefined }, { removed: 'deactivate' });
    expect(sent()).toEqual(['PUT updateAccount', 'PUT updateAccount']);
  });

  test('a list that threw removes nothing, and the run rejects with its error', async () => {
    const { sync, sent } = await syncHarness();
    await sync.run(erpSource(2));
    sent();
    function* broken() {
      yield { key: 'A0', data: { name: 'Account 0', industry: 'Retail' } };
      throw new Error('ERP connection lost');
    }
    await expect(sync.run({ accounts: broken() }, { removed: 'deactivate' })).rejects.toThrow('ERP connection lost');
    expect(sent()).toEqual([]);
  });
});

test('a journal of its own per test (memoryJournal)', () => {
  expect(memoryJournal()).not.toBe(memoryJournal());
});
