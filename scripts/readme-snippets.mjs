// README.md's TypeScript blocks as files of a user's project, type-checked against the packed
// package by scripts/check-package.mjs (part of `npm run check`), so that a snippet cannot rot.
// Every ```ts block is one module (`export {}` is added, so that its names are its own); the free
// names snippets share (`crm`, `fake`, your `syncDeal`) are declared once, in
// test/package/readme-globals.d.ts. A block that cannot compile on its own (a fragment) is
// preceded by `<!-- readme-check: skip (the reason) -->`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FENCE = /^(\s*)(`{3,})\s*([\w-]*)/;
const SKIP = /<!--\s*readme-check:\s*skip\b/;

/** The ```ts blocks of a markdown text: their first line (1-based), code, and whether they are skipped. */
export function readmeBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    // A fence closes with as many backticks or more, and nothing else (CommonMark).
    const closing = new RegExp(`^\\s*\`{${open[2].length},}\\s*$`);
    const end = lines.findIndex((line, j) => j > i && closing.test(line));
    if (end === -1) throw new Error(`README.md:${i + 1}: a code block is never closed`);
    if (open[2].length === 3 && /^(ts|typescript)$/.test(open[3])) {
      const indent = open[1].length;
      blocks.push({
        line: i + 1,
        code: lines
          .slice(i + 1, end)
          .map((line) => line.slice(indent))
          .join('\n'),
        skipped: SKIP.test(lines.slice(Math.max(0, i - 2), i).join('\n')),
      });
    }
    i = end;
  }
  return blocks;
}

/** Writes each block of README.md under `dir` as `readme-<line>.ts`, with the shared declarations; returns the files. */
export function writeReadmeProject(root, dir) {
  const blocks = readmeBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  mkdirSync(dir, { recursive: true });
  const files = ['readme-globals.d.ts', 'readme-modules.d.ts'];
  for (const file of files) writeFileSync(join(dir, file), readFileSync(join(root, 'test/package', file), 'utf8'));
  for (const block of blocks.filter((b) => !b.skipped)) {
    const file = `readme-${String(block.line).padStart(4, '0')}.ts`;
    // The line of the block in README.md is where tsc's errors point, less this header's one line.
    writeFileSync(join(dir, file), `// README.md, the block at line ${block.line}\n${block.code}\nexport {};\n`);
    files.push(file);
  }
  return { files, blocks };
}
