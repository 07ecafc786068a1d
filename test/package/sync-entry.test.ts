import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const require = createRequire(import.meta.url);

/** An entry and every file of dist/ it imports, statically or on demand, transitively. */
function closure(entry: string): string {
  const files = new Map<string, string>();
  const visit = (path: string) => {
    if (files.has(path)) return;
    const text = readFileSync(path, 'utf8');
    files.set(path, text);
    for (const [, spec] of text.matchAll(
      /(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g,
    )) {
      visit(join(dirname(path), spec as string));
    }
  };
  visit(join(DIST, entry));
  return [...files.values()].join('\n');
}

describe.skipIf(!existsSync(join(DIST, 'sync.js')))('the sync entry, built', () => {
  for (const entry of ['index.js', 'node/index.js', 'index.cjs']) {
    it(`${entry} loads none of the sync's code`, () => {
      const text = closure(entry);
      for (const marker of ['sqlite', 'SyncJournal', 'write-ahead']) {
        expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
      }
    });
  }

  for (const entry of ['sync.js', 'sync.cjs']) {
    it(`${entry} imports node:sqlite by its full name, only on demand`, () => {
      const text = readFileSync(join(DIST, entry), 'utf8');
      expect(text).toContain('import("node:sqlite")');
      expect(text).not.toMatch(/from\s*["'](node:)?sqlite["']|require\(["'](node:)?sqlite["']\)/);
    });
  }

  it('sync.cjs opens a SQLite journal when required', async () => {
    const { sqliteJournal } = require(join(DIST, 'sync.cjs')) as typeof import('../../src/sync/index');
    const journal = sqliteJournal(':memory:');
    await journal.open();
    await journal.write('acme', {
      put: [
        {
          type: 'accounts',
          key: 'a1',
          state: 'synced',
          crmId: 'acc_1',
          hash: 'h',
          data: '{}',
          attemptedAt: undefined,
          requestId: undefined,
          runId: 'r',
        },
      ],
    });
    expect((await journal.get('acme', 'accounts', ['a1'])).get('a1')?.crmId).toBe('acc_1');
    await journal.close();
  });
});
