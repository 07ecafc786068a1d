// The process test/sync/crash.test.ts kills: one sync of an ERP-like source into the fake over
// real sockets, on a SQLite journal. It prints its report as JSON when it finishes.
import { CrmClient } from '../../dist/index.js';
import { CrmSync, sqliteJournal } from '../../dist/sync.js';

const { CRM_BASE_URL, CRM_API_KEY, CRM_TENANT_ID, CRASH_JOURNAL, CRASH_RECORDS, CRASH_LEASE_MS } = process.env;
const n = Number(CRASH_RECORDS);
const range = (count) => Array.from({ length: count }, (_, i) => i);

// As erpSource() in test/support/sync.ts, as generators: read as streams.
function* accounts() {
  for (const i of range(n)) yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail' } };
}
function* contacts() {
  for (const i of range(2 * n)) {
    yield {
      key: `C${i}`,
      accountKey: `A${i >> 1}`,
      data: { email: `person${i}@example.test`, firstName: `First${i}` },
    };
  }
}
function* opportunities() {
  for (const i of range(n)) {
    yield { key: `O${i}`, accountKey: `A${i}`, contactKey: `C${2 * i}`, data: { name: `Deal ${i}`, amount: 1000 + i } };
  }
}
async function* activities() {
  for (const i of range(2 * n))
    yield { key: `E${i}`, opportunityKey: `O${i >> 1}`, data: { type: 'note', subject: `Note ${i}` } };
}

const crm = new CrmClient({ baseUrl: CRM_BASE_URL, apiKey: CRM_API_KEY, tenantId: CRM_TENANT_ID, timeout: 10_000 });
// A short lease: the run after a kill waits out the killed run's lock for one lease.
const journal = sqliteJournal(CRASH_JOURNAL, { leaseMs: Number(CRASH_LEASE_MS ?? 30_000) });
const sync = new CrmSync(crm, { journal, settleMs: 20 });
const report = await sync.run(
  { accounts: accounts(), contacts: contacts(), opportunities: opportunities(), activities: activities() },
  { concurrency: 8 },
);
process.stdout.write(
  JSON.stringify({
    ...report,
    failed: report.failed.map(({ type, key, error }) => ({ type, key, message: error.message })),
  }),
);
