// The process bench/intent-kills.mjs kills: a sync of KILLS_RECORDS accounts into the fake over
// real sockets, on a SQLite journal, paced by throttle 'auto' (KILLS_THROTTLE=off: not paced), with
// the sync's default concurrency of 8.
import { writeSync } from 'node:fs';
import { CrmClient } from '../dist/index.js';
import { CrmSync, sqliteJournal } from '../dist/sync.js';

const { CRM_BASE_URL, CRM_API_KEY, CRM_TENANT_ID, KILLS_JOURNAL, KILLS_RECORDS, KILLS_THROTTLE } = process.env;
const n = Number(KILLS_RECORDS);

function* accounts() {
  for (let i = 0; i < n; i++) yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail' } };
}

const crm = new CrmClient({
  baseUrl: CRM_BASE_URL,
  apiKey: CRM_API_KEY,
  tenantId: CRM_TENANT_ID,
  timeout: 10_000,
  throttle: KILLS_THROTTLE === 'off' ? 'off' : 'auto',
  // Tells the bench, at once (a pipe written synchronously), each create whose answer came: the
  // creates the fake received and this process did not hear from were truly in flight at a kill.
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST' && typeof init.body === 'string') {
      writeSync(2, `read ${JSON.stringify(JSON.parse(init.body).name)}\n`);
    }
    return response;
  },
});
// A short lease: the run after a kill waits out the killed run's lock for one lease.
const sync = new CrmSync(crm, { journal: sqliteJournal(KILLS_JOURNAL, { leaseMs: 300 }), settleMs: 20 });
const report = await sync.run({ accounts: accounts() }, { concurrency: 8 });
process.stdout.write(JSON.stringify({ inDoubt: report.inDoubt.length, failed: report.failed.length }));
