import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/** An entry and every file of dist/ it imports, statically or on demand, transitively. */
function closure(entry: string): Map<string, string> {
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
  return files;
}

/** Words only the command line's code holds. */
const CLI_MARKERS = ['parseArgs', 'Secrets are never flag values', 'crm --help', 'records/s', 'openapi: "3.1'];

describe.skipIf(!existsSync(join(DIST, 'index.js')))("the SDK's entries", () => {
  for (const entry of ['index.js', 'node/index.js', 'index.cjs', 'testing.js', 'node/testing.js', 'testing.cjs']) {
    it(`${entry} loads none of the command line's code`, () => {
      const files = closure(entry);
      expect(files.size).toBeGreaterThan(0);
      for (const [path, text] of files) {
        for (const marker of CLI_MARKERS)
          expect({ path, marker, found: text.includes(marker) }).toEqual({ path, marker, found: false });
      }
    });
  }

  it('the bin is the only file that holds it', () => {
    const bin = readFileSync(join(DIST, 'cli/crm.js'), 'utf8');
    for (const marker of CLI_MARKERS) expect(bin).toContain(marker);
  });
});
