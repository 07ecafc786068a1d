import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakeCrmServer, generateFakeData, startFakeCrmServer } from '../../src/testing/index';
import { CRM_BIN, runCrm } from '../support/run-crm';

/*
 * `crm mcp` driven by the MCP SDK's own client over stdio, against the fake CRM over real HTTP.
 */

// The one place that says how `crm mcp` is started: the built bin, on this process's Node.
// (Without the MCP SDK installed, it says how to install it: test/package/tarball.test.ts.)
const crmMcp = (...flags: string[]) => ({ command: process.execPath, args: [CRM_BIN, 'mcp', ...flags] });

const READ_TOOLS = ['activities_list', 'contacts_list', 'grants_resolve', 'opportunities_get'];
const WRITE_TOOLS = [
  'accounts_create',
  'accounts_update',
  'activities_create',
  'contacts_create',
  'contacts_update',
  'opportunities_create',
  'opportunities_update',
];

interface Text {
  readonly type: string;
  readonly text?: string;
}

/** A running `crm mcp` and its client; every answer and the server's stderr are kept, to look for secrets. */
async function connect(srv: FakeCrmServer, ...flags: string[]) {
  const { tenantId, apiKey, adminToken } = srv.fake.credentials;
  const transport = new StdioClientTransport({
    ...crmMcp(...flags),
    // The admin token too: key management must stay out of reach even when the environment has it.
    env: { CRM_BASE_URL: srv.url, CRM_TENANT_ID: tenantId, CRM_API_KEY: apiKey ?? '', CRM_ADMIN_TOKEN: adminToken },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'crm-mcp-test', version: '0.0.0' });
  await client.connect(transport);
  const answers: string[] = [];
  /** Calls a tool; its text content, parsed as JSON unless it is an error. */
  async function call(name: string, args: Record<string, unknown> = {}) {
    const result = await client.callTool({ name, arguments: args });
    answers.push(JSON.stringify(result));
    const [first] = result.content as Text[];
    const text = first?.text ?? '';
    return { isError: result.isError === true, text, structured: result.structuredContent };
  }
  return { client, call, answers, stderr: () => stderr, close: () => client.close() };
}

type Connection = Awaited<ReturnType<typeof connect>>;

const seed = () => generateFakeData({ accounts: 2, contacts: 5, opportunities: 2, activities: 0 });

describe('crm mcp', () => {
  let srv: FakeCrmServer;
  let mcp: Connection;
  beforeAll(async () => {
    srv = await startFakeCrmServer({ seed: seed() });
    mcp = await connect(srv);
  });
  afterAll(async () => {
    await mcp?.close();
    await srv?.close();
  });

  test('lists the read tools only: no write tool, no key management', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(READ_TOOLS);
    const list = tools.find((tool) => tool.name === 'contacts_list');
    expect(list?.description).toContain('GET /integrations/v1/contacts');
    expect(list?.description).toContain('"next"');
    expect(list?.inputSchema).toEqual({
      type: 'object',
      properties: {
        page: {
          description: expect.stringContaining('page'),
          type: 'integer',
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
        },
        limit: { description: expect.stringContaining('1 to 200'), type: 'integer', minimum: 1, maximum: 200 },
        status: { description: expect.stringContaining('`active`'), type: 'string', enum: ['active', 'inactive'] },
      },
      required: [],
      additionalProperties: false,
    });
    expect(list?.annotations).toMatchObject({ readOnlyHint: true });
    const get = tools.find((tool) => tool.name === 'opportunities_get');
    expect(get?.inputSchema).toMatchObject({ properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] });
    const grants = tools.find((tool) => tool.name === 'grants_resolve');
    expect(grants?.inputSchema).toMatchObject({ properties: { grantId: { type: 'string' } }, required: ['grantId'] });
  });

  test('contacts_list returns the first page as JSON, with the arguments that ask for the next', async () => {
    const first = await mcp.call('contacts_list', { limit: 2 });
    expect(first.isError).toBe(false);
    const page = JSON.parse(first.text);
    expect(first.structured).toEqual(page);
    expect(page.data).toHaveLength(2);
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3 });
    expect(page.next).toEqual({ limit: 2, page: 2 });

    const second = JSON.parse((await mcp.call('contacts_list', page.next)).text);
    const third = JSON.parse((await mcp.call('contacts_list', second.next)).text);
    expect(third.next).toBeNull();
    const ids = [...page.data, ...second.data, ...third.data].map((contact: { id: string }) => contact.id);
    expect(new Set(ids)).toEqual(new Set(srv.fake.store.contacts.keys()));
  });

  test("opportunities_get on an unknown id is a tool error with the SDK's message", async () => {
    const result = await mcp.call('opportunities_get', { id: 'opp_missing' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^CrmNotFoundError: /);
    expect(result.text).toContain('404');
    expect(result.text).not.toMatch(/\n\s+at /);
  });

  test('a write tool is refused without --allow-writes, and nothing is created', async () => {
    const before = srv.fake.requests.length;
    const result = await mcp.call('contacts_create', { firstName: 'Ada' });
    expect(result).toMatchObject({ isError: true });
    expect(result.text).toContain('--allow-writes');
    expect(srv.fake.requests.length).toBe(before);
    const list = JSON.parse((await mcp.call('contacts_list', { limit: 200 })).text);
    expect(list.data.map((contact: { firstName?: string }) => contact.firstName)).not.toContain('Ada');
    expect(list.pagination.total).toBe(5);
  });

  test('key management is no tool, even with an admin token in the environment', async () => {
    const before = srv.fake.requests.length;
    for (const name of ['api_key_status', 'api_key_generate', 'apiKey_generate']) {
      const result = await mcp.call(name);
      expect(result).toMatchObject({ isError: true, text: expect.stringContaining('Unknown tool') });
    }
    expect(srv.fake.requests.length).toBe(before);
  });

  test("bad input is a tool error with the SDK's validation message, and nothing is sent", async () => {
    const before = srv.fake.requests.length;
    const limit = await mcp.call('contacts_list', { limit: 0 });
    expect(limit).toMatchObject({ isError: true });
    expect(limit.text).toBe('CrmValidationError: Invalid input: limit: Too small: expected number to be >=1');
    const huge = await mcp.call('contacts_list', { limit: 1_000_000 });
    expect(huge.text).toMatch(/^CrmValidationError: Invalid input: limit: /);
    const id = await mcp.call('opportunities_get', {});
    expect(id.text).toMatch(/^CrmValidationError: Invalid input: id: /);
    expect(srv.fake.requests.length).toBe(before);
  });

  test('a __proto__ argument neither reaches the SDK nor steers the next page', async () => {
    const first = await mcp.call(
      'contacts_list',
      JSON.parse('{"limit": 2, "__proto__": {"page": 7, "tenantId": "x"}}'),
    );
    expect(JSON.parse(first.text)).toMatchObject({ pagination: { page: 1 }, next: { limit: 2, page: 2 } });
    expect(srv.fake.requests.at(-1)?.query).toEqual({ limit: '2', tenantId: srv.fake.credentials.tenantId });
  });

  test('arguments a tool does not declare are refused, a tenantId among them, and nothing is sent', async () => {
    const before = srv.fake.requests.length;
    const tenant = await mcp.call('contacts_list', { tenantId: 'tenant_other' });
    expect(tenant).toMatchObject({ isError: true });
    expect(tenant.text).toBe('Unknown argument: "tenantId". contacts_list takes page, limit, status.');
    const extra = await mcp.call('opportunities_get', { id: 'opp_1', tenantId: 'tenant_other', constructor: 1 });
    expect(extra.text).toBe('Unknown arguments: "tenantId", "constructor". opportunities_get takes id.');
    expect(srv.fake.requests.length).toBe(before);
  });

  test('no credential appears in a tool result or on stderr, even when the server echoes the key', async () => {
    const { apiKey, adminToken } = srv.fake.credentials;
    const secret = apiKey ?? '';
    srv.fake.failNext({
      endpoint: 'listContacts',
      status: 400,
      body: {
        success: false,
        error: { code: 'BAD_KEY', message: `key ${secret} refused`, details: { apiKey: secret } },
      },
    });
    const echoed = await mcp.call('contacts_list', {});
    expect(echoed).toMatchObject({ isError: true });
    expect(echoed.text).toMatch(/^CrmBadRequestError: /);
    expect(srv.fake.requests.at(-1)?.headers['x-api-key']).toBe(secret);
    // A record that carries the key, as a careless server might send: masked too.
    srv.fake.failNext({
      endpoint: 'resolveGrant',
      status: 200,
      body: { success: true, data: { grantId: 'grant_demo', note: `issued to ${secret}`, [secret]: true } },
    });
    const record = await mcp.call('grants_resolve', { grantId: 'grant_demo' });
    expect(JSON.parse(record.text)).toEqual({
      grantId: 'grant_demo',
      note: 'issued to [redacted]',
      '[redacted]': true,
    });
    const everything = [...mcp.answers, mcp.stderr()].join('\n');
    expect(mcp.answers.length).toBeGreaterThan(5);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(adminToken);
  });
});

describe('crm mcp --allow-writes', () => {
  let srv: FakeCrmServer;
  let mcp: Connection;
  beforeAll(async () => {
    srv = await startFakeCrmServer({ seed: seed() });
    mcp = await connect(srv, '--allow-writes');
  });
  afterAll(async () => {
    await mcp?.close();
    await srv?.close();
  });

  test('lists the write tools too, but no key management', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('contacts_create')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.get('opportunities_update')?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(byName.get('opportunities_create')?.inputSchema.required).toEqual(['name', 'accountId']);
    expect(byName.get('opportunities_update')?.inputSchema.required).toEqual(['id']);
  });

  test('contacts_create creates the contact in the tenant of the environment, and contacts_list shows it', async () => {
    const created = await mcp.call('contacts_create', { firstName: 'Ada', email: 'ada@example.com' });
    expect(created.isError).toBe(false);
    const contact = JSON.parse(created.text);
    expect(contact).toMatchObject({ firstName: 'Ada', email: 'ada@example.com' });
    expect(srv.fake.requests.at(-1)?.body).toEqual({
      firstName: 'Ada',
      email: 'ada@example.com',
      tenantId: srv.fake.credentials.tenantId,
    });
    const list = JSON.parse((await mcp.call('contacts_list', { limit: 200 })).text);
    expect(list.pagination.total).toBe(6);
    expect(list.data.map((c: { id: string }) => c.id)).toContain(contact.id);
  });

  test('a tenantId in the arguments of a write is refused, and nothing is created', async () => {
    const before = srv.fake.store.contacts.size;
    const result = await mcp.call('contacts_create', { firstName: 'Eve', tenantId: 'tenant_other' });
    expect(result.text).toBe(
      'Unknown argument: "tenantId". contacts_create takes email, accountId, firstName, lastName, phone, mobile, position, department, isPrimary, status.',
    );
    expect(srv.fake.store.contacts.size).toBe(before);
  });
});

/** `crm mcp` with raw lines on its input, closed at once; its output lines and exit code. */
async function runWithInput(lines: readonly unknown[], env: Record<string, string | undefined>) {
  const run = await runCrm(['mcp'], env, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return {
    ...run,
    answers: run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  };
}

test('answers the calls under way when the client closes its input, then exits 0', async () => {
  const srv = await startFakeCrmServer({ seed: seed(), latencyMs: 300 });
  try {
    const { tenantId, apiKey } = srv.fake.credentials;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } },
    };
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'contacts_list', arguments: { limit: 1 } },
    };
    const run = await runWithInput([initialize, call], {
      CRM_BASE_URL: srv.url,
      CRM_TENANT_ID: tenantId,
      CRM_API_KEY: apiKey,
    });
    expect(run.code).toBe(0);
    const answer = run.answers.find((message) => message.id === 2);
    expect(answer).toBeDefined();
    expect(JSON.parse(answer?.result.content[0].text)).toMatchObject({ pagination: { page: 1, limit: 1, total: 5 } });
  } finally {
    await srv.close();
  }
});

test("a client message over the MCP SDK's 10 MiB limit: says so on stderr and exits 1", async () => {
  const srv = await startFakeCrmServer({ seed: seed() });
  try {
    const { tenantId, apiKey } = srv.fake.credentials;
    const huge = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'contacts_list', arguments: { padding: 'x'.repeat(11 * 1024 * 1024) } },
    };
    const run = await runWithInput([huge], { CRM_BASE_URL: srv.url, CRM_TENANT_ID: tenantId, CRM_API_KEY: apiKey });

    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({
      name: 'McpConnectionLostError',
      message: expect.stringMatching(/closed the connection to the client: .*exceeded maximum size of 10485760 bytes/),
    });
    expect(run.stderr).not.toContain(apiKey);
  } finally {
    await srv.close();
  }
});
