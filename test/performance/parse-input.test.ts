import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { parseContext } from '../../src/internal/endpoint/parse-context';

/** Values a part may hold: valid-looking ids, dates, numbers, objects and anything else. */
const value = fc.oneof(
  fc.constantFrom(undefined, null, '', '.', '..', 'opp_1', 'a/b', '\ud800', 1, 0, -1, 200, 201, 1.5, true),
  fc.constantFrom('2026-01-31T09:00:00Z', '2026-13-01', new Date('2026-01-31T09:00:00Z'), new Date(Number.NaN)),
  fc.string({ maxLength: 4 }),
  fc.anything({ maxDepth: 1 }),
);

/** Objects with the keys a schema knows, and sometimes one it does not. */
const objectOf = (keys: readonly string[]) =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...keys, 'extra'), value, { maxKeys: keys.length + 1 }),
    fc.constantFrom(undefined, null, 'x', []),
  );

/** A valid part with up to two fields changed (or removed, as undefined), or anything at all. */
const around = (valid: object | undefined, keys: readonly string[]) =>
  fc.oneof(
    fc
      .dictionary(fc.constantFrom(...keys, 'extra'), value, { maxKeys: 2 })
      .map((changes) => (valid === undefined ? undefined : { ...valid, ...changes })),
    fc.constant(valid),
    objectOf(keys),
  );

const shapeKeys = (schema: unknown): string[] =>
  Object.keys((schema as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape ?? {});

/** A valid query and body of each endpoint that has one. */
const VALID: Partial<Record<keyof typeof endpoints, { query?: object; body?: object }>> = {
  createOpportunity: { body: { name: 'Renewal', accountId: 'acc_1', closeDate: new Date(0) } },
  updateOpportunity: { body: { stage: 'won' } },
  listActivities: { query: { opportunityId: 'opp_1', limit: 50 } },
  createActivity: { body: { opportunityId: 'opp_1', type: 'call', subject: 'Intro' } },
  createAccount: { body: { name: 'Acme' } },
  updateAccount: { body: { city: 'Lyon' } },
  createContact: { body: { email: 'ada@example.com' } },
  updateContact: { body: { firstName: 'Ada' } },
  listContacts: { query: { status: 'active' } },
  resolveGrant: { query: { grantId: 'grant_1' } },
};

describe('a call input checked part by part is accepted exactly when the whole input schema accepts it', () => {
  /** How many runs each endpoint accepted, of its 400. */
  const accepted = new Map<string, number>();

  test.each(Object.keys(endpoints))('%s', (name) => {
    const endpoint = endpoints[name as keyof typeof endpoints];
    const ids = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const valid = VALID[name as keyof typeof endpoints];
    const input = fc.record(
      {
        path: around(
          ids.length ? Object.fromEntries(ids.map((id) => [id, 'opp_1'])) : undefined,
          ids.length ? ids : ['id'],
        ),
        query: around(valid?.query, shapeKeys(endpoint.query)),
        body: around(valid?.body, shapeKeys(endpoint.body)),
      },
      { requiredKeys: [] },
    );

    fc.assert(
      fc.property(input, (wrapper) => {
        const fast = endpoint.parseInput(wrapper);
        const whole = endpoint.input.safeParse(wrapper, parseContext);
        expect(fast.success).toBe(whole.success);
        if (fast.success) accepted.set(name, (accepted.get(name) ?? 0) + 1);
        if (fast.success && whole.success) expect(fast.data).toEqual(whole.data);
        else expect(fast.error?.issues).toEqual(whole.error?.issues);
      }),
      { numRuns: 400 },
    );
  });

  test('a body comes out as its schema writes it: a Date becomes its ISO string', () => {
    const wrapper = { body: { name: 'Renewal', accountId: 'acc_1', expectedCloseDate: new Date(0) } };

    const parsed = endpoints.createOpportunity.parseInput(wrapper);

    expect(parsed.data).toEqual({
      body: { name: 'Renewal', accountId: 'acc_1', expectedCloseDate: '1970-01-01T00:00:00.000Z' },
    });
    expect(parsed.data).toEqual(endpoints.createOpportunity.input.safeParse(wrapper).data);
  });

  test('the runs reached both outcomes for every endpoint', () => {
    const counts = Object.keys(endpoints).map((name) => [name, accepted.get(name) ?? 0] as const);
    expect(counts.filter(([, count]) => count === 0 || count === 400)).toEqual([]);
  });
});
