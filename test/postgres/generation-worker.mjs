// A worker of test/postgres/generation-fleet.test.ts: one slice of a generation, run in its own
// process on the shared Postgres journal, against the fake over real sockets. It writes
// 'reading contacts' to stderr when its contacts list starts (the test kills it there), and its
// report as JSON to stdout when done.
import pg from 'pg';
import { CrmClient } from '../../dist/index.js';
import { postgresJournal } from '../../dist/postgres.js';
import { CrmSync } from '../../dist/sync.js';

const env = process.env;
const accounts = Number(env.GEN_ACCOUNTS);
const slices = Number(env.GEN_SLICES);
const slice = Number(env.GEN_SLICE);
const dropped = new Set(JSON.parse(env.GEN_DROPPED));
// Account i is in slices i % slices and i % slices + 1: every record in two slices.
const mine = (i) => i % slices === slice || (i + 1) % slices === slice;

function* accountList() {
  for (let i = 0; i < accounts; i++) {
    if (mine(i) && !dropped.has(`A${i}`)) yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail' } };
  }
}
function* contactList() {
  process.stderr.write('reading contacts\n');
  for (let c = 0; c < 2 * accounts; c++) {
    if (mine(c >> 1) && !dropped.has(`C${c}`)) {
      yield {
        key: `C${c}`,
        accountKey: `A${c >> 1}`,
        data: { email: `person${c}@example.test`, firstName: `First${c}` },
      };
    }
  }
}

const pool = new pg.Pool({ ...JSON.parse(env.GEN_PG), connectionTimeoutMillis: 10_000, max: 4 });
pool.on('error', () => {});
const crm = new CrmClient({
  baseUrl: env.CRM_BASE_URL,
  apiKey: env.CRM_API_KEY,
  tenantId: env.CRM_TENANT_ID,
  timeout: 10_000,
});
const journal = postgresJournal(pool, { schema: env.GEN_SCHEMA, leaseMs: Number(env.GEN_LEASE_MS) });
const sync = new CrmSync(crm, { journal, settleMs: 20 });
const report = await sync.run(
  { accounts: accountList(), contacts: contactList() },
  { removed: 'deactivate', generation: { id: env.GEN_ID, slices, slice }, concurrency: 4 },
);
process.stdout.write(
  JSON.stringify({
    deactivated: report.deactivated,
    refusedRemovals: report.refusedRemovals,
    generation: report.generation,
    failed: report.failed.length,
  }),
);
await pool.end();
