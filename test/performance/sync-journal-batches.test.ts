import { expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournal } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import type { SyncSource } from '../../src/sync/types';

// PERFORMANCE.md, "The sync's journal in batches": an unchanged re-run reads the journal a batch
// of 500 records at a time, and writes nothing.
test('an unchanged re-run of 1,800 records reads the journal in batches of 500 keys, and writes and sends nothing', async () => {
  const base = memoryJournal();
  const reads: string[] = [];
  let writes = 0;
  const journal: SyncJournal = {
    open: () => base.open(),
    lock: (t, r) => base.lock(t, r),
    get: (t, type, keys) => {
      reads.push(`${type} ${keys.length}`);
      return base.get(t, type, keys);
    },
    list: (t, type, after, limit) => base.list(t, type, after, limit),
    pending: (t) => base.pending(t),
    write: (t, change) => {
      writes++;
      return base.write(t, change);
    },
    close: () => base.close(),
  };
  let requests = 0;
  // A server that answers every create at once: the first run only fills the journal.
  const crm = new CrmClient({
    baseUrl: 'https://crm.example',
    apiKey: 'k',
    tenantId: 'acme',
    fetch: async (input, init) => {
      requests++;
      const body = JSON.parse(String(new Request(input, init).method === 'POST' ? init?.body : '{}'));
      return Response.json({ success: true, data: { ...body, id: `id_${requests}` } }, { status: 201 });
    },
  });
  const source = (): SyncSource => ({
    accounts: Array.from({ length: 1200 }, (_, i) => ({ key: `A${i}`, data: { name: `Account ${i}` } })),
    contacts: Array.from({ length: 600 }, (_, i) => ({
      key: `C${i}`,
      accountKey: `A${i}`,
      data: { firstName: `C${i}` },
    })),
  });
  const sync = new CrmSync(crm, { journal });
  await sync.run(source(), { concurrency: 32 });
  reads.length = 0;
  writes = 0;
  requests = 0;

  const report = await sync.run(source());
  expect(report.unchanged).toBe(1800);
  expect(requests).toBe(0);
  expect(writes).toBe(0);
  // The contacts' accounts were met by this run: no read for them.
  expect(reads).toEqual(['accounts 500', 'accounts 500', 'accounts 200', 'contacts 500', 'contacts 100']);
});
