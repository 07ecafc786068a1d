// The process test/sync/plan-memory.test.ts runs in a small heap: one sync.plan() over an async
// generator of PLAN_RECORDS accounts of 4 KiB of text each (no journal entries), its entries kept
// or handed out (PLAN_ON_ENTRY=1). It prints the plan's counts, and how many entries it had, as JSON.
import { CrmClient } from '../../dist/index.js';
import { CrmSync, memoryJournal } from '../../dist/sync.js';

const records = Number(process.env.PLAN_RECORDS);
const crm = new CrmClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', tenantId: 'tenant_memory' });
const sync = new CrmSync(crm, { journal: memoryJournal() });

async function* accounts() {
  for (let i = 0; i < records; i++) {
    // Text of its own per record, as an export's notes are: no string shared between records.
    const description = `${i}:${'lorem ipsum dolor sit amet '.repeat(160)}`.slice(0, 4096);
    yield { key: `ERP-${i}`, data: { name: `Account ${i}`, description } };
  }
}

let handed = 0;
const plan = await sync.plan(
  { accounts: accounts() },
  process.env.PLAN_ON_ENTRY === '1'
    ? {
        onEntry: () => {
          handed++;
        },
      }
    : {},
);
process.stdout.write(`${JSON.stringify({ counts: plan.counts, entries: plan.entries.length + handed })}\n`);
