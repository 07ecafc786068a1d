#!/usr/bin/env node
/**
 * `crm-fake`: serves the fake CRM over HTTP and prints how to reach it.
 *
 *   crm-fake [--port 4010] [--host 127.0.0.1] [--records 1]
 *
 * `--records N` seeds N generated records per kind (x10 activities); default: a small demo set.
 */
import { parseArgs } from 'node:util';
import { generateFakeData } from './generate';
import { startFakeCrmServer } from './server';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    records: { type: 'string', default: '5' },
  },
});
const records = Number(values.records);
const server = await startFakeCrmServer({
  port: Number(values.port),
  host: values.host,
  seed: generateFakeData({ accounts: records, contacts: records, opportunities: records, activities: records * 10 }),
});
const { tenantId, apiKey, adminToken } = server.fake.credentials;
process.stdout.write(
  [
    `crm-fake listening on ${server.url}`,
    `CRM_BASE_URL=${server.url}`,
    `CRM_TENANT_ID=${tenantId}`,
    `CRM_API_KEY=${apiKey}`,
    `CRM_ADMIN_TOKEN=${adminToken}`,
    '',
  ].join('\n'),
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
