import { describe, expect, test } from 'vitest';
import { erpSource, syncHarness } from '../support/sync';

const count = <T>(values: Iterable<T>, where: (value: T) => boolean) => [...values].filter(where).length;

describe('records in doubt', () => {
  test('a contact stored but whose answer was lost is found by one scan of the contact list and adopted, not sent again', async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createContact', applied: true, drop: true });
    const report = await sync.run(erpSource(2));

    expect(count(fake.store.contacts.values(), (c) => c.email === 'person0@example.test')).toBe(1);
    const calls = sent();
    expect(calls.filter((c) => c === 'POST createContact')).toHaveLength(4);
    expect(calls.filter((c) => c === 'GET listContacts')).toHaveLength(1);
    expect(report).toMatchObject({ created: 12, inDoubt: [], failed: [] });
    const adopted = [...fake.store.contacts.values()].find((c) => c.email === 'person0@example.test');
    expect(await sync.idOf('contacts', 'C0')).toBe(adopted?.id);
  });

  test('a contact whose create was lost before it was stored is not found, and is created again', async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createContact', drop: true });
    const report = await sync.run(erpSource(1));

    expect(count(fake.store.contacts.values(), (c) => c.email === 'person0@example.test')).toBe(1);
    expect(sent().filter((c) => c === 'POST createContact')).toHaveLength(3);
    expect(report).toMatchObject({ created: 6, inDoubt: [] });
  });

  test('an activity stored but answered 502 is found by a filtered list of its opportunity, by type and the date the sync gave it', async () => {
    const { sync, fake } = await syncHarness();
    fake.failNext({ endpoint: 'createActivity', applied: true, status: 502 });
    const report = await sync.run(erpSource(1));

    const created = fake.requests.find((r) => r.endpoint === 'createActivity');
    const activityDate = (created?.body as { activityDate?: string } | undefined)?.activityDate;
    expect(activityDate).toMatch(/^\d{4}-\d\d-\d\dT/);
    const look = fake.requests.find((r) => r.endpoint === 'listActivities');
    expect(look?.query).toMatchObject({ opportunityId: await sync.idOf('opportunities', 'O0'), type: 'note' });
    expect(Date.parse(String(look?.query.fromDate))).toBeLessThanOrEqual(Date.parse(String(activityDate)));
    expect(Date.parse(String(look?.query.toDate))).toBeGreaterThanOrEqual(Date.parse(String(activityDate)));
    expect(count(fake.store.activities.values(), (a) => a.subject === 'Note 0')).toBe(1);
    expect(report).toMatchObject({ created: 6, inDoubt: [] });
    // The date the sync added is not part of the record's hash: unchanged on the next run.
    fake.requests.length = 0;
    expect((await sync.run(erpSource(1))).unchanged).toBe(6);
    expect(fake.requests).toEqual([]);
  });

  test('an account whose answer was lost stays in doubt, listed with its request id; its children wait; nothing is sent again', async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: true, status: 502 });
    const report = await sync.run(erpSource(2));

    const failedAnswer = fake.requests.find((r) => r.endpoint === 'createAccount' && r.status === 502);
    expect(report.inDoubt).toEqual([
      { type: 'accounts', key: 'A0', requestId: failedAnswer?.requestId, sent: { name: 'Account 0' } },
    ]);
    expect(report.skipped.map((s) => `${s.type}/${s.key}`)).toEqual([
      'contacts/C0',
      'contacts/C1',
      'opportunities/O0',
      'activities/E0',
      'activities/E1',
    ]);
    expect(report.skipped[0]?.reason).toMatch(/account "A0" is in doubt/);
    expect(count(fake.store.accounts.values(), (a) => a.name === 'Account 0')).toBe(1);
    sent();

    const again = await sync.run(erpSource(2));
    expect(sent()).toEqual([]);
    expect(again.inDoubt).toEqual([
      { type: 'accounts', key: 'A0', requestId: failedAnswer?.requestId, sent: { name: 'Account 0' } },
    ]);
    expect(await sync.idOf('accounts', 'A0')).toBeUndefined();
  });

  test('resolve() with the id found settles an account: the next run sends its children and leaves it unchanged', async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    await sync.run(erpSource(1));
    const stored = [...fake.store.accounts.values()].find((a) => a.name === 'Account 0');
    await sync.resolve('accounts', 'A0', String(stored?.id));
    sent();

    const report = await sync.run(erpSource(1));
    expect(sent()).toEqual([
      'POST createContact',
      'POST createContact',
      'POST createOpportunity',
      'POST createActivity',
      'POST createActivity',
    ]);
    expect(report).toMatchObject({ created: 5, unchanged: 1, inDoubt: [], skipped: [] });
    expect(count(fake.store.accounts.values(), () => true)).toBe(1);
  });

  test('resolve() with null says it is not in the CRM: the next run creates it', async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createOpportunity', drop: true });
    const first = await sync.run(erpSource(1));
    expect(first.inDoubt).toEqual([
      {
        type: 'opportunities',
        key: 'O0',
        // The account's CRM id as it was sent, not the source's key: what the CRM shows.
        sent: { name: 'Deal 0', accountId: await sync.idOf('accounts', 'A0'), amount: 1000 },
      },
    ]);
    await sync.resolve('opportunities', 'O0', null);
    sent();

    const report = await sync.run(erpSource(1));
    expect(sent()).toEqual(['POST createOpportunity', 'POST createActivity', 'POST createActivity']);
    expect(report.inDoubt).toEqual([]);
    expect(count(fake.store.opportunities.values(), () => true)).toBe(1);
  });

  test("inDoubt: 'recreate' creates accounts and opportunities in doubt again, in that run only", async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    await sync.run({ accounts: erpSource(1).accounts });
    sent();

    const report = await sync.run({ accounts: erpSource(1).accounts }, { inDoubt: 'recreate' });
    expect(sent()).toEqual(['POST createAccount']);
    expect(report).toMatchObject({ created: 1, unchanged: 0, inDoubt: [] });
    // The risk the user accepted: the lost one was stored too.
    expect(count(fake.store.accounts.values(), () => true)).toBe(2);
  });

  test("an account recreated at the start of a run and refused, gone from its list, blocks its contacts as failed: its list's keys do not hide what settling it found", async () => {
    const { sync, fake, sent } = await syncHarness();
    fake.failNext({ endpoint: 'createAccount', applied: true, drop: true });
    await sync.run({ accounts: [{ key: 'A0', data: { name: 'Lost' } }] });
    sent();

    fake.failNext({ endpoint: 'createAccount', status: 409 });
    const report = await sync.run(
      {
        accounts: [{ key: 'A1', data: { name: 'Other' } }],
        contacts: [{ key: 'C0', accountKey: 'A0', data: { email: 'c0@example.test', firstName: 'C' } as never }],
      },
      { inDoubt: 'recreate' },
    );

    expect(sent()).toEqual(['POST createAccount', 'POST createAccount']);
    expect(report.failed.map((f) => `${f.type} ${f.key} ${f.error.sideEffects}`)).toEqual(['accounts A0 none']);
    expect(report.skipped).toEqual([
      { type: 'contacts', key: 'C0', reason: expect.stringMatching(/^its account "A0" failed/) },
    ]);
  });

  test('a create refused 4xx did nothing: it is failed, and the next run creates it', async () => {
    const { sync, fake, journal } = await syncHarness();
    await sync.run({ accounts: [{ key: 'A0', data: { name: 'First' } }] });
    fake.failNext({ endpoint: 'createAccount', status: 409 });
    const report = await sync.run({
      accounts: [
        { key: 'A0', data: { name: 'First' } },
        { key: 'A1', data: { name: 'Second' } },
      ],
    });

    expect(report.failed.map((f) => [f.key, f.error.sideEffects])).toEqual([['A1', 'none']]);
    expect(await journal.pending(fake.tenantId)).toEqual([]);
    const next = await sync.run({ accounts: [{ key: 'A1', data: { name: 'Second' } }] });
    expect(next.created).toBe(1);
  });

  test("a run that finds a contact left 'sending' by a crash looks for it before anything else", async () => {
    const { sync, fake, journal, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    const contact = await crm.contacts.create({ accountId: account.id, email: 'ada@example.test', firstName: 'Ada' });
    const data = JSON.stringify({ accountId: account.id, email: 'ada@example.test', firstName: 'Ada' });
    await journal.write(fake.tenantId, {
      put: [
        {
          type: 'accounts',
          key: 'A',
          state: 'synced',
          crmId: account.id,
          hash: 'x',
          data: '{"name":"Acme"}',
          attemptedAt: undefined,
          requestId: undefined,
          runId: 'r0',
        },
        {
          type: 'contacts',
          key: 'ada',
          state: 'sending',
          crmId: undefined,
          hash: 'h',
          data,
          attemptedAt: undefined,
          requestId: undefined,
          runId: 'r0',
        },
      ],
    });
    sent();

    const report = await sync.run({});
    expect(sent()).toEqual(['GET listContacts']);
    expect(report).toMatchObject({ created: 1, inDoubt: [] });
    expect(await sync.idOf('contacts', 'ada')).toBe(contact.id);
  });
});
