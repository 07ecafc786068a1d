import { describe, expect, test } from 'vitest';
import { toolsFor } from '../../src/cli/mcp-tools';
import { CrmClient } from '../../src/client';
import { generateFakeData } from '../../src/testing/index';
import { throughMsw } from '../support/fake-harness';

/* The tools of `crm mcp` called in process, for arguments an MCP client's parser would not let through. */

async function tools(allowWrites = false, seeded = false) {
  const seed = seeded ? generateFakeData({ accounts: 1, contacts: 1, opportunities: 1 }) : undefined;
  const { fake, baseUrl } = await throughMsw(seed ? { seed } : {});
  const { tenantId, apiKey } = fake.credentials;
  const crm = new CrmClient({ baseUrl, tenantId, apiKey: apiKey ?? '', maxRetries: 0 });
  return { fake, tools: toolsFor(crm, allowWrites, [apiKey ?? '']) };
}

describe('toolsFor', () => {
  test('an own __proto__ argument is refused as unknown, and nothing is sent', async () => {
    const { fake, tools: t } = await tools(true);
    const args = JSON.parse('{"firstName": "Ada", "__proto__": {"tenantId": "tenant_other"}}');
    const result = await t.call('contacts_create', args);
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^Unknown argument: "__proto__"/) }],
    });
    expect(fake.requests).toEqual([]);
  });

  test('an inherited argument is not read: the positional must be an own property', async () => {
    const { fake, tools: t } = await tools();
    const args = Object.create({ id: 'opp_1' }) as Record<string, unknown>;
    const result = await t.call('opportunities_get', args);
    expect(result.content[0]?.text).toMatch(/^CrmValidationError: Invalid input: id: /);
    expect(fake.requests).toEqual([]);
  });

  test('a call with no arguments object is a call with none', async () => {
    const { tools: t } = await tools();
    const result = await t.call('contacts_list', undefined);
    expect(result.isError).toBeUndefined();
    expect(JSON.parse(result.content[0]?.text ?? '')).toMatchObject({ data: [], next: null });
  });

  test('a cancelled call is a tool error, not a crash', async () => {
    const { tools: t } = await tools();
    const result = await t.call('contacts_list', {}, AbortSignal.abort());
    expect(result).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^CrmAbortError: /) }] });
  });
});

/** A value for a property, from its schema alone, as an agent that reads only the schema would write. */
function valueFor(schema: { type?: string; enum?: readonly unknown[]; format?: string; minLength?: number }): unknown {
  if (schema.enum) return schema.enum[0];
  if (schema.format === 'date-time') return '2027-01-31T09:00:00Z';
  if (schema.type === 'integer' || schema.type === 'number') return 1;
  if (schema.type === 'boolean') return true;
  return 'x';
}

describe('the tool definitions', () => {
  test('describe every input property, so that an agent knows what each field is', async () => {
    const { tools: all } = await tools(true);
    const undescribed = all.definitions.flatMap((tool) =>
      Object.entries(tool.inputSchema.properties)
        .filter(([, schema]) => typeof (schema as { description?: unknown }).description !== 'string')
        .map(([name]) => `${tool.name}.${name}`),
    );
    expect(all.definitions.length).toBeGreaterThan(5);
    expect(undescribed).toEqual([]);
  });

  test('the activity tool requires the opportunity, as the SDK does, and takes no relatedTo pair', async () => {
    const { tools: all } = await tools(true);
    const create = all.definitions.find((tool) => tool.name === 'activities_create');
    expect([...(create?.inputSchema.required ?? [])].sort()).toEqual(['opportunityId', 'subject', 'type']);
    expect(create?.inputSchema.properties).not.toHaveProperty('relatedToType');
    const refused = await all.call('activities_create', { type: 'call', subject: 's', relatedToType: 'opportunity' });
    expect(refused).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Unknown argument') }] });
  });

  test('every write tool called with only the required fields of its schema is not refused for a missing one', async () => {
    const { fake, tools: all } = await tools(true, true);
    const [opportunity] = fake.store.opportunities.values();
    const [account] = fake.store.accounts.values();
    const [contact] = fake.store.contacts.values();
    // Ids and references must name records of the tenant; everything else comes from the schema.
    const existing: Record<string, Record<string, string | undefined>> = {
      opportunities_update: { id: opportunity?.id },
      accounts_update: { id: account?.id },
      contacts_update: { id: contact?.id },
      opportunities_create: { accountId: account?.id },
      activities_create: { opportunityId: opportunity?.id },
    };
    const writes = all.definitions.filter((tool) => !tool.annotations.readOnlyHint);
    expect(writes.map((tool) => tool.name).sort()).toEqual([
      'accounts_create',
      'accounts_update',
      'activities_create',
      'contacts_create',
      'contacts_update',
      'opportunities_create',
      'opportunities_update',
    ]);
    for (const tool of writes) {
      const properties = tool.inputSchema.properties as Record<string, Parameters<typeof valueFor>[0]>;
      const args = Object.fromEntries(
        tool.inputSchema.required.map((name) => [
          name,
          existing[tool.name]?.[name] ?? valueFor(properties[name] ?? {}),
        ]),
      );
      const result = await all.call(tool.name, args);
      expect(result.isError, `${tool.name}(${JSON.stringify(args)}): ${result.content[0]?.text}`).toBeUndefined();
    }
  });
});
