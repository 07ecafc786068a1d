// The benchmark's server, run in its own process so that it is not measured with the clients.
// Bodies are serialized once at start-up, so the server is never the bottleneck.
//   node bench/server.mjs [latencyMs]   -> prints "READY <port>"
import { createServer } from 'node:http';

const latency = Number(process.argv[2] ?? 0);
const TOTAL = 100_000;
const LIMIT = 200;
const at = (i) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();

const opportunity = {
  id: 'opp_1',
  name: 'Acme renewal 2027',
  accountId: 'acc_1',
  probability: 60,
  ownerId: 'usr_1',
  contactId: 'con_1',
  pipelineId: 'pl_1',
  pipelineStageId: 'ps_3',
  amount: 48000,
  expectedCloseDate: at(90_000),
  contractStartDate: null,
  closeDate: null,
  source: 'integration',
  type: 'renewal',
  nextStep: 'Send the contract',
  description: 'Three-year renewal',
  isIntegration: true,
  account: 'Acme Ltd',
  contact: 'Ada Lovelace',
  owner: 'Grace Hopper',
  activitiesCount: 12,
  lastActivityDate: at(1000),
  dsa: 4,
  createdAt: at(0),
  updatedAt: at(500),
  primaryContact: { id: 'con_1', name: 'Ada Lovelace' },
  associatedContacts: [{ id: 'con_2', name: 'Charles Babbage' }],
};
const activity = (i) => ({
  id: `act_${i}`,
  tenantId: 'tenant_bench',
  relatedToType: 'opportunity',
  relatedToId: 'opp_1',
  ownerId: 'usr_1',
  type: ['call', 'meeting', 'email', 'task', 'note', 'whatsapp'][i % 6],
  subject: `Activity number ${i}`,
  activityDate: at(i),
  createdAt: at(i),
  updatedAt: at(i),
  ownerName: 'Grace Hopper',
  description: 'Discussed the renewal terms and next steps.',
  relatedEntityName: 'Acme renewal 2027',
});

const opportunityBody = Buffer.from(JSON.stringify({ success: true, data: opportunity }));
const pages = Math.ceil(TOTAL / LIMIT);
const pageBodies = Array.from({ length: pages + 2 }, (_, index) => {
  const page = index + 1;
  const data = [];
  for (let i = (page - 1) * LIMIT; i < Math.min(page * LIMIT, TOTAL); i++) data.push(activity(i));
  return Buffer.from(JSON.stringify({ success: true, data, pagination: { page, limit: LIMIT, total: TOTAL, pages } }));
});
const notFound = Buffer.from(JSON.stringify({ success: false, error: { message: 'Not found' } }));

const send = (res, status, body) => {
  const write = () => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  };
  if (latency > 0) setTimeout(write, latency);
  else write();
};

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://bench');
  if (url.pathname.startsWith('/integrations/v1/opportunities/')) return send(res, 200, opportunityBody);
  if (url.pathname === '/integrations/v1/activities') {
    const page = Number(url.searchParams.get('page') ?? 1);
    return send(res, 200, pageBodies[page - 1] ?? pageBodies[pages]);
  }
  send(res, 404, notFound);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
