import { CrmError } from '../core/errors';
import type { GenerationRun } from './generation-run';
import type { SyncJournal, SyncJournalEntry, SyncType } from './journal';
import { type Kind, kindOf } from './kinds';
import { drain } from './other-runs';
import { BATCH } from './read';
import type { Run } from './run';
import type { SyncMaxRemoved, SyncRefusedRemoval } from './types';

/*
 * The remove step: what a complete list no longer holds is deactivated (or, for a type the API
 * cannot deactivate, reported), at the list's end or at a generation's. It sits with its guard
 * (STYLE.md 24) because the one must never run without the other: a run measures what it would
 * remove before it removes any of it, and refuses a size no ordinary night produces. An empty or
 * cut export looks to the engine exactly like a tenant that closed every account.
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
async function eachRemoved(
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

/**
 * Accounts and contacts the journal holds but their complete list does not: deactivated, or
 * reported. Measured first, sent after (remove.ts): past the limit, or after a record whose key
 * could not be read, none of the type's removals is sent, and the refusal is reported.
 */
export async function removed(
  run: Run,
  kind: Kind,
  seen: SyncRead,
  unusableKeys = run.unusableKeys.get(kind.type) ?? 0,
  generation = false,
): Promise<void> {
  const { type } = kind;
  const { journal, tenant } = run.settings;
  // This run's creates written first, so that the journal's synced records less them are the
  // ones there before the run, as its plan counted them.
  if (!run.plan) {
    await drain(run);
    await run.committer.flush();
  }
  if (run.stopping()) return;
  let wouldDeactivate = 0;
  const [action, why] = kind.deactivates
    ? (['deactivate', {}] as const)
    : (['skip', { reason: removedReason(kind) }] as const);
  const synced = await eachRemoved(journal, tenant, type, seen, (removed) => {
    wouldDeactivate += removed.length;
    // A plan lists them all, refused or not: its counts say what the list no longer holds.
    for (const entry of removed) run.plan?.add(type, entry.key, action, why);
    return !run.stopping();
  });
  if (run.stopping()) return;
  // A run's own creates are not of the records there before it (its plan counted without them);
  // a generation's were all there before its removal.
  const created = run.plan || generation ? 0 : run.tally.of(type).created;
  const counted = { wouldDeactivate, synced: Math.max(wouldDeactivate, synced - created), unusableKeys };
  const refusal = refusalOf(type, counted, run.options.maxRemoved);
  if (refusal) run.refusedRemovals.push(refusal);
  if (refusal || run.plan || wouldDeactivate === 0) return;
  await eachRemoved(journal, tenant, type, seen, async (removed) => {
    for (const entry of removed) {
      if (run.stopping()) return false;
      if (kind.deactivates) deactivate(run, kind, entry);
      else run.tally.skip(type, entry.key, removedReason(kind), false);
    }
    await run.sender.room(BATCH);
    return true;
  });
}

/**
 * The end of a generation's slice: every outcome written, the slice finished; when that
 * completes the generation (or its removal's claim lapsed), the records the journal holds that
 * no slice read are removed as one run's complete lists remove them, under the same guard, and
 * the removal is marked done once every one is answered and written. A run that stops first
 * gives the claim up: the next run of the generation does the removal.
 */
export async function generationEnd(run: Run, generation: GenerationRun): Promise<void> {
  await drain(run);
  await run.committer.flush();
  if (run.stopping()) return;
  const end = await generation.finish({
    // A removal's claim has the lease of a create's: looked at four times a lease, 1 s at most.
    everyMs: Math.min(1000, (run.settings.journal.claims?.leaseMs ?? 4000) / 4),
    pause: (ms) => run.pause(ms),
    stopping: () => run.stopping(),
  });
  if (!end) return;
  const { claim } = end;
  try {
    for (const { type, unusableKeys } of end.lists) {
      if (run.stopping()) break;
      const unread = { unread: (keys: readonly string[]) => generation.unread(type, keys, claim.fence) };
      await removed(run, kindOf(type), unread, unusableKeys, true);
      await drain(run);
      await run.committer.flush();
    }
  } catch (error) {
    await claim.release().catch(() => {});
    throw error;
  }
  if (run.stopping()) await claim.release().catch(() => {});
  else await claim.done();
}

function deactivate(run: Run, kind: Kind, entry: SyncJournalEntry): void {
  const update = kind.update as NonNullable<Kind['update']>;
  run.sender.push({
    run: async () => {
      try {
        await run.call((options) => update(run.settings.crm, entry.crmId as string, { status: 'inactive' }, options));
        run.committer.put({ ...entry, state: 'deactivated', runId: run.settings.runId });
        run.tally.count(kind.type, 'deactivated');
      } catch (error) {
        if (error instanceof CrmError) run.tally.fail(kind.type, entry.key, error);
        else run.fail(error);
      }
    },
  });
}

/** Why a removed opportunity or activity is only reported. */
const removedReason = ({ noun }: Kind): string => `removed from its list: the API cannot remove an ${noun}`;
