// W1 in a user's process: copied by bench/installed.mjs into the app that installed the packed
// package (as w1.mjs), so that `crm-integration-sdk` resolves from its node_modules.
//   node w1.mjs interleaved <url> <calls> <rounds>   -> JSON { fetch: [ms...], sdk: [ms...] }
//   node w1.mjs fetch|sdk <url> <calls>              -> ms of one subject's calls, in this fresh process
const [mode, url, callsText, roundsText] = process.argv.slice(2);
const calls = Number(callsText);
const TENANT = 'tenant_bench';
const KEY = 'bench-key';
const headers = { accept: 'application/json', 'x-api-key': KEY, 'x-tenant-id': TENANT };

const fetchOne = async () => {
  const res = await fetch(`${url}/integrations/v1/opportunities/opp_1?tenantId=${TENANT}`, { headers });
  if (!res.ok) throw new Error(`status ${res.status}`);
  return (await res.json()).data;
};
// The SDK is imported only by a process that measures it: a fresh fetch process loads none of it.
const sdkOne = async () => {
  const { CrmClient } = await import('crm-integration-sdk');
  const crm = new CrmClient({ baseUrl: url, apiKey: KEY, tenantId: TENANT });
  return () => crm.opportunities.get('opp_1');
};
const loop = (get) => async () => {
  const start = performance.now();
  for (let i = 0; i < calls; i++) await get();
  return performance.now() - start;
};

if (mode === 'interleaved') {
  const subjects = { fetch: loop(fetchOne), sdk: loop(await sdkOne()) };
  const samples = { fetch: [], sdk: [] };
  for (const run of Object.values(subjects)) await run(); // warm-up, not counted
  for (let round = 0; round < Number(roundsText); round++)
    for (const [name, run] of Object.entries(subjects)) samples[name].push(await run());
  process.stdout.write(JSON.stringify(samples));
} else {
  const get = mode === 'sdk' ? await sdkOne() : fetchOne;
  process.stdout.write(String(await loop(get)()));
}
