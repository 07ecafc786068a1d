// A worker of test/postgres/stall.test.ts: fleet-worker.mjs's sync of accounts, whose pool stops
// the process itself (a real SIGSTOP) inside its first claim transaction, once the keys' advisory
// locks are held, when STALL_IN_CLAIM is set; it says "stopping" on stderr first.
import pg from 'pg';
import { CrmClient } from '../../dist/index.js';
import { postgresJournal } from '../../dist/postgres.js';
import { CrmSync } from '../../dist/sync.js';

const env = process.env;
const records = Number(env.FLEET_RECORDS);
function* accounts() {
  for (let i = 0; i < records; i++) yield { key: `A${i}`, data: { name: `Account ${i}`, industry: 'Retail' } };
}

const pool = new pg.Pool({ ...JSON.parse(env.FLEET_PG), connectionTimeoutMillis: 10_000, max: 4 });
pool.on('error', () => {});
let stall = Boolean(env.STALL_IN_CLAIM);
const stalling = {
  connect: async () => {
    const client = await pool.connect();
    return {
      query: async (text, values) => {
        const result = await client.query(text, values);
        if (stall && typeof text === 'string' && text.includes('pg_try_advisory_xact_lock')) {
          stall = false;
          process.stderr.write('stopping\n');
          process.kill(process.pid, 'SIGSTOP');
        }
        return result;
      },
      release: (error) => client.release(error),
      on: (event, listener) => client.on(event, listener),
      removeListener: (event, listener) => client.removeListener(event, listener),
    };
  },
};
const crm = new CrmClient({
  baseUrl: env.CRM_BASE_URL,
  apiKey: env.CRM_API_KEY,
  tenantId: env.CRM_TENANT_ID,
  timeout: 10_000,
});
const journal = postgresJournal(stalling, { schema: env.FLEET_SCHEMA, leaseMs: Number(env.FLEET_LEASE_MS) });
const sync = new CrmSync(crm, { journal, settleMs: 20 });
try {
  const report = await sync.run({ accounts: accounts() }, { concurrency: 4 });
  process.stdout.write(JSON.stringify({ created: report.created, inDoubt: report.inDoubt, skipped: report.skipped }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: error.message }));
} finally {
  await pool.end();
}
