// A worker of test/postgres/fleet.test.ts: one sync of its slice of an ERP-like source into the
// fake over real sockets, on the shared Postgres journal. It prints its report as JSON when done.
import pg from 'pg';
import { CrmClient } from '../../dist/index.js';
import { postgresJournal } from '../../dist/postgres.js';
import { CrmSync } from '../../dist/sync.js';

const env = process.env;
const from = Number(env.FLEET_FROM);
const to = Number(env.FLEET_TO);
const records = Number(env.FLEET_RECORDS);
// The slice: accounts from..to (wrapping), with their contacts, opportunities and activities.
const indices = [];
for (let i = from; i !== to; i = (i + 1) % records) indices.push(i);

function* accounts() {
  for (const i of indices) yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail' } };
}
function* contacts() {
  for (const i of indices) {
    for (const c of [2 * i, 2 * i + 1]) {
      yield { key: `C${c}`, accountKey: `A${i}`, data: { email: `person${c}@example.test`, firstName: `First${c}` } };
    }
  }
}
function* opportunities() {
  for (const i of indices) {
    yield { key: `O${i}`, accountKey: `A${i}`, contactKey: `C${2 * i}`, data: { name: `Deal ${i}`, amount: 1000 + i } };
  }
}
function* activities() {
  for (const i of indices) {
    for (const e of [2 * i, 2 * i + 1]) {
      yield { key: `E${e}`, opportunityKey: `O${i}`, data: { type: 'note', subject: `Note ${e}` } };
    }
  }
}

const pool = new pg.Pool({ ...JSON.parse(env.FLEET_PG), connectionTimeoutMillis: 10_000, max: 4 });
pool.on('error', () => {});
const crm = new CrmClient({
  baseUrl: env.CRM_BASE_URL,
  apiKey: env.CRM_API_KEY,
  tenantId: env.CRM_TENANT_ID,
  timeout: 10_000,
  // FLEET_MAX_CONCURRENCY: fewer calls on the wire than the run's slots, so that creates wait for their turn.
  ...(env.FLEET_MAX_CONCURRENCY ? { maxConcurrency: Number(env.FLEET_MAX_CONCURRENCY) } : {}),
});
const journal = postgresJournal(pool, { schema: env.FLEET_SCHEMA, leaseMs: Number(env.FLEET_LEASE_MS) });
const sync = new CrmSync(crm, { journal, settleMs: 20 });
const source = env.FLEET_ONLY_ACCOUNTS
  ? { accounts: accounts() }
  : { accounts: accounts(), contacts: contacts(), opportunities: opportunities(), activities: activities() };
const report = await sync.run(source, { concurrency: 4 });
process.stdout.write(
  JSON.stringify({
    ...report,
    failed: report.failed.map(({ type, key, error }) => ({ type, key, message: error.message })),
  }),
);
await pool.end();
