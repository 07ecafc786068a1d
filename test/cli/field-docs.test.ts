import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { fieldDocsSource } from '../../scripts/field-docs';

test('the generated field docs are what the generator writes from the TSDoc today (else: npm run generate)', async () => {
  const committed = await readFile(new URL('../../src/cli/field-docs.generated.ts', import.meta.url), 'utf8');

  expect(committed).toBe(fieldDocsSource());
});
