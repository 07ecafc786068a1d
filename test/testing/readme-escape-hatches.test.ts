import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { throughMsw } from '../support/fake-harness';

/*
 * The README's examples of `extraQuery` and `extraBody` ("What the SDK does not describe yet"),
 * run as written against the fake: the lines are read from the README itself, so the example and
 * the test cannot drift apart.
 */

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The README's statements that use an escape-hatch option, each as it is written there. */
function readmeLines(option: 'extraQuery' | 'extraBody'): string[] {
  const section = readme.slice(readme.indexOf('### What the SDK does not describe yet'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return code.split('\n').filter((line) => line.includes(`${option}:`));
}

// The README's lines are statements on a `crm` in scope (`await ...`, `const x = await ...`).
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  ...args: string[]
) => (crm: CrmClient) => Promise<void>;

test.each(['extraQuery', 'extraBody'] as const)(
  'the README example of %s runs as written against the fake',
  async (option) => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    const lines = readmeLines(option);
    expect(lines.length).toBeGreaterThan(0);

    for (const line of lines) await new AsyncFunction('crm', line)(crm);

    const sent = fake.requests.filter((r) => r.status === 200 || r.status === 201);
    expect(sent).toHaveLength(lines.length);
    if (option === 'extraQuery') expect(sent[0]?.query).toMatchObject({ updatedSince: '2026-11-01T00:00:00Z' });
    else expect(sent[0]?.body).toMatchObject({ loyaltyTier: 'gold' });
  },
);

test('the fake checks the fields it knows beside unknown ones: a bad email with an extra field is still refused', async () => {
  const { fake, baseUrl } = await throughMsw();
  const response = await fetch(`${baseUrl}/integrations/v1/contacts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': fake.credentials.apiKey ?? '' },
    body: JSON.stringify({ tenantId: fake.credentials.tenantId, email: 'not-an-email', loyaltyTier: 'gold' }),
  });

  expect(response.status).toBe(400);
  expect(JSON.stringify(await response.json())).toContain('email');
});

test('an unknown field sent to the fake is not stored, so it cannot set the id the fake gives', async () => {
  const { fake, baseUrl } = await throughMsw();
  const crm = new CrmClient({ ...fake.credentials, baseUrl });

  const contact = await crm.contacts.create({ firstName: 'Ada' }, { extraBody: { id: 'chosen', loyaltyTier: 'gold' } });

  expect(contact.id).not.toBe('chosen');
  expect(fake.store.contacts.get(contact.id)).not.toHaveProperty('loyaltyTier');
});
