import { expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { optionSchemas } from '../../src/internal/request/settings';

// PERFORMANCE.md, "Schemas built when first needed": what a call needs only on a failure (the
// whole input's schema, the envelope's) or only with options is built at its first use, once.

test.each(Object.keys(endpoints))(
  '%s builds its input and envelope schemas when first read, and keeps them',
  (name) => {
    const endpoint = endpoints[name as keyof typeof endpoints];
    for (const part of ['input', 'envelope'] as const) {
      // An accessor, not a value built at import.
      expect(typeof Object.getOwnPropertyDescriptor(endpoint, part)?.get).toBe('function');
      expect(endpoint[part]).toBe(endpoint[part]);
    }
  },
);

test('the option schemas are built once and the same set is given to every use', () => {
  expect(optionSchemas()).toBe(optionSchemas());
  expect(optionSchemas().client).toBe(optionSchemas().client);
});

test('a list call with options refuses a misspelt one as before: the schema built late is the same strict one', () => {
  expect(optionSchemas().list.safeParse({ prefetch: 2, timeout: 5 }).success).toBe(true);
  expect(optionSchemas().list.safeParse({ prefetchh: 2 }).success).toBe(false);
  expect(optionSchemas().request.safeParse({ prefetch: 2 }).success).toBe(false);
});
