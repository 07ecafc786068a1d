import { expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import * as sdk from '../../src/index';

// PERFORMANCE.md, "Field rules built once": a zod schema never changes once built, so the fields
// with one rule share one schema, and the import builds a hundred schemas, not several hundred.

/** The distinct zod schemas (checks included) that `roots` are built from. */
function schemasIn(roots: unknown[]): Set<unknown> {
  const seen = new Set<unknown>();
  const visited = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || visited.has(value)) return;
    visited.add(value);
    const zod = (value as { _zod?: { def: object } })._zod;
    if (zod) seen.add(value);
    for (const part of Object.values(zod?.def ?? value)) walk(part);
  };
  for (const root of roots) walk(root);
  return seen;
}

test('the exported schemas are built from fewer than 150 distinct schemas (373 with a schema a field)', () => {
  const exported = Object.entries(sdk).flatMap(([name, value]) => (name.endsWith('Schema') ? [value] : []));
  expect(schemasIn(exported).size).toBeLessThan(150);
});

test("a record's optional string fields, in requests and responses, each share one schema", () => {
  const { shape: account } = sdk.AccountSchema._zod.def;
  const { shape: opportunity } = sdk.OpportunitySchema._zod.def;
  expect(account.city).toBe(account.phone);
  expect(account.city).toBe(opportunity.description);
  const { shape: update } = sdk.AccountUpdateInputSchema._zod.def;
  expect(update.city).toBe(update.phone);
  expect(update.city).not.toBe(account.city);
});

test('the endpoints that take no query or body share the one schema of an absent part', () => {
  const shapeOf = (schema: unknown) => (schema as { _zod: { def: { shape: Record<string, unknown> } } })._zod.def.shape;
  expect(shapeOf(endpoints.getOpportunity.input).query).toBe(shapeOf(endpoints.apiKeyStatus.input).body);
});
