import { afterEach, describe, expect, test, vi } from 'vitest';
import type { SyncJournalEntry } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import {
  assign,
  type Candidate,
  formOf,
  holds,
  type Seeker,
  sameValue,
  seekerOf,
  stampedDate,
} from '../../src/sync/settle';
import { syncHarness, withMethods } from '../support/sync';

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

/**
 * A sync whose journal holds account A (in the fake, synced) and contacts of `keys` in doubt,
 * each sent as Ada of that account; `sent()` is read.
 */
async function contactsInDoubt(keys: readonly string[], options: Parameters<typeof syncHarness>[0] = {}) {
  const harness = await syncHarness(options);
  const account = await harness.crm.accounts.create({ name: 'Acme' });
  const person = { accountId: account.id, email: 'ada@example.test', firstName: 'Ada' };
  await harness.journal.write(harness.fake.tenantId, {
    put: [synced('accounts', 'A', account.id, { name: 'Acme' }), ...keys.map((key) => lost('contacts', key, person))],
  });
  harness.sent();
  return { ...harness, person };
}

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
    const { sync, crm, sent, person } = await contactsInDoubt(['ada']);
    // Someone typed Ada into the CRM twice: either may be the one the lost create made, or neither.
    await crm.contacts.create(person);
    await crm.contacts.create(person);
    sent();

    const report = await sync.run({}, { inDoubt: 'recreate' });
    expect(sent()).toEqual(['GET listContacts']);
    expect(report.inDoubt).toEqual([
      { type: 'contacts', key: 'ada', sent: { email: 'ada@example.test', firstName: 'Ada' } },
    ]);
    expect(report.created).toBe(0);
    expect(await sync.idOf('contacts', 'ada')).toBeUndefined();
  });

  test('two contacts in doubt with the same data and one CRM record matching them: one adopts it, the other is created again', async () => {
    const { sync, crm, sent, person } = await contactsInDoubt(['K2', 'K3']);
    const stored = await crm.contacts.create(person);
    sent();

    const report = await sync.run({});
    expect(sent()).toEqual(['GET listContacts', 'POST createContact']);
    expect(report).toMatchObject({ created: 2, inDoubt: [] });
    const ids = [await sync.idOf('contacts', 'K2'), await sync.idOf('contacts', 'K3')];
    expect(ids).toContain(stored.id);
    expect(new Set(ids).size).toBe(2);
  });
  test("a contact in doubt whose one match another run may be creating (its key under that run's claim) stays in doubt", async () => {
    const shared = memoryJournal();
    // A shared journal leaves out of pending() the keys other runs hold claims on.
    const journal = withMethods(shared, {
      pending: async (tenant) => (await shared.pending(tenant)).filter((e) => e.key !== 'K9'),
    });
    const { sync, crm, sent, person } = await contactsInDoubt(['K2', 'K9'], { journal });
    await crm.contacts.create(person);
    sent();

    const report = await sync.run({});
    expect(sent()).toEqual(['GET listContacts']);
    expect(report.inDoubt).toEqual([
      { type: 'contacts', key: 'K2', sent: { email: 'ada@example.test', firstName: 'Ada' } },
    ]);
    expect(await sync.idOf('contacts', 'K2')).toBeUndefined();
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
    expect(report.inDoubt).toEqual([
      {
        type: 'activities',
        key: 'N',
        requestId: expect.any(String),
        // What to search the CRM by: the date the sync stamped is among it.
        sent: expect.objectContaining({
          relatedToType: 'account',
          relatedToId: account.id,
          activityDate: expect.any(String),
        }),
      },
    ]);
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
    const { sync, fake, journal } = await contactsInDoubt(['ada']);
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
    const { sync, fake, sent } = await contactsInDoubt(['ada']);
    fake.failNext({ endpoint: 'listContacts', status: 500 });
    const report = await sync.run({ accounts: [{ key: 'B', data: { name: 'Other' } }] }, { inDoubt: 'recreate' });

    expect(sent()).toEqual(['GET listContacts', 'POST createAccount']);
    expect(report.inDoubt).toEqual([
      { type: 'contacts', key: 'ada', sent: { email: 'ada@example.test', firstName: 'Ada' } },
    ]);
  });

  test('a first look-up refused 401 stops the run before anything is sent', async () => {
    const { sync, fake, sent } = await contactsInDoubt(['ada']);
    fake.failNext({ endpoint: 'listContacts', status: 401 });

    await expect(sync.run({ accounts: [{ key: 'B', data: { name: 'Other' } }] })).rejects.toMatchObject({
      status: 401,
    });
    expect(sent()).toEqual(['GET listContacts']);
  });
});

describe('the matching rules', () => {
  test.each([
    // field, sent, held, same
    ['email', 'Ada@Example.test', 'ada@example.test', true],
    ['email', 'ada@example.test', ' ADA@EXAMPLE.TEST ', true],
    ['email', 'ada@example.test', 'ada@example.org', false],
    ['phone', '+1 (555) 010-0199', '+15550100199', true],
    ['mobile', '555.010.0199', '(555) 010 0199', true],
    ['phone', '+1 555 010 0199', '555 010 0199', false],
    ['phone', 'none', ' none ', true],
    ['phone', 'none', 'n/a', false],
    ['activityDate', '2026-11-02T10:00:00.250Z', '2026-11-02T10:00:00Z', true],
    ['activityDate', '2026-11-02T10:00:00.600Z', '2026-11-02T10:00:01.000Z', true],
    ['activityDate', '2026-11-02T10:00:00.000Z', '2026-11-02T11:00:00.000+01:00', true],
    ['activityDate', '2026-11-02T10:00:00.000Z', '2026-11-02T10:00:01.000Z', false],
    ['activityDate', '2026-11-02T10:00:00.000Z', 'not a date', false],
    ['activityDate', '2026-11-02T10:00:00.000Z', null, false],
    ['firstName', ' Ada ', 'Ada', true],
    ['firstName', 'Ame\u0301lie', 'Am\u00e9lie', true],
    ['firstName', 'Ada', 'ada', false],
    ['lastName', 'Byron King', 'Byron  King', false],
    ['lastName', '', null, true],
    ['lastName', '  ', undefined, true],
    ['lastName', 'King', null, false],
    ['lastName', null, '', true],
    ['lastName', null, 'King', false],
    ['subject', '2026-11-02T10:00:00Z', '2026-11-02T10:00:00.400Z', true],
    ['status', 'active', 'Active', false],
    ['isPrimary', true, true, true],
    ['isPrimary', false, null, false],
    ['amount', 1000, 1000, true],
    ['amount', 1000, '1000.00', true],
    ['amount', 1000, '', false],
    ['amount', 0, null, false],
  ])('%s sent as %j is held as %j: %s', (field, sent, held, same) => {
    expect(sameValue(field, sent, held)).toBe(same);
  });

  test('a record holds the fields sent when each is the same value; the fields it has besides do not count', () => {
    const record = { id: 'c1', email: 'ada@example.test', firstName: 'Ada', phone: '+15550100199', position: 'CTO' };
    expect(holds(record, { email: 'Ada@example.test', phone: '555-010-0199' })).toBe(false);
    expect(holds(record, { email: 'Ada@example.test', firstName: ' Ada' })).toBe(true);
    expect(holds(record, { email: 'ada@example.test', lastName: 'King' })).toBe(false);
    expect(holds(record, {})).toBe(true);
    expect(holds(record, { constructor: '' })).toBe(true);
    expect(holds(record, JSON.parse('{"__proto__": null, "email": "ada@example.test"}'))).toBe(true);
  });

  test('two records sent with the same data as the matching sees it share a form; any other difference parts them', () => {
    const form = formOf({ email: 'ada@example.test', phone: '+1 555 0100', activityDate: '2026-11-02T10:00:00.100Z' });
    expect(formOf({ activityDate: '2026-11-02T10:00:00.900Z', phone: '+1-555-0100', email: ' ADA@example.test' })).toBe(
      form,
    );
    expect(formOf({ email: 'ada@example.test', phone: '+1 555 0100', activityDate: '2026-11-02T10:00:01Z' })).not.toBe(
      form,
    );
    expect(formOf({ email: 'ada@example.test', phone: '+1 555 0100' })).not.toBe(form);
    expect(formOf({ lastName: '' })).toBe(formOf({ lastName: null }));
  });

  const ada = { email: 'ada@example.test', firstName: 'Ada' };
  const seeker = (key: string, fields: Record<string, unknown> = ada, scope = ''): Seeker & { key: string } => ({
    key,
    scope,
    fields,
  });
  const candidate = (id: string, record: Record<string, unknown> = ada, scope = ''): Candidate => ({
    id,
    scope,
    record: { id, ...record },
  });
  const outcomes = (found: Map<Seeker & { key: string }, unknown>) =>
    Object.fromEntries([...found].map(([s, outcome]) => [s.key, outcome]));

  test.each<[string, (Seeker & { key: string })[], Candidate[], Seeker[], Record<string, unknown>]>([
    ['one record, one match: adopted', [seeker('K')], [candidate('c1')], [], { K: { id: 'c1' } }],
    [
      'one record, no match: absent',
      [seeker('K')],
      [candidate('c1', { email: 'bob@example.test' })],
      [],
      { K: 'absent' },
    ],
    ['one record, two matches: ambiguous', [seeker('K')], [candidate('c1'), candidate('c2')], [], { K: 'ambiguous' }],
    [
      'two records of one form, one match: the first adopts it, the other is absent',
      [seeker('K2'), seeker('K3')],
      [candidate('c1')],
      [],
      { K2: { id: 'c1' }, K3: 'absent' },
    ],
    [
      'two records of one form, two matches: one each',
      [seeker('K2'), seeker('K3')],
      [candidate('c1'), candidate('c2')],
      [],
      { K2: { id: 'c1' }, K3: { id: 'c2' } },
    ],
    [
      'two records of one form, three matches: both ambiguous',
      [seeker('K2'), seeker('K3')],
      [candidate('c1'), candidate('c2'), candidate('c3')],
      [],
      { K2: 'ambiguous', K3: 'ambiguous' },
    ],
    [
      'two records of different forms that one record matches: both ambiguous',
      [seeker('K2'), seeker('K3', { email: 'ada@example.test' })],
      [candidate('c1')],
      [],
      { K2: 'ambiguous', K3: 'ambiguous' },
    ],
    [
      'a match that a record another run is creating matches too: ambiguous',
      [seeker('K2')],
      [candidate('c1')],
      [seeker('K9')],
      { K2: 'ambiguous' },
    ],
    [
      "another run's record that matches nothing here changes nothing",
      [seeker('K2')],
      [candidate('c1')],
      [seeker('K9', { email: 'bob@example.test' })],
      { K2: { id: 'c1' } },
    ],
    [
      'records of different data settle apart',
      [seeker('K1'), seeker('K2', { email: 'bob@example.test' })],
      [candidate('c2', { email: 'bob@example.test' }), candidate('c1')],
      [],
      { K1: { id: 'c1' }, K2: { id: 'c2' } },
    ],
    [
      'a record stored in its own format is a match: email case, phone digits, trimmed names',
      [seeker('K', { email: 'Ada@Example.test', phone: '+1 (555) 010-0199', firstName: ' Ada' })],
      [
        candidate('c1', { email: 'bob@example.test' }),
        candidate('c2', { email: 'ada@example.test', phone: '+15550100199', firstName: 'Ada' }),
      ],
      [],
      { K: { id: 'c2' } },
    ],
    [
      'records matched on a date alone, within a second',
      [seeker('E', { activityDate: '2026-11-02T10:00:00.000Z' }, 'opp_1')],
      [
        candidate('a1', { activityDate: '2026-11-02T10:00:00Z' }, 'opp_1'),
        candidate('a2', { activityDate: '2026-11-02T10:00:02Z' }, 'opp_1'),
      ],
      [],
      { E: { id: 'a1' } },
    ],
    [
      "a match in another opportunity's list is not one",
      [seeker('E', { subject: 'Call' }, 'opp_1')],
      [candidate('a1', { subject: 'Call' }, 'opp_2')],
      [],
      { E: 'absent' },
    ],
  ])('%s', (_, seekers, candidates, rivals, expected) => {
    expect(outcomes(assign(seekers, candidates, rivals))).toEqual(expected);
  });

  test.each<[string, Partial<SyncJournalEntry>, Seeker | undefined]>([
    ['a contact: its fields', { type: 'contacts', data: JSON.stringify(ada) }, { scope: '', fields: ada }],
    ['a contact without fields: none', { type: 'contacts', data: '{}' }, undefined],
    ['a contact whose data is not JSON: none', { type: 'contacts', data: '{' }, undefined],
    [
      "an opportunity's activity: in its list, with the date the sync gave it",
      {
        type: 'activities',
        data: JSON.stringify({ opportunityId: 'opp_1', type: 'note', subject: 'S' }),
        attemptedAt: Date.parse('2026-11-02T10:00:00.789Z'),
      },
      { scope: 'opp_1', fields: { type: 'note', subject: 'S', activityDate: '2026-11-02T10:00:00.000Z' } },
    ],
    [
      'an activity related to an opportunity by relatedToId, with its own date',
      {
        type: 'activities',
        data: JSON.stringify({
          relatedToType: 'opportunity',
          relatedToId: 'opp_1',
          type: 'note',
          subject: 'S',
          activityDate: '2026-01-01T00:00:00.000Z',
        }),
        attemptedAt: 5,
      },
      { scope: 'opp_1', fields: { type: 'note', subject: 'S', activityDate: '2026-01-01T00:00:00.000Z' } },
    ],
    [
      "an account's activity: none (the API lists only an opportunity's)",
      { type: 'activities', data: JSON.stringify({ relatedToType: 'account', relatedToId: 'acc_1', type: 'note' }) },
      undefined,
    ],
    ['an account: none', { type: 'accounts', data: JSON.stringify({ name: 'Acme' }) }, undefined],
    ['an opportunity: none', { type: 'opportunities', data: JSON.stringify({ name: 'Deal' }) }, undefined],
  ])('what a record in doubt is looked for by: %s', (_, entry, expected) => {
    expect(seekerOf({ ...lost('contacts', 'K', {}), ...entry })).toEqual(expected);
  });

  test('the date the sync gives an activity is its first attempt, at a whole second', () => {
    expect(stampedDate(Date.parse('2026-11-02T10:00:00.999Z'))).toBe('2026-11-02T10:00:00.000Z');
    expect(stampedDate(Date.parse('2026-11-02T10:00:01Z'))).toBe('2026-11-02T10:00:01.000Z');
  });
});
