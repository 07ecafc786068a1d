import { readdir, readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { makeClient } from '../support/capture';

// Guards "The first attempt by fetch" and "One bundle, ky on demand" (PERFORMANCE.md): a first
// attempt is a plain fetch of the URL; a retry goes through ky, which the Node build loads from
// a module of its own, at the first retry, never on import.

/** A fetch that answers 503 and then 200, and keeps what each attempt was called with. */
function flakyFetch() {
  const inputs: unknown[] = [];
  const fetch = async (input: RequestInfo | URL, _init?: RequestInit) => {
    inputs.push(input);
    return inputs.length === 1
      ? new Response('busy', { status: 503, headers: { 'retry-after': '0' } })
      : Response.json({ success: true, data: { id: 'opp_1' } });
  };
  return { inputs, fetch };
}

test('a first attempt hands fetch the URL as a string, and a retry hands it the Request ky built', async () => {
  const { inputs, fetch } = flakyFetch();

  await expect(makeClient({ fetch }).opportunities.get('opp_1')).resolves.toEqual({ id: 'opp_1' });

  expect(inputs).toHaveLength(2);
  expect(inputs[0]).toBe('https://crm.test/integrations/v1/opportunities/opp_1?tenantId=tenant_1');
  expect(inputs[1]).toBeInstanceOf(Request);
  expect((inputs[1] as Request).url).toBe(inputs[0]);
});

test('the Node build holds ky in a module of its own, which the entry imports only on demand', async () => {
  const dir = new URL('../../dist/node/', import.meta.url);
  const entry = await readFile(new URL('index.js', dir), 'utf8');
  const files = await readdir(dir);
  const kyFile = files.find((file) => /^ky-\w+\.js$/.test(file));

  // ky's import-time probe for request streams: what loads Node's fetch machinery on import.
  expect(entry).not.toContain('empty.invalid');
  expect(kyFile).toBeDefined();
  expect(await readFile(new URL(kyFile as string, dir), 'utf8')).toContain('empty.invalid');
  expect(entry).toMatch(new RegExp(`import\\(["']\\./${(kyFile as string).replace('.', '\\.')}["']\\)`));
});
