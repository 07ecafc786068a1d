/*
 * "Did you mean ...?" for a misspelt option, as git suggests a command: the known names nearest to
 * the one given, by edit distance with a swap of two neighbours counted as one edit (`--stauts` is
 * one from `--status`).
 */

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`, a row at a time. */
function distance(a: string, b: string): number {
  let before: number[] = [];
  let above = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const swap = j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? (before[j - 2] as number) + 1 : i + j;
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        swap,
      );
    }
    before = above;
    above = row;
  }
  return above[b.length] as number;
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
