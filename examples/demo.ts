/**
 * `npm run demo`: the examples end to end over real HTTP.
 *
 * With no CRM_BASE_URL it starts the fake CRM (crm-integration-sdk/testing) on a free loopback
 * port. With CRM_BASE_URL, CRM_API_KEY and CRM_TENANT_ID set it runs against that deployment
 * instead; the admin steps run only with CRM_ADMIN_TOKEN, and the key is rotated only on the fake.
 */
import { CrmClient, type Opportunity, type WithUnknownFields } from 'crm-integration-sdk';
import { startFakeCrmServer } from 'crm-integration-sdk/testing';
import { createRecords } from './create-records.ts';
import { exportContactsAsNdjson } from './export-contacts-ndjson.ts';
import { showErrors } from './handle-errors.ts';
import { countActivitiesByType } from './page-activities.ts';

const say = (line: string) => process.stdout.write(`${line}\n`);
const real = Boolean(process.env.CRM_BASE_URL);
const fake = real ? undefined : await startFakeCrmServer();

try {
  const baseUrl = fake?.url ?? process.env.CRM_BASE_URL;
  say(real ? `Running against ${baseUrl}` : `Started the fake CRM on ${baseUrl}`);

  let apiKey = process.env.CRM_API_KEY;
  const adminToken = fake?.fake.credentials.adminToken ?? process.env.CRM_ADMIN_TOKEN;
  if (adminToken) {
    const admin = new CrmClient({ baseUrl, adminToken });
    if (fake) {
      const generated = await admin.apiKey.generate();
      apiKey = String(generated.apiKey);
      say(`1. The admin generated an API key (${apiKey.slice(0, 12)}…)`);
    }
    const status = await admin.apiKey.status();
    say(`   Key status: ${JSON.stringify(status)}`);
  }

  const crm = new CrmClient({ baseUrl, apiKey, tenantId: fake?.fake.tenantId ?? process.env.CRM_TENANT_ID });
  const { account, contacts, opportunity, activities } = await createRecords(crm);
  say(
    `2. Created account "${account.name}", ${contacts.length} contacts, opportunity "${opportunity.name}" and ${activities.length} activities`,
  );
  // The spec's opportunity response does not list `stage`: read as a field the SDK does not know.
  const { stage } = opportunity as WithUnknownFields<Opportunity>;
  say(`3. Updated the opportunity: stage ${stage}, probability ${opportunity.probability}%`);

  const counts = await countActivitiesByType(crm, opportunity.id);
  say(`4. Paged through its activities with for await: ${JSON.stringify(counts)}`);

  const grantId = fake ? 'grant_demo' : process.env.CRM_GRANT_ID;
  if (grantId) say(`5. Resolved grant ${grantId}: ${JSON.stringify(await crm.grants.resolve(grantId))}`);

  let exported = 0;
  const count = await exportContactsAsNdjson(crm, () => {
    exported += 1;
  });
  say(`6. Exported ${count} contacts as NDJSON (${exported} lines)`);

  for (const line of await showErrors(crm)) say(`7. ${line}`);
  say('Done.');
} finally {
  await fake?.close();
}
