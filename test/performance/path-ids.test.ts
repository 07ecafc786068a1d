import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { PathId, pathIdsOf } from '../../src/internal/endpoint/path';

// PERFORMANCE.md, "Path ids checked by hand": the hand check must never accept what the schema
// refuses, and must give what the schema gives when it accepts.
const ids = ['id', 'other'] as const;
const schemaOf = (names: readonly string[]) => z.strictObject(Object.fromEntries(names.map((id) => [id, PathId])));

const idValue = fc.oneof(
  fc.constantFrom('', '.', '..', '...', 'opp_1', 'a/b', '\ud800', '\udc00x', '\ud83d\ude00', ' ', '%2e%2e'),
  fc.string({ maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.anything({ maxDepth: 0 }),
);
const pathValue = (names: readonly string[]) =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...names, 'extra', '__proto__', 'constructor'), idValue, {
      maxKeys: names.length + 1,
    }),
    fc.constantFrom(undefined, null, 'opp_1', [], ['opp_1'], Object.create(null), new Date(0)),
  );

describe('a path checked by hand', () => {
  test.each([[['id']], [ids]])('is accepted only when the schema accepts it, with the same data (%j)', (names) => {
    const schema = schemaOf(names);
    fc.assert(
      fc.property(pathValue(names), (value) => {
        const byHand = pathIdsOf(names, value);
        if (byHand === undefined) return;
        const parsed = schema.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(byHand).toEqual(parsed.data);
      }),
      { numRuns: 2000 },
    );
  });

  test('accepts the ids a call passes', () => {
    expect(pathIdsOf(['id'], { id: 'opp_1' })).toEqual({ id: 'opp_1' });
    expect(pathIdsOf(['id'], { id: 'a/b?c#d' })).toEqual({ id: 'a/b?c#d' });
  });

  test('leaves to the schema what it must word: empty, dot segments, lone surrogates, wrong types, extra keys', () => {
    for (const value of [
      { id: '' },
      { id: '.' },
      { id: '..' },
      { id: '\ud800' },
      { id: 1 },
      { id: 'opp_1', extra: 'x' },
      {},
      Object.assign(Object.create({ id: 'opp_1' }), {}),
      undefined,
    ])
      expect(pathIdsOf(['id'], value)).toBeUndefined();
  });

  test('reads each id once and returns what it checked, not what a getter says next', () => {
    let reads = 0;
    const value = {
      get id() {
        reads += 1;
        return reads === 1 ? 'opp_1' : '..';
      },
    };
    expect(pathIdsOf(['id'], value)).toEqual({ id: 'opp_1' });
    expect(reads).toBe(1);
  });
});
