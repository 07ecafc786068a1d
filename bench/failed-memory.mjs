// The peak RSS of a run whose every record fails (issue 45, 7): `node bench/failed-memory.mjs [n]`
// after `npm run build`. Prints one JSON line: records, failed kept, peak RSS in MiB.
import { CrmClient } from 'crm-integration-sdk';
import { CrmSync, memoryJournal } from 'crm-integration-sdk/sync';

const n = Number(process.argv[2] ?? 1_000_000);
const kind = process.argv[3] ?? 'schema';
// Never reached: an invalid record sends nothing.
const crm = new CrmClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'key', tenantId: 'tenant' });
const sync = new CrmSync(crm, { journal: memoryJournal() });

function* accounts() {
  for (let i = 0; i < n; i++) {
    // A name of the wrong type (the schema refuses it), or no data at all.
    yield kind === 'schema' ? { key: `ERP-${i}`, data: { name: 1000 + i } } : { key: `ERP-${i}` };
  }
}

const report = await sync.run({ accounts: accounts() });
const peak = process.resourceUsage().maxRSS / 1024;
globalThis.gc?.();
const heapMiB = Math.round(process.memoryUsage().heapUsed / 1024 / 1024);
console.log(
  JSON.stringify({
    records: n,
    failed: report.failed.length,
    first: report.failed[0]?.error.message,
    peakRssMiB: Math.round(peak),
    heapAfterGcMiB: globalThis.gc ? heapMiB : undefined,
  }),
);
