// What a store keeps of a key's pace outlives the job, the process and the server that taught it:
// the next job of any worker starts from it. Which of two learned paces a pacer goes by, and whose
// server a pace is good for, are the rules that keep that memory true; they are kept here, apart
// from the pacer, since the store's contract (src/core/pace-store.ts) and the pacer must agree on them.
import type { PaceLearned, PaceLease } from '../core/pace-store';

/** What was learned of a key's pace, and when (the store's clock). */
export type Learned = PaceLearned & { readonly at: number };

/**
 * What a pacer goes by after a lease: what the store told (`told`), unless it was learned from
 * another server than `base`, or `known` (what the pacer learned itself) is newer.
 */
export function newerLearned(
  known: Learned | undefined,
  told: PaceLease['learned'],
  base: string | undefined,
): Learned | undefined {
  // A rate learned from another server (another base URL, the same key) says nothing of this one's.
  const fromHere = told?.base === undefined || told.base === base ? told : undefined;
  return !fromHere || (known && known.at > fromHere.at) ? known : fromHere;
}

/** What was learned of a phase, as told to its store: with the fingerprint of the server it was learned from. */
export function withBase(found: PaceLearned, base: string | undefined): PaceLearned {
  return base === undefined ? found : { ...found, base };
}
