import { PassThrough } from 'node:stream';
import { expect, test, vi } from 'vitest';
import { runMcpServer } from '../../src/cli/mcp';
import { CrmClient } from '../../src/index';
import { generateFakeData } from '../../src/testing/index';
import { startedServer } from '../support/fake-harness';

/* `crm mcp`'s own output, as the client reads it: one JSON-RPC message a line. */

test('writes the line separators and bidi controls of a record as escapes, so that each message stays one line', async () => {
  const hostile = 'a\u2028b\u2029c \u202eevil\u202c \u2066x\u2069 \u0085';
  const seed = generateFakeData({ accounts: 1, contacts: 1, opportunities: 0, activities: 0 });
  const srv = await startedServer({
    seed: { ...seed, accounts: (seed.accounts ?? []).map((a) => ({ ...a, name: hostile })) },
  });
  const [account] = srv.fake.store.accounts.values();
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => {
    written += chunk.toString('utf8');
  });
  const { tenantId, apiKey } = srv.fake.credentials;
  const served = runMcpServer({
    crm: new CrmClient({ baseUrl: srv.url, tenantId, apiKey: apiKey ?? '' }),
    allowWrites: true,
    version: '0.0.0',
    input,
    output,
  });

  const messages = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'accounts_update', arguments: { id: account?.id, industry: 'Tech' } },
    },
  ];
  input.write(messages.map((message) => `${JSON.stringify(message)}\n`).join(''));
  await vi.waitFor(() => expect(written).toContain('"id":2'), { timeout: 30_000, interval: 20 });
  input.end();
  await served;

  expect(written).not.toMatch(/[\u0085\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
  const lines = written.split('\n').filter(Boolean);
  const answer = lines.map((line) => JSON.parse(line)).find((message) => message.id === 2);
  expect(answer?.result?.isError).not.toBe(true);
  expect(JSON.stringify(answer?.result)).toContain(JSON.stringify(hostile).slice(1, -1));
  expect(answer?.result?.structuredContent?.name).toBe(hostile);
});
