/*
 * "Did you mean ...?" for a misspelt option, as git suggests a command: the known names nearest to
 * the one given, by edit distance with a swap of two neighbours counted as one edit (`--stauts` is
 * one from `--status`).
 */

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The known names nearest to `given`, best first: within 2 edits, or a third of its length for a
 * long name, or names it begins (`--stat` for `--status`). Empty when none is near enough.
 */
export function nearest(given: string, known: readonly string[]): string[] {
  const limit = Math.max(2, Math.floor(given.length / 3));
  const scored = known
    .map((name) => ({ name, d: name.startsWith(given) && given.length >= 3 ? 1 : distance(given, name) }))
    .filter(({ d }) => d <= limit);
  const best = Math.min(...scored.map(({ d }) => d));
  return scored.filter(({ d }) => d === best).map(({ name }) => name);
}
