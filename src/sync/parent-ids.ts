import type { SyncType } from './journal';

// The children's references outlive the step that learns them: reading a list marks its keys,
// deciding, sending and settling give each its CRM id (or why there is none), and the children's
// lists, read later, ask for them. One map per parent list, held here for the whole run.

/** A parent the run cannot send its children's references for, and why. */
type Blocked = { readonly blocked: 'failed' | 'in doubt' };
export const FAILED: Blocked = { blocked: 'failed' };
export const IN_DOUBT: Blocked = { blocked: 'in doubt' };

/** A parent a plan would create: its children would go. */
export const PLANNED = '\u0000planned';

export type ParentId = string | Blocked;

/** The keys a list gave: its repeats, and for the removal guard what it still holds. */
export interface Seen {
  has(key: string): boolean;
  add(key: string): void;
  /** The list is done: its outcomes are all known. */
  done(): void;
}

/** The CRM id (or why there is none) of each parent key met: the children's references. */
export class ParentIds {
  readonly #ids = new Map<SyncType, Map<string, ParentId>>();

  /**
   * The keys `type`'s list gives, as it reads them. A parent list's are the keys of its ids, held
   * until the run ends for its children: each key read is there from then on, `FAILED` until its
   * outcome is known (its children's list comes once every outcome is), so that one Map does
   * what a Set beside it did again (21 MB more a million keys, issue 45, 7). The ids that settling
   * records in doubt found before the list are set aside meanwhile, then kept for the keys the
   * list did not give (`done()`).
   */
  keysOf(type: SyncType): Seen {
    if (type === 'activities') {
      const keys = new Set<string>();
      return { has: (key) => keys.has(key), add: (key) => keys.add(key), done: () => {} };
    }
    const before = this.#ids.get(type);
    const ids = new Map<string, ParentId>();
    this.#ids.set(type, ids);
    return {
      has: (key) => ids.has(key),
      add: (key) => ids.set(key, FAILED),
      done: () => {
        if (before) for (const [key, id] of before) if (!ids.has(key)) ids.set(key, id);
      },
    };
  }

  of(type: SyncType): Map<string, ParentId> {
    let ids = this.#ids.get(type);
    if (!ids) {
      ids = new Map();
      this.#ids.set(type, ids);
    }
    return ids;
  }

  remember(type: SyncType, key: string, why: ParentId): void {
    if (type !== 'activities') this.of(type).set(key, why);
  }
}
