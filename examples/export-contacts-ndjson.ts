/**
 * Exports every contact of a tenant as NDJSON (one JSON object per line) on stdout.
 *
 *   CRM_BASE_URL=https://crm.example.com CRM_API_KEY=… CRM_TENANT_ID=acme \
 *     node examples/export-contacts-ndjson.ts > contacts.ndjson
 *
 * Pages are fetched one after another, 200 contacts at a time, as the loop consumes them.
 */
import { CrmClient } from 'crm-integration-sdk';

/** Writes each contact as one line; resolves to the number written. */
export async function exportContactsAsNdjson(
  crm: CrmClient,
  write: (line: string) => void,
  signal?: AbortSignal,
): Promise<number> {
  let count = 0;
  for await (const contact of crm.contacts.list({ limit: 200 }, { signal })) {
    write(`${JSON.stringify(contact)}\n`);
    count += 1;
  }
  return count;
}

if (import.meta.filename === process.argv[1]) {
  const count = await exportContactsAsNdjson(new CrmClient(), (line) => process.stdout.write(line));
  process.stderr.write(`exported ${count} contacts\n`);
}
