import { expectTypeOf, test } from 'vitest';
import type { CrmClient, CrmError } from '../../src/index';
import {
  CrmSync,
  memoryJournal,
  type SyncGenerationReport,
  type SyncHistoryRun,
  type SyncHistoryState,
  type SyncInDoubt,
  type SyncJournal,
  type SyncPlan,
  type SyncPlanEntry,
  type SyncReport,
  type SyncResolution,
  type SyncSentFields,
  type SyncType,
  sqliteJournal,
} from '../../src/sync/index';

declare const crm: CrmClient;

test("the issue's example compiles as written, with arrays and async generators", () => {
  const sync = new CrmSync(crm, { journal: sqliteJournal('./acme.sync.db') });
  async function* events() {
    yield { key: 'e1', opportunityKey: 'd1', data: { type: 'note' as const, subject: 'Met' } };
  }
  expectTypeOf(
    sync.run(
      {
        accounts: [{ key: 'c1', data: { name: 'Acme', industry: 'Retail' } }],
        contacts: [{ key: 'p1', accountKey: 'c1', data: { email: 'ada@acme.test', firstName: 'Ada' } }],
        opportunities: [{ key: 'd1', accountKey: 'c1', contactKey: 'p1', data: { name: 'Renewal', amount: 10 } }],
        activities: events(),
      },
      { signal: AbortSignal.timeout(1000), onProgress: () => {}, removed: 'keep', inDoubt: 'report', concurrency: 8 },
    ),
  ).toEqualTypeOf<Promise<SyncReport>>();
  expectTypeOf(sync.plan({ accounts: [] }, { removed: 'deactivate' })).toEqualTypeOf<Promise<SyncPlan>>();
  expectTypeOf(sync.plan({ accounts: [] }, { removed: 'deactivate', maxRemoved: '2.5%' })).toEqualTypeOf<
    Promise<SyncPlan>
  >();
  expectTypeOf(sync.run({ accounts: [] }, { removed: 'deactivate', maxRemoved: 50 })).toEqualTypeOf<
    Promise<SyncReport>
  >();
  expectTypeOf(sync.idOf('accounts', 'c1')).toEqualTypeOf<Promise<string | undefined>>();
  expectTypeOf(sync.resolve('accounts', 'c1', null)).toEqualTypeOf<Promise<void>>();
  expectTypeOf(memoryJournal()).toEqualTypeOf<SyncJournal>();
});

test('resolve takes one record or many; a record in doubt says what was sent', () => {
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  expectTypeOf(sync.resolve('accounts', 'c1', 'acc_1', { force: true })).toEqualTypeOf<Promise<void>>();
  const many: SyncResolution[] = [
    { type: 'accounts', key: 'c1', crmId: 'acc_1' },
    { type: 'opportunities', key: 'd1', crmId: null },
  ];
  expectTypeOf(sync.resolve(many)).toEqualTypeOf<Promise<void>>();
  expectTypeOf(sync.resolve(many, { force: true })).toEqualTypeOf<Promise<void>>();
  expectTypeOf<SyncInDoubt['sent']>().toEqualTypeOf<SyncSentFields>();
  // @ts-expect-error a record to settle names its type
  void sync.resolve([{ key: 'c1', crmId: null }]);
  // @ts-expect-error many records take no key of their own
  void sync.resolve(many, 'c1', null);
});

test('a report names each type as its list, and a failure carries the CrmError', () => {
  expectTypeOf<SyncReport['failed'][number]['error']>().toEqualTypeOf<CrmError>();
  expectTypeOf<SyncReport['inDoubt'][number]['type']>().toEqualTypeOf<SyncType>();
  expectTypeOf<SyncReport['byType']['activities']['created']>().toEqualTypeOf<number>();
  expectTypeOf<SyncType>().toEqualTypeOf<'accounts' | 'contacts' | 'opportunities' | 'activities'>();
  expectTypeOf<SyncReport['refusedRemovals'][number]['type']>().toEqualTypeOf<SyncType>();
  expectTypeOf<SyncPlan['refusedRemovals']>().toEqualTypeOf<SyncReport['refusedRemovals']>();
});

test('wrong records and options do not compile', () => {
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  // @ts-expect-error an account needs a name
  void sync.run({ accounts: [{ key: 'c1', data: { industry: 'Retail' } }] });
  // @ts-expect-error a contact's status is active or inactive
  void sync.run({ contacts: [{ key: 'p1', data: { status: 'gone' } }] });
  // @ts-expect-error removed is 'keep' or 'deactivate'
  void sync.run({}, { removed: 'delete' });
  // @ts-expect-error maxRemoved is a count or a share ending in %
  void sync.run({}, { maxRemoved: '5' });
  // @ts-expect-error there is no list of leads
  void sync.idOf('leads', 'x');
});

test("plan's onEntry is given each SyncPlanEntry, and may return nothing or a promise", () => {
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  void sync.plan(
    { accounts: [] },
    {
      onEntry: (entry) => {
        expectTypeOf(entry).toEqualTypeOf<SyncPlanEntry>();
      },
    },
  );
  void sync.plan({ accounts: [] }, { onEntry: async () => {} });
  // @ts-expect-error onEntry is a function
  void sync.plan({ accounts: [] }, { onEntry: process.stdout });
});

test('sync.history() gives plain runs, their state one of four, their end optional', () => {
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  expectTypeOf(sync.history({ limit: 5 })).resolves.toEqualTypeOf<SyncHistoryRun[]>();
  expectTypeOf<SyncHistoryRun['state']>().toEqualTypeOf<SyncHistoryState>();
  expectTypeOf<SyncHistoryState>().toEqualTypeOf<'live' | 'finished' | 'stopped' | 'did-not-end'>();
  expectTypeOf<SyncHistoryRun['finishedAt']>().toEqualTypeOf<Date | undefined>();
  // @ts-expect-error: a limit is a number
  void sync.history({ limit: '5' });
});

test('a run joins a generation by id, slices and slice, and its report says where it left it', () => {
  const sync = new CrmSync(crm, { journal: memoryJournal() });
  void sync.run({ accounts: [] }, { removed: 'deactivate', generation: { id: '2026-12-03', slices: 12, slice: 7 } });
  // @ts-expect-error a generation names its slice
  void sync.run({ accounts: [] }, { generation: { id: '2026-12-03', slices: 12 } });
  // @ts-expect-error slices is a number
  void sync.run({ accounts: [] }, { generation: { id: 'g', slices: '12', slice: 0 } });
  expectTypeOf<SyncReport['generation']>().toEqualTypeOf<SyncGenerationReport | undefined>();
  expectTypeOf<SyncGenerationReport['state']>().toEqualTypeOf<
    'open' | 'completed' | 'complete' | 'superseded' | 'expired'
  >();
});
