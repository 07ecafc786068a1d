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

describe.skipIf(!existsSync(join(DIST, 'postgres.js')))('the postgres entry, built', () => {
  for (const entry of ['index.js', 'node/index.js', 'index.cjs', 'redis.js', 'redis.cjs', 'sync.js', 'sync.cjs']) {
    it(`${entry} loads none of the Postgres journal's code`, () => {
      const text = closure(entry);
      // The function itself, not its name: a message may tell a user to use postgresJournal().
      for (const marker of ['pg_advisory', 'function postgresJournal', 'crm_sync']) {
        expect({ marker, found: text.includes(marker) }).toEqual({ marker, found: false });
      }
    });
  }

  it('the crm bin imports pg only when --postgres is given, by a dynamic import', () => {
    const bin = readFileSync(join(DIST, 'cli/crm.js'), 'utf8');
    expect(bin).toContain('import("pg")');
    expect(bin).not.toMatch(/from\s*["']pg["']|require\(["']pg["']\)/);
  });

  for (const entry of ['postgres.js', 'postgres.cjs']) {
    it(`${entry} takes SyncJournalError from the sync entry, and imports no pg`, () => {
      const text = readFileSync(join(DIST, entry), 'utf8');
      expect(text).toMatch(/(from|require\()\s*["']crm-integration-sdk\/sync["']/);
      expect(text).not.toMatch(/class SyncJournalError/);
      expect(text).not.toMatch(/["']pg["']/);
    });
  }

  it("postgres.cjs's errors are the sync entry's SyncJournalError", async () => {
    const { postgresJournal } = require(join(DIST, 'postgres.cjs')) as typeof import('../../src/postgres/index');
    const { SyncJournalError } = require('crm-integration-sdk/sync') as typeof import('../../src/sync/index');
    const down = {
      connect: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    };
    const error = await Promise.resolve(postgresJournal(down as never).open()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SyncJournalError);
    expect(error).toMatchObject({ reason: 'unavailable' });
  });
});
