import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/core/errors';
import type { SyncAccountRecord } from '../../src/sync/types';
import { syncHarness } from '../support/sync';

/* A field named __proto__ smuggles nothing past the schema or out of the journal's hash (issue 45, 7). */

const line = (text: string) => JSON.parse(text) as SyncAccountRecord;

/** The bodies of the creates the fake received, as sent (own fields of the parsed JSON), but the tenant the client adds. */
const createBodies = (requests: readonly { method: string; body: unknown }[]) =>
  requests
    .filter((r) => r.method === 'POST')
    .map((r) => {
      const { tenantId: _, ...fields } = r.body as Record<string, unknown>;
      return fields;
    });

describe('a field named __proto__ in data', () => {
  test('fails its record with a clear message, sends nothing of it, and the rest of the run goes on', async () => {
    const { sync, fake, journal } = await syncHarness();
    const report = await sync.run({
      accounts: [
        line(
          '{"key":"A1","data":{"name":"Acme","__proto__":{"industry":"Smuggled","website":"https://evil.example"}}}',
        ),
        line('{"key":"A2","data":{"name":"Beta","industry":"Retail"}}'),
      ],
    });

    expect(report.created).toBe(1);
    expect(report.failed).toHaveLength(1);
    const [failure] = report.failed;
    expect(failure).toMatchObject({ type: 'accounts', key: 'A1' });
    expect(failure?.error).toBeInstanceOf(CrmValidationError);
    expect((failure?.error as CrmValidationError | undefined)?.issues).toEqual([
      expect.objectContaining({
        field: 'data.__proto__',
        path: ['data', '__proto__'],
        message: expect.stringMatching(/"__proto__" is refused/),
      }),
    ]);
    expect(createBodies(fake.requests)).toEqual([{ name: 'Beta', industry: 'Retail' }]);
    expect(JSON.stringify(fake.requests)).not.toContain('Smuggled');
    expect((await journal.get(fake.tenantId, 'accounts', ['A1', 'A2'])).has('A1')).toBe(false);
  });

  test('is found at any depth, and named by its path', async () => {
    const { sync, fake } = await syncHarness();
    const plan = await sync.plan({
      activities: [
        {
          key: 'E1',
          data: JSON.parse(
            '{"type":"note","subject":"x","relatedToType":"account","relatedToId":"acc_1","extra":[{"__proto__":{"a":1}}]}',
          ),
        },
      ],
    });
    expect(plan.entries).toEqual([
      {
        type: 'activities',
        key: 'E1',
        action: 'invalid',
        reason: expect.stringMatching(/data\.extra\.0\.__proto__.*"__proto__" is refused/),
      },
    ]);
    expect(fake.requests).toEqual([]);
  });

  test('a field inherited from a polluted Object.prototype is neither sent nor hashed: the body sent is what the journal holds', async () => {
    const { sync, fake, journal } = await syncHarness();
    const proto = Object.prototype as Record<string, unknown>;
    Object.defineProperty(proto, 'industry', { value: 'Polluted', configurable: true, writable: true });
    try {
      await sync.run({ accounts: [{ key: 'A1', data: { name: 'Acme' } }] });
    } finally {
      delete proto.industry;
    }

    const [body] = createBodies(fake.requests);
    expect(Object.keys(body ?? {})).toEqual(['name']);
    const entry = (await journal.get(fake.tenantId, 'accounts', ['A1'])).get('A1');
    expect(JSON.parse(entry?.data ?? '')).toEqual(body);
  });
});
