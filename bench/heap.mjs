// Peak heap growth while iterating the 100,000 activities once: run by bench/run.mjs with
// --expose-gc, in a fresh process. Prints bytes.   node --expose-gc bench/heap.mjs fetch|sdk <url>
import { CrmClient } from '../dist/index.js';

const [subject, url] = process.argv.slice(2);
// Made, and given a moment to load its chunks (the response validators), before the baseline:
// the figure is a client's steady state, as W2's time is after its warm-up round. Without it,
// the first pages of a client made just now are parsed by zod's interpreter, whose copies made
// V8 grow its young generation in about half the runs, and the figure flipped between 1.0x and 1.6x.
const crm =
  subject === 'fetch' ? undefined : new CrmClient({ baseUrl: url, apiKey: 'bench-key', tenantId: 'tenant_bench' });
await new Promise((resolve) => setTimeout(resolve, 100));
const headers = { accept: 'application/json', 'x-api-key': 'bench-key', 'x-tenant-id': 'tenant_bench' };
globalThis.gc();
const base = process.memoryUsage().heapUsed;
let peak = base;
const sample = () => {
  const used = process.memoryUsage().heapUsed;
  if (used > peak) peak = used;
};

if (subject === 'fetch') {
  for (let page = 1; ; page++) {
    const res = await fetch(
      `${url}/integrations/v1/activities?tenantId=tenant_bench&opportunityId=opp_1&limit=200&page=${page}`,
      { headers },
    );
    const body = await res.json();
    for (const _ of body.data) sample();
    if (body.data.length === 0 || page >= body.pagination.pages) break;
  }
} else {
  for await (const _ of crm.activities.list({ opportunityId: 'opp_1', limit: 200 })) sample();
}
process.stdout.write(`${peak - base}\n`);
