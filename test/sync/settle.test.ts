import { afterEach, describe, expect, test, vi } from 'vitest';
import type { SyncJournalEntry } from '../../src/sync/journal';
import { syncHarness } from '../support/sync';

const count = <T>(values: Iterable<T>, where: (value: T) => boolean) => [...values].filter(where).length;

/** A journal entry left by a create whose answer was lost (or whose process died). */
const lost = (type: SyncJournalEntry['type'], key: string, data: object, attemptedAt?: number): SyncJournalEntry => ({
  type,
  key,
  state: 'sending',
  crmId: undefined,
  hash: `h-${key}`,
  data: JSON.stringify(data),
  attemptedAt,
  requestId: undefined,
  runId: 'r0',
});

const synced = (type: SyncJournalEntry['type'], key: string, crmId: string, data: object): SyncJournalEntry => ({
  ...lost(type, key, data),
  state: 'synced',
  crmId,
});

afterEach(() => {
  vi.useRealTimers();
});

describe('settling a record in doubt never adopts another key', () => {
  test("a contact whose create was lost before it was stored is created again, never settled onto an identical contact's record another key holds", async () => {
    const { sync, fake, sent } = await syncHarness();
    const accounts = [{ key: 'A', data: { name: 'Acme' } }];
    const person = { email: 'ada@example.test', firstName: 'Ada' };
    await sync.run({ accounts, contacts: [{ key: 'K1', accountKey: 'A', data: person }] });
    sent();
    // K2: the same person a second time in the ERP; its create never reached the server.
    fake.failNext({ endpoint: 'createContact', drop: true });
    const report = await sync.run({
      accounts,
      contacts: [
        { key: 'K1', accountKey: 'A', data: person },
        { key: 'K2', accountKey: 'A', data: person },
      ],
    });

    expect(sent()).toEqual(['POST createContact', 'GET listContacts', 'POST createContact']);
    expect(count(fake.store.contacts.values(), (c) => c.email === 'ada@example.test')).toBe(2);
    const k1 = await sync.idOf('contacts', 'K1');
    const k2 = await sync.idOf('contacts', 'K2');
    expect(k2).toBeDefined();
    expect(k2).not.toBe(k1);
    expect(report).toMatchObject({ created: 1, unchanged: 2, inDoubt: [] });
  });

  test('of two identical notes on one opportunity, the one whose create was lost is created again, not settled onto the other', async () => {
    const { sync, fake } = await syncHarness();
    const note = { type: 'note' as const, subject: 'Called', activityDate: '2026-11-02T10:00:00Z' };
    const source = () => ({
      accounts: [{ key: 'A', data: { name: 'Acme' } }],
      opportunities: [{ key: 'O', accountKey: 'A', data: { name: 'Deal' } }],
      activities: [
        { key: 'E1', opportunityKey: 'O', data: note },
        { key: 'E2', opportunityKey: 'O', data: note },
      ],
    });
    await sync.run({ ...source(), activities: source().activities.slice(0, 1) });
    fake.failNext({ endpoint: 'createActivity', drop: true });
    const report = await sync.run(source());

    expect(count(fake.store.activities.values(), (a) => a.subject === 'Called')).toBe(2);
    expect(await sync.idOf('activities', 'E2')).not.toBe(await sync.idOf('activities', 'E1'));
    expect(report).toMatchObject({ created: 1, inDoubt: [] });
  });

  test('a contact in doubt that two CRM records no key holds both match stays in doubt, reported, and nothing is adopted or sent, even with recreate', async () => {
    const { sync, fake, journal, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    const person = { accountId: account.id, email: 'ada@example.test', firstName: 'Ada' };
    // Someone typed Ada into the CRM twice: either may be the one the lost create made, or neither.
    await crm.contacts.create(person);
    await crm.contacts.create(person);
    await journal.write(fake.tenantId, {
      put: [synced('accounts', 'A', account.id, { name: 'Acme' }), lost('contacts', 'ada', person)],
    });
    sent();

    const report = await sync.run({}, { inDoubt: 'recreate' });
    expect(sent()).toEqual(['GET listContacts']);
    expect(report.inDoubt).toEqual([{ type: 'contacts', key: 'ada' }]);
    expect(report.created).toBe(0);
    expect(await sync.idOf('contacts', 'ada')).toBeUndefined();
  });

  test('two contacts in doubt with the same data and one CRM record matching them: one adopts it, the other is created again', async () => {
    const { sync, fake, journal, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    const person = { accountId: account.id, email: 'ada@example.test', firstName: 'Ada' };
    const stored = await crm.contacts.create(person);
    await journal.write(fake.tenantId, {
      put: [
        synced('accounts', 'A', account.id, { name: 'Acme' }),
        lost('contacts', 'K2', person),
        lost('contacts', 'K3', person),
      ],
    });
    sent();

    const report = await sync.run({});
    expect(sent()).toEqual(['GET listContacts', 'POST createContact']);
    expect(report).toMatchObject({ created: 2, inDoubt: [] });
    const ids = [await sync.idOf('contacts', 'K2'), await sync.idOf('contacts', 'K3')];
    expect(ids).toContain(stored.id);
    expect(new Set(ids).size).toBe(2);
  });
});

describe("matching tolerant of the server's formatting", () => {
  test('activities whose answers were lost are found on a server that keeps dates to the second: 3 activities for 3 records, not 6', async () => {
    const { sync, fake } = await syncHarness({ fake: { storage: 'normalizing' } });
    const source = {
      accounts: [{ key: 'A', data: { name: 'Acme' } }],
      opportunities: [{ key: 'O', accountKey: 'A', data: { name: 'Deal' } }],
      activities: [0, 1, 2].map((i) => ({
        key: `E${i}`,
        opportunityKey: 'O',
        data: { type: 'call' as const, subject: `Call ${i}`, activityDate: `2026-11-02T10:0${i}:00.250Z` },
      })),
    };
    fake.failNext({ endpoint: 'createActivity', applied: true, status: 502, times: 3 });
    const report = await sync.run(source);

    expect([...fake.store.activities.values()].map((a) => a.activityDate).sort()).toEqual([
      '2026-11-02T10:00:00Z',
      '2026-11-02T10:01:00Z',
      '2026-11-02T10:02:00Z',
    ]);
    expect(report).toMatchObject({ created: 5, inDoubt: [] });
  });

  test('the date the sync gives an activity is a whole second, found again on a server that keeps dates to the second', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-11-02T10:00:00.789Z'));
    const { sync, fake } = await syncHarness({ fake: { storage: 'normalizing' } });
    fake.failNext({ endpoint: 'createActivity', applied: true, status: 502 });
    const report = await sync.run({
      accounts: [{ key: 'A', data: { name: 'Acme' } }],
      opportunities: [{ key: 'O', accountKey: 'A', data: { name: 'Deal' } }],
      activities: [{ key: 'E', opportunityKey: 'O', data: { type: 'note', subject: 'Note' } }],
    });

    const sentDate = (fake.requests.find((r) => r.endpoint === 'createActivity')?.body as { activityDate?: string })
      ?.activityDate;
    expect(sentDate).toBe('2026-11-02T10:00:00.000Z');
    expect(count(fake.store.activities.values(), () => true)).toBe(1);
    expect(report).toMatchObject({ created: 3, inDoubt: [] });
  });

  test('a contact whose answer was lost is found on a server that trims names, reformats phones and lowers emails', async () => {
    const { sync, fake } = await syncHarness({ fake: { storage: 'normalizing' } });
    fake.failNext({ endpoint: 'createContact', applied: true, status: 502 });
    const report = await sync.run({
      accounts: [{ key: 'A', data: { name: 'Acme' } }],
      contacts: [
        {
          key: 'C',
          accountKey: 'A',
          data: { email: 'Ada.Lovelace@Example.test', firstName: ' Ada ', phone: '+1 (555) 010-0199' },
        },
      ],
    });

    expect([...fake.store.contacts.values()].map((c) => [c.email, c.firstName, c.phone])).toEqual([
      ['ada.lovelace@example.test', 'Ada', '+15550100199'],
    ]);
    expect(report).toMatchObject({ created: 2, inDoubt: [] });
  });
});

describe('activities that cannot be looked for', () => {
  const accountNote = (accountId: string) => ({
    relatedToType: 'account',
    relatedToId: accountId,
    type: 'note',
    subject: 'Account note',
  });

  test("an account's activity whose answer was lost stays in doubt, reported, without a look-up the API cannot make", async () => {
    const { sync, fake, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    fake.failNext({ endpoint: 'createActivity', applied: true, status: 502 });
    sent();
    const report = await sync.run({ activities: [{ key: 'N', data: accountNote(account.id) as never }] });

    expect(sent()).toEqual(['POST createActivity']);
    expect(report.inDoubt).toEqual([{ type: 'activities', key: 'N', requestId: expect.any(String) }]);
    const plan = await sync.plan({ activities: [{ key: 'N', data: accountNote(account.id) as never }] });
    expect(plan.entries[0]?.reason).toMatch(/inDoubt: 'recreate'/);
  });

  test("inDoubt: 'recreate' creates an account's or a contact's activity in doubt again, with the date first sent", async () => {
    const { sync, fake, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    const contact = await crm.contacts.create({ accountId: account.id, email: 'ada@example.test' });
    const source = {
      activities: [
        { key: 'N', data: accountNote(account.id) as never },
        { key: 'M', data: { ...accountNote(contact.id), relatedToType: 'contact' } as never },
      ],
    };
    fake.failNext({ endpoint: 'createActivity', drop: true, times: 2 });
    const first = await sync.run(source);
    expect(first.inDoubt.map((d) => d.key).sort()).toEqual(['M', 'N']);
    const firstDates = fake.requests.filter((r) => r.endpoint === 'createActivity').map((r) => r.body);
    sent();

    const report = await sync.run(source, { inDoubt: 'recreate' });
    expect(sent()).toEqual(['POST createActivity', 'POST createActivity']);
    expect(report).toMatchObject({ created: 2, inDoubt: [] });
    expect(count(fake.store.activities.values(), () => true)).toBe(2);
    const again = fake.requests.filter((r) => r.endpoint === 'createActivity').slice(2);
    expect(again.map((r) => r.body)).toEqual(expect.arrayContaining(firstDates));
  });
});

describe('look-ups and the run', () => {
  test("every look-up carries the run's signal: aborting the run stops a contact scan that hangs", async () => {
    const { sync, fake, journal, crm } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    const person = { accountId: account.id, email: 'ada@example.test' };
    await journal.write(fake.tenantId, {
      put: [synced('accounts', 'A', account.id, { name: 'Acme' }), lost('contacts', 'ada', person)],
    });
    // The scan's answer would come after a minute, past the client's timeout: only the signal ends it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    fake.failNext({ endpoint: 'listContacts', delayMs: 60_000 });
    const controller = new AbortController();
    let outcome: unknown;
    const run = sync.run({}, { signal: controller.signal }).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    void run.then((value) => {
      outcome = value;
    });
    for (let i = 0; i < 100 && !fake.requests.some((r) => r.endpoint === 'listContacts'); i++) {
      await vi.advanceTimersByTimeAsync(1);
    }
    controller.abort(new Error('stop'));
    await vi.advanceTimersByTimeAsync(100);

    expect(outcome).toMatchObject({ message: 'stop' });
    expect((await journal.pending(fake.tenantId)).map((e) => e.key)).toEqual(['ada']);
  });

  test('a contact look-up that fails leaves its contacts in doubt and the run goes on', async () => {
    const { sync, fake, journal, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    await journal.write(fake.tenantId, {
      put: [
        synced('accounts', 'A', account.id, { name: 'Acme' }),
        lost('contacts', 'ada', { accountId: account.id, email: 'ada@example.test' }),
      ],
    });
    fake.failNext({ endpoint: 'listContacts', status: 500 });
    sent();
    const report = await sync.run({ accounts: [{ key: 'B', data: { name: 'Other' } }] }, { inDoubt: 'recreate' });

    expect(sent()).toEqual(['GET listContacts', 'POST createAccount']);
    expect(report.inDoubt).toEqual([{ type: 'contacts', key: 'ada' }]);
  });

  test('a first look-up refused 401 stops the run before anything is sent', async () => {
    const { sync, fake, journal, crm, sent } = await syncHarness();
    const account = await crm.accounts.create({ name: 'Acme' });
    await journal.write(fake.tenantId, {
      put: [
        synced('accounts', 'A', account.id, { name: 'Acme' }),
        lost('contacts', 'ada', { accountId: account.id, email: 'ada@example.test' }),
      ],
    });
    fake.failNext({ endpoint: 'listContacts', status: 401 });
    sent();

    await expect(sync.run({ accounts: [{ key: 'B', data: { name: 'Other' } }] })).rejects.toMatchObject({
      status: 401,
    });
    expect(sent()).toEqual(['GET listContacts']);
  });
});
