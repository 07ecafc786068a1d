import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal, SyncJournalClaims } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import type {
  SyncAccountRecord,
  SyncActivityRecord,
  SyncContactRecord,
  SyncOpportunityRecord,
} from '../../src/sync/types';
import type { FakeCrmCore, FakeCrmOptions } from '../../src/testing/index';
import { throughMsw } from './fake-harness';

/* A sync against the fake through MSW, and sources of every list, for test/sync. */

export interface SyncHarness {
  readonly fake: FakeCrmCore;
  readonly crm: CrmClient;
  readonly journal: SyncJournal;
  readonly sync: CrmSync;
  /** The requests the fake received since the last call, as `METHOD endpoint`. */
  sent(): string[];
}

export async function syncHarness(
  options: { journal?: SyncJournal; fake?: FakeCrmOptions; maxRetries?: number } = {},
): Promise<SyncHarness> {
  const { fake, baseUrl } = await throughMsw(options.fake);
  const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: options.maxRetries ?? 0 });
  const journal = options.journal ?? memoryJournal();
  const sync = new CrmSync(crm, { journal, settleMs: 0 });
  let read = 0;
  return {
    fake,
    crm,
    journal,
    sync,
    sent() {
      const requests = fake.requests.slice(read).map((r) => `${r.method} ${r.endpoint}`);
      read = fake.requests.length;
      return requests;
    },
  };
}

/** A source whose lists are arrays. */
export interface ErpSource {
  accounts: SyncAccountRecord[];
  contacts: SyncContactRecord[];
  opportunities: SyncOpportunityRecord[];
  activities: SyncActivityRecord[];
}

/** An ERP-like source: `n` accounts, 2 contacts each, 1 opportunity each, 2 activities per opportunity. */
export function erpSource(
  n: number,
  change: (type: string, i: number) => Record<string, unknown> = () => ({}),
): ErpSource {
  const range = (count: number) => Array.from({ length: count }, (_, i) => i);
  return {
    accounts: range(n).map((i) => ({
      key: `A${i}`,
      data: { name: `Account ${i}`, industry: 'Retail', ...change('accounts', i) } as never,
    })),
    contacts: range(2 * n).map((i) => ({
      key: `C${i}`,
      accountKey: `A${i >> 1}`,
      data: { email: `person${i}@example.test`, firstName: `First${i}`, ...change('contacts', i) } as never,
    })),
    opportunities: range(n).map((i) => ({
      key: `O${i}`,
      accountKey: `A${i}`,
      contactKey: `C${2 * i}`,
      data: { name: `Deal ${i}`, amount: 1000 + i, ...change('opportunities', i) } as never,
    })),
    activities: range(2 * n).map((i) => ({
      key: `E${i}`,
      opportunityKey: `O${i >> 1}`,
      data: { type: 'note', subject: `Note ${i}`, ...change('activities', i) } as never,
    })),
  };
}

/**
 * `journal` with some of its claims replaced (or, for a journal without claims, given): a test
 * stepping in between the engine and the journal's store.
 */
export function withClaims(journal: SyncJournal, replaced: Partial<SyncJournalClaims>): SyncJournal {
  return withMethods(journal, { claims: { ...(journal.claims as SyncJournalClaims), ...replaced } });
}

/** `journal` with some of its methods replaced (the others call its own): a journal that acts otherwise. */
export function withMethods(journal: SyncJournal, replaced: Partial<SyncJournal>): SyncJournal {
  return {
    open: () => journal.open(),
    lock: (...args) => journal.lock(...args),
    get: (...args) => journal.get(...args),
    list: (...args) => journal.list(...args),
    pending: (...args) => journal.pending(...args),
    write: (...args) => journal.write(...args),
    close: () => journal.close(),
    ...replaced,
  };
}
