import { describe, expect, test } from 'vitest';
import { toolsFor } from '../../src/cli/mcp-tools';
import { CrmClient } from '../../src/client';
import { throughMsw } from '../support/fake-harness';

/* The tools of `crm mcp` called in process, for arguments an MCP client's parser would not let through. */

async function tools(allowWrites = false) {
  const { fake, baseUrl } = await throughMsw();
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
