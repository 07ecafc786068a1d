// The "before" column of bench/RESULTS.md: each row's figure in the results it replaces (the ratio
// where the row has one, else the median), so that a change reports its bench before and after.
// `npm run bench` adds it when it writes the file; `node bench/before.mjs OLD.md` adds it to the
// current bench/RESULTS.md from another results file (such as one from git history).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The rows of a results table, by workload, subject and unit; and the date of the results. */
function parse(text) {
  const date = /^Date: (\d{4}-\d{2}-\d{2})/m.exec(text)?.[1] ?? 'before';
  const lines = text.split('\n');
  const header = lines.find((line) => line.startsWith('| workload |'));
  const rows = new Map();
  if (!header) return { date, rows };
  const names = header.split('|').map((cell) => cell.trim());
  const at = (name) => names.indexOf(name);
  for (const line of lines) {
    if (!line.startsWith('| ') || line === header || line.startsWith('|---')) continue;
    const cells = line.split('|').map((cell) => cell.trim());
    const key = [cells[at('workload')], cells[at('subject')], cells[at('unit')]].join('|');
    const ratio = cells[at('ratio')];
    rows.set(key, ratio || `${cells[at('median')]} ${cells[at('unit')]}`);
  }
  return { date, rows };
}

/** `text` (a results file without a "before" column) with one, from `previous`. */
export function withBefore(text, previous) {
  const { date, rows } = parse(previous);
  if (rows.size === 0) return text;
  const column = `before (${date})`;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('| workload |')) {
        const note = `The last column, ${column}: each row's ratio (else its median) in the results this run replaced, where they had a row of that name; absolute times move with the machine's speed from day to day, ratios much less.`;
        return `${note}\n\n${line} ${column} |`;
      }
      if (line.startsWith('|---')) return `${line}---|`;
      if (!line.startsWith('| ')) return line;
      const cells = line.split('|').map((cell) => cell.trim());
      return `${line} ${rows.get([cells[1], cells[2], cells[4]].join('|')) ?? ''} |`;
    })
    .join('\n');
}

/**
 * The rows of `previous` (its first seven cells) whose workload is not among `workloads`: the rows
 * of workloads a run left out (BENCH_W5_RUNS=0 and the like), carried over as they were measured.
 */
export function rowsNotRun(previous, workloads) {
  const lines = previous.split('\n');
  const header = lines.find((line) => line.startsWith('| workload |'));
  if (!header) return [];
  return lines
    .filter((line) => line.startsWith('| ') && line !== header)
    .map((line) => line.split('|').slice(1, 8))
    .filter((cells) => cells.length === 7 && !workloads.has(cells[0].trim()))
    .map((cells) => `|${cells.join('|')}|`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = new URL('./RESULTS.md', import.meta.url);
  const current = readFileSync(file, 'utf8');
  if (current.includes('| before (')) throw new Error('bench/RESULTS.md has a before column already');
  writeFileSync(file, withBefore(current, readFileSync(process.argv[2], 'utf8')));
}
