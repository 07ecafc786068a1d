import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { syncMapJsonSchema } from '../../../src/cli/sync/mapping/json-schema';

const SHIPPED = new URL('../../../sync-map.schema.json', import.meta.url);

describe('sync-map.schema.json', () => {
  it('is what the zod schema the crm command checks a mapping by gives (UPDATE_SYNC_MAP_SCHEMA=1 rewrites it; then biome format --write)', () => {
    if (process.env.UPDATE_SYNC_MAP_SCHEMA === '1') {
      writeFileSync(SHIPPED, `${JSON.stringify(syncMapJsonSchema(), null, 2)}\n`);
    }
    // Compared as data: biome lays the file out its own way.
    expect(JSON.parse(readFileSync(SHIPPED, 'utf8'))).toEqual(syncMapJsonSchema());
  });

  it('is exported by the package for editors, and shipped in its files', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.exports['./sync-map.schema.json']).toBe('./sync-map.schema.json');
    expect(pkg.files).toContain('sync-map.schema.json');
  });
});
