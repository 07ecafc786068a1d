import type { SyncJournal, SyncJournalEntry, SyncType } from './journal';
import type { SyncMaxRemoved, SyncRefusedRemoval } from './types';

/*
 * The removal guard (STYLE.md 24): a run measures what a complete list no longer holds before it
 * removes any of it, and refuses a size no ordinary night produces. An empty or cut export looks
 * to the engine exactly like a tenant that closed every account.
 */

/** The default guard allows this many removals of a type whatever its size... */
const DEFAULT_COUNT = 10;
/** ...or this share of its synced records (in tenths), whichever is more. */
const DEFAULT_TENTHS = 1;

/** Entries of one page of the journal's list(). */
const PAGE = 1000;

/** A share as `maxRemoved` takes it: digits, maybe a fraction, and `%`. */
const SHARE = /^(\d+)(?:\.(\d+))?%$/;

/** Whether `value` is a `maxRemoved`: a whole count from 0, or a share from `'0%'` to `'100%'`. */
export function isMaxRemoved(value: unknown): value is SyncMaxRemoved {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0;
  if (typeof value !== 'string' || value.length > 24) return false;
  return SHARE.test(value) && Number(value.slice(0, -1)) <= 100;
}

/** The most removals of a type `maxRemoved` allows, with `synced` records of it synced. */
function removalLimit(maxRemoved: SyncMaxRemoved | undefined, synced: number): number {
  if (maxRemoved === undefined) return Math.max(DEFAULT_COUNT, Math.floor((synced * DEFAULT_TENTHS) / 10));
  if (typeof maxRemoved === 'number') return maxRemoved;
  // In integers: 0.57 % of 10,000 is 57, where floating point gives 56.99999999999999.
  const [, whole = '0', fraction = ''] = SHARE.exec(maxRemoved) ?? [];
  const scale = 10n ** BigInt(fraction.length);
  return Number((BigInt(whole + fraction) * BigInt(synced)) / (100n * scale));
}

/**
 * Why a type's removals must not be sent, or undefined when they may: its list had records whose
 * key could not be read (it cannot tell which records it no longer holds), or they pass the limit.
 */
export function refusalOf(
  type: SyncType,
  counted: { readonly wouldDeactivate: number; readonly synced: number; readonly unusableKeys: number },
  maxRemoved: SyncMaxRemoved | undefined,
): SyncRefusedRemoval | undefined {
  const { wouldDeactivate, synced, unusableKeys } = counted;
  if (wouldDeactivate === 0) return undefined;
  const limit = removalLimit(maxRemoved, synced);
  if (unusableKeys > 0) return { type, wouldDeactivate, synced, limit, reason: 'incomplete', unusableKeys };
  if (wouldDeactivate > limit) return { type, wouldDeactivate, synced, limit, reason: 'limit', unusableKeys: 0 };
  return undefined;
}

/**
 * What a source read: the keys of one run's list (`has`), or of a generation's slices, asked a
 * page at a time of the journal (`unread`: the keys of a page no slice read).
 */
export type SyncRead =
  | { has(key: string): boolean }
  | { unread(keys: readonly string[]): Promise<ReadonlySet<string>> };

/**
 * Calls `each` with every page of the entries of `type` the journal holds as synced and `seen`
 * does not hold (what a complete list no longer holds), and resolves to how many entries of
 * `type` it holds as synced in all. `each` stops the paging by answering `false`.
 */
export async function eachRemoved(
  journal: SyncJournal,
  tenant: string,
  type: SyncType,
  seen: SyncRead,
  each: (removed: readonly SyncJournalEntry[]) => boolean | Promise<boolean>,
): Promise<number> {
  let synced = 0;
  let after: string | undefined;
  for (;;) {
    const page = await journal.list(tenant, type, after, PAGE);
    if (page.length === 0) return synced;
    after = page[page.length - 1]?.key;
    const candidates = page.filter((entry) => entry.state === 'synced');
    synced += candidates.length;
    const unread =
      'unread' in seen && candidates.length > 0 ? await seen.unread(candidates.map((entry) => entry.key)) : undefined;
    const removed = candidates.filter((entry) =>
      unread ? unread.has(entry.key) : !(seen as { has(key: string): boolean }).has(entry.key),
    );
    if (removed.length > 0 && !(await each(removed))) return synced;
  }
}
