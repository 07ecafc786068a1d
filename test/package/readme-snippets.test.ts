import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
// @ts-expect-error a script of the package's checks, without declarations
import { readmeBlocks, writeReadmeProject } from '../../scripts/readme-snippets.mjs';

/* README.md's ```ts blocks, each a file that `npm run check` type-checks against the packed package. */

type Block = { line: number; code: string; skipped: boolean };
const blocksOf = readmeBlocks as (text: string) => Block[];
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('readmeBlocks', () => {
  test('finds every ts block, at its line, and no other language nor a block inside another fence', () => {
    const text = [
      '# Title',
      '```ts',
      "const a: string = 'x';",
      '```',
      '```sh',
      'npm install',
      '```',
      '````md',
      '```ts',
      'not a block of the README',
      '```',
      '````',
      '- a list item',
      '  ```ts',
      '  const b = 1;',
      '  ```',
      '<!-- readme-check: skip (a fragment) -->',
      '```typescript',
      'crm.contacts.',
      '```',
    ].join('\n');

    expect(blocksOf(text)).toEqual([
      { line: 2, code: "const a: string = 'x';", skipped: false },
      { line: 14, code: 'const b = 1;', skipped: false },
      { line: 18, code: 'crm.contacts.', skipped: true },
    ]);
  });

  test("writes each of README.md's blocks as a module of its own, beside the shared declarations", () => {
    const dir = mkdtempSync(join(tmpdir(), 'readme-'));
    dirs.push(dir);
    const root = new URL('../..', import.meta.url).pathname;
    const { files } = writeReadmeProject(root, dir) as { files: string[] };
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const blocks = blocksOf(readme).filter((b) => !b.skipped);

    expect(blocks.length).toBeGreaterThan(20);
    expect(readdirSync(dir).sort()).toEqual([...files].sort());
    for (const block of blocks) {
      const text = readFileSync(join(dir, `readme-${String(block.line).padStart(4, '0')}.ts`), 'utf8');
      expect(text).toContain(block.code);
      expect(text.trimEnd().endsWith('export {};')).toBe(true);
    }
  });
});

describe("README.md's shared declarations", () => {
  test("declare none of the SDK's own exports, so that a block using one must import it as a user would", async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const globals = readFileSync(join(root, 'test/package/readme-globals.d.ts'), 'utf8');
    const declared = [...globals.matchAll(/^\s*(?:const|let|function|type|interface|class)\s+(\w+)/gm)].map(
      (m) => m[1],
    );
    const entries = await Promise.all([
      import('crm-integration-sdk'),
      import('crm-integration-sdk/testing'),
      import('crm-integration-sdk/sync'),
      import('crm-integration-sdk/redis'),
    ]);
    const exported = new Set(entries.flatMap((entry) => Object.keys(entry)));

    expect(declared.length).toBeGreaterThan(5);
    expect(declared.filter((name) => exported.has(name as string))).toEqual([]);
  });
});
