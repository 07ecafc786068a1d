/**
 * The four lists of a sync source, spelt as the source names them. A run goes through them in this
 * order, parents first.
 */
export type SyncType = 'accounts' | 'contacts' | 'opportunities' | 'activities';

/**
 * Where `CrmSync` keeps what it knows of each record it synced, so that a re-run, or a run after a
 * crash, never creates a record twice (README.md, "Loading and syncing data"). `sqliteJournal()`
 * keeps one in a file, `memoryJournal()` in this process's memory; another engine (a database
 * shared by a fleet of workers) implements this interface and proves it with the same conformance
 * suite (`test/sync/journal-conformance.ts`).
 *
 * A journal holds one {@link SyncJournalEntry} per (tenant, type, key): `tenant` is the client's
 * tenant id, so one journal may serve many tenants, and no method ever mixes two. A journal holds
 * no credential: nothing it is given is one.
 *
 * The engine relies on three promises:
 * - **Durability.** When `write()` resolves, its change survives a crash of the process or of the
 *   machine (a file engine fsyncs it; a database commits it). The engine writes a create's intent
 *   (state `'sending'`) and waits for that before it sends the request: that is what keeps a crash
 *   from duplicating a record.
 * - **Atomicity.** One `write()` is applied whole or not at all, and a read never sees half of one.
 * - **Exclusivity.** Between `lock()` and the lock's `release()`, no other run (in this process or
 *   another) holds the lock of that tenant, and a lock whose holder died blocks a new run for
 *   about one lease (see {@link SyncJournal.lock}). A journal that offers {@link SyncJournal.claims}
 *   is shared by a fleet instead: its runs take no lock and go at once, each key claimed as it is
 *   created.
 *
 * A method may return its result or a promise of it. A method that cannot do its work throws or
 * rejects, best with a {@link SyncJournalError}; the run then stops (it rejects), having sent no
 * request whose intent was not written.
 *
 * @example
 * ```ts
 * import { CrmSync, type SyncJournal } from 'crm-integration-sdk/sync';
 *
 * const journal: SyncJournal = myPostgresJournal(pool); // your engine, proven by the conformance suite
 * const sync = new CrmSync(crm, { journal });
 * ```
 */
export interface SyncJournal {
  /**
   * Opens the journal, creating it when it does not exist yet, and checks that it can read it.
   * Called before anything else, by every run and plan; a second call does nothing. Rejects with
   * a {@link SyncJournalError} whose `reason` is `'newer-version'` for a journal written by a
   * newer version of its format, `'corrupt'` for one it cannot read, and `'unavailable'` when it
   * cannot be opened at all.
   */
  open(): void | Promise<void>;

  /**
   * Takes the tenant's run lock for the run `runId`. Resolves to the lock, or rejects with a
   * {@link SyncJournalError} whose `reason` is `'locked'` while another live run holds it.
   *
   * The contract every engine keeps (STYLE.md 25; `memoryJournal()` and `sqliteJournal()` keep it
   * with a lease, `postgresJournal()` with a session lock, whose connection proves its holder alive):
   * - **Identity.** A lock names its holder by a token of its own (a random UUID), never by a
   *   process id or a host name: in containers every main process is pid 1, and host names repeat.
   * - **Lease and renewal.** The holder proves it is alive by renewing the lock, every third of its
   *   lease (default 30 s), for as long as it holds it: a renewal moves a version number kept with
   *   the lock.
   * - **Takeover.** A lock not renewed within its lease is taken over, whatever process or host it
   *   names. A contender that finds a lock watches its version on its own monotonic clock (never by
   *   comparing wall-clock stamps, which other hosts, and clock steps, make meaningless): a version
   *   that moves is a live holder, and `lock()` rejects `'locked'` as soon as it sees it move; one
   *   that stands still for a whole lease is taken over with a compare-and-swap on that version, so
   *   that two contenders never both take it. A dead holder thus blocks a new run for one lease,
   *   and the watch makes `lock()` wait up to that long; `options.signal` ends the wait (rejecting
   *   with its reason). The lock taken says what it took over ({@link SyncJournalLock.takenOver}).
   * - **Losing it.** A holder that finds its lock taken over (it stalled past its lease), or cannot
   *   renew it within its lease, stops renewing and aborts {@link SyncJournalLock.signal}; the
   *   journal refuses that run's later writes (`'locked'`), so the run stops having written nothing
   *   over the new holder's.
   */
  lock(tenant: string, runId: string, options?: SyncJournalLockOptions): SyncJournalLock | Promise<SyncJournalLock>;

  /**
   * The entries of `keys` (at most 1,000, all of one type), by key; a key the journal does not
   * hold is absent from the map.
   */
  get(
    tenant: string,
    type: SyncType,
    keys: readonly string[],
  ): ReadonlyMap<string, SyncJournalEntry> | Promise<ReadonlyMap<string, SyncJournalEntry>>;

  /**
   * One page of the tenant's entries of one type, in the engine's own ascending key order (a
   * database's collation is fine): the first `limit` (1 to 1,000) whose key comes after `after`
   * in that order, or from the first when `after` is undefined. Paging on from each page's last
   * key gives every entry once; an empty page is the end. The engine uses it to find what the
   * source no longer holds.
   */
  list(
    tenant: string,
    type: SyncType,
    after: string | undefined,
    limit: number,
  ): readonly SyncJournalEntry[] | Promise<readonly SyncJournalEntry[]>;

  /**
   * The tenant's entries whose state is `'sending'` or `'inDoubt'`, of every type: the records a
   * run must settle before it creates anything.
   */
  pending(tenant: string): readonly SyncJournalEntry[] | Promise<readonly SyncJournalEntry[]>;

  /**
   * Applies one change, atomically and durably (see above), and resolves once it is durable:
   * each entry of `put` replaces the entry of its (type, key), or is added; each of `remove` is
   * deleted, when present. A key appears at most once in one change.
   */
  write(tenant: string, change: SyncJournalChange): void | Promise<void>;

  /** Closes the journal; the journal is not used again after. */
  close(): void | Promise<void>;

  /**
   * Optional, for tools that show a journal (`crm sync status`): the tenants it holds entries or
   * runs of, in ascending order. The engine never calls it.
   */
  tenants?(): readonly string[] | Promise<readonly string[]>;

  /**
   * Optional: keeps a run in the tenant's history, replacing the record of the same `runId`.
   * `CrmSync.run()` calls it when a run starts (once it may go), as it goes (its progress, every
   * third of a lease, 10 s at most) and when it ends, so that a run killed on the way stays in the
   * history with its last progress and no end. A journal without it keeps no history. A journal
   * keeps at least the tenant's last 1,000 runs (by start), and may forget
   * older ones when a run ends (the SDK's journals do).
   */
  addRun?(tenant: string, run: SyncJournalRun): void | Promise<void>;

  /**
   * Optional, with {@link SyncJournal.addRun}: the tenant's last `limit` (1 to 1,000) runs, the
   * latest started first (`CrmSync.history()`, `crm sync status`).
   */
  runs?(tenant: string, limit: number): readonly SyncJournalRun[] | Promise<readonly SyncJournalRun[]>;

  /**
   * Optional, for tools that show a shared journal (`crm sync status`): the tenant's entries
   * that a live claim holds (creates other workers have in flight, which {@link SyncJournal.pending}
   * leaves out), each with the run that holds it. The engine never calls it.
   */
  inFlight?(tenant: string): readonly SyncJournalInFlight[] | Promise<readonly SyncJournalInFlight[]>;

  /**
   * Optional, for tools that show a journal (`crm sync status`): the tenant's run lock as the
   * journal holds it, or undefined when none is held. The engine never calls it.
   */
  lockHolder?(tenant: string): SyncJournalLockHolder | undefined | Promise<SyncJournalLockHolder | undefined>;

  /**
   * Optional: the paces remembered for the tenant (see {@link SyncJournalPace}), one per (key
   * fingerprint, base URL). `CrmSync.run()` reads them at its start when its client paces alone
   * (`throttle: 'auto'`, no store), so that the run starts at the rate the last one learned. A
   * journal without it (and {@link SyncJournal.keepPace}) remembers no pace: each run starts cold.
   */
  paces?(tenant: string): readonly SyncJournalPace[] | Promise<readonly SyncJournalPace[]>;

  /**
   * Optional, with {@link SyncJournal.paces}: keeps `pace`, replacing the tenant's record of the
   * same `key` and `baseUrl`. `CrmSync.run()` calls it when a run ends, for the key it paced.
   */
  keepPace?(tenant: string, pace: SyncJournalPace): void | Promise<void>;

  /**
   * Present on a journal that a fleet of processes shares (`postgresJournal()`): per-key claims,
   * so that any number of runs of one tenant go at once, on overlapping slices of its source,
   * and never create a record twice. With it, `CrmSync` takes no run lock, writes each create's
   * intent through {@link SyncJournalClaims.claim} and its outcome through
   * {@link SyncJournalClaims.commit}, and waits for the keys other runs are creating. A journal
   * of one process (memory, SQLite) leaves it out, and its runs of one tenant are exclusive.
   */
  readonly claims?: SyncJournalClaims | undefined;

  /**
   * Present on a shared journal that keeps generations (`postgresJournal()`): the slices of a
   * fleet's pass over a tenant's source, the keys each read, and the claim to remove, once
   * complete, what none read (`SyncRunOptions.generation`). Without it, a run given a
   * generation is refused.
   */
  readonly generations?: SyncJournalGenerations | undefined;
}

/**
 * A pace remembered between runs (see {@link SyncJournal.paces}): the rate `throttle: 'auto'`
 * learned for a tenant's key against a base URL. It holds no credential: the key is named by a
 * fingerprint (a keyed SHA-256 of it, cut to 32 hex digits), from which the key is not found again;
 * a rotated key has another, and starts cold.
 */
export interface SyncJournalPace {
  /** The fingerprint of the API key the rate was learned with: 32 hex digits. */
  readonly key: string;
  /** The base URL the rate was learned against, without a trailing slash. */
  readonly baseUrl: string;
  /** The rate, in requests a second. */
  readonly rate: number;
  /** The most the pace climbed to without a refusal. */
  readonly ceiling: number;
  /** How long (ms) the pace keeps to its ceiling before it searches past it. */
  readonly quietMs: number;
  /** How many refusals the rate took, from the first run that learned it. */
  readonly refusals: number;
  /** When it was learned (epoch milliseconds). */
  readonly learnedAt: number;
  /** When a run last used it (epoch milliseconds): it is forgotten `rememberPaceMs` after. */
  readonly usedAt: number;
}

/** How many runs of a tenant the SDK's journals keep (see {@link SyncJournal.addRun}): older ones are forgotten when a run ends. */
export const SYNC_HISTORY_KEPT = 1000;

/** A run in a journal's history (see {@link SyncJournal.addRun}). */
export interface SyncJournalRun {
  /** The run's id, as its report gives it. */
  readonly runId: string;
  /** When it started (epoch milliseconds, its host's clock). */
  readonly startedAt: number;
  /** When it ended (epoch milliseconds), or undefined while it runs, or when it never ended (its process was killed). */
  readonly finishedAt: number | undefined;
  /**
   * When this record was written (epoch milliseconds, its host's clock): a run that has not ended
   * and whose record is older than a lease is one whose process stopped.
   */
  readonly recordedAt: number;
  /** What the engine keeps of the run, as JSON (counts, progress, failures): stored as given, never read. */
  readonly summary: string;
  /**
   * Optional, from `runs()` of a journal with a clock of its own (a database's): how long ago
   * the record was written, by that clock. A reader then judges whether a run of another host is
   * alive without comparing the two hosts' wall clocks; without it, by `recordedAt`.
   */
  readonly ageMs?: number | undefined;
}

/** An entry a live claim holds (see {@link SyncJournal.inFlight}). */
export interface SyncJournalInFlight {
  /** The entry, state `'sending'` while its create is in flight. */
  readonly entry: SyncJournalEntry;
  /** The run whose claim holds it. */
  readonly runId: string;
  /** When the claim lapses unless renewed (epoch milliseconds, the journal's clock). */
  readonly expiresAt: number;
}

/**
 * Per-key claims of a shared journal (see {@link SyncJournal.claims}). A claim says which run
 * creates a key. It is a row inserted in the same transaction that writes the create's intent
 * (state `'sending'`), so that two runs cannot both hold one; or, on a journal with
 * {@link SyncJournalClaims.intend}, a row that only reserves the key, the intent written under
 * its fence once the request has its turn. It has:
 * - a **lease**: it holds for `leaseMs` unless renewed; the journal renews the claims of a live
 *   process itself, so a lease ends only when its process died, stalled or lost the database;
 * - a **fencing number**, higher for each new claim of a key: the outcome of a create is
 *   committed only while the claim still holds that number, so a process that wakes up after
 *   another took its key over cannot commit its late answer over the new owner's.
 *
 * A key whose claim expired while its entry was `'sending'` is taken over by the next run that
 * claims it: the entry becomes `'inDoubt'` (its create may have been sent), and is settled as a
 * record in doubt, never sent blindly. `pending()` leaves out the entries under a live claim:
 * another process is creating them.
 */
export interface SyncJournalClaims {
  /** How long a claim holds without renewal, in milliseconds. */
  readonly leaseMs: number;

  /**
   * Claims each request's key for the run `runId` and writes its intent, in one durable
   * transaction, and answers one {@link SyncJournalClaim} per request, in order. A key is
   * claimed when no live claim of another run holds it and the journal holds no entry for it, or
   * only an entry in doubt that the request says it has looked for (`resend`).
   */
  claim(
    tenant: string,
    runId: string,
    requests: readonly SyncJournalClaimRequest[],
  ): Promise<readonly SyncJournalClaim[]>;

  /**
   * Applies `change` (the outcome of one claimed create: its entry put, or removed) and releases
   * the claim, atomically, only while the claim of `change`'s key still holds `fence`. Resolves
   * to `false`, having changed nothing, when another run took the key over.
   */
  commit(tenant: string, change: SyncJournalChange, fence: number): Promise<boolean>;

  /**
   * The keys of `keys` (of one type) that a live claim of another run holds, each with the time
   * (epoch milliseconds, the journal's clock) its lease ends unless renewed.
   */
  held(tenant: string, runId: string, type: SyncType, keys: readonly string[]): Promise<ReadonlyMap<string, number>>;

  /**
   * Optional: with it, a request claimed with `reserve` only reserves its key (the claim's row,
   * its lease and fence; no entry written), and its intent is written here once its request has
   * its turn, just before it leaves: a worker killed while its creates wait for their turn leaves
   * their keys free once its lease lapses, not in doubt. Writes each intent (state `'sending'`) only
   * while its claim still holds `fence`, keeping the claim, in one durable transaction; a
   * `withdrawn` intent has its entry removed instead (its request was answered with nothing done
   * and waits for a retry). Answers, in order, whether each claim held.
   */
  intend?(tenant: string, intents: readonly SyncJournalFencedIntent[]): Promise<readonly boolean[]>;

  /**
   * Optional, with {@link SyncJournalClaims.intend}: gives up the claims of `fences` whose intents
   * were never written (their requests never left), leaving their keys' entries as they are. At
   * its end, a run gives up every claim it holds still (a run its journal stopped leaves some
   * uncommitted): an entry left `'sending'` is then taken over in doubt, as when its lease lapses.
   * The claims given up are no longer renewed, whether or not this resolves.
   */
  release?(tenant: string, fences: readonly number[]): Promise<void>;
}

/** An intent written under its claim's fence (see {@link SyncJournalClaims.intend}). */
export interface SyncJournalFencedIntent {
  /** The intent, state `'sending'`. */
  readonly intent: SyncJournalEntry;
  /** The fence its claim was given. */
  readonly fence: number;
  /** Its entry is removed rather than written: the request waits, with nothing done, for a retry. */
  readonly withdrawn?: boolean | undefined;
}

/** A create's intent to claim (see {@link SyncJournalClaims.claim}). */
export interface SyncJournalClaimRequest {
  /** The intent, state `'sending'`. */
  readonly intent: SyncJournalEntry;
  /** The key's entry is in doubt and was looked for, not found: it may be created again. */
  readonly resend: boolean;
  /**
   * Reserve the key only: its claim is written, its intent is not (written later by
   * {@link SyncJournalClaims.intend}). Only for a journal that has `intend`.
   */
  readonly reserve?: boolean | undefined;
}

/**
 * What {@link SyncJournalClaims.claim} did with one request:
 * - `'claimed'`: the intent is written and the key is this run's to create, under `fence`;
 * - `'held'`: another run's live claim holds the key until `expiresAt` (epoch milliseconds), or
 *   another run is claiming it at this moment (its claim, once written, would hold until then);
 * - `'exists'`: the journal holds `entry` for the key (created by another run, or in doubt; a
 *   claim that had expired over a `'sending'` entry was taken over and the entry is now
 *   `'inDoubt'`).
 */
export type SyncJournalClaim =
  | { readonly outcome: 'claimed'; readonly fence: number }
  | { readonly outcome: 'held'; readonly expiresAt: number }
  | { readonly outcome: 'exists'; readonly entry: SyncJournalEntry };

/** Options of {@link SyncJournal.lock}. */
export interface SyncJournalLockOptions {
  /** Ends the wait for a lock held by another run (its watch): `lock()` rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

/** The tenant's run lock, held by one run at a time (see {@link SyncJournal.lock}). */
export interface SyncJournalLock {
  /** Releases the lock. Called once, at the end of the run, whether it succeeded or not. */
  release(): void | Promise<void>;
  /**
   * Aborted, with a {@link SyncJournalError} (`'locked'`) as its reason, once the lock is lost: it
   * was taken over, or could not be renewed within its lease. The run then stops. Optional: an
   * engine whose locks cannot be lost leaves it out.
   */
  readonly signal?: AbortSignal | undefined;
  /** Set when this lock was taken over from a run that had stopped renewing it (its process died or stalled). */
  readonly takenOver?: SyncJournalTakeover | undefined;
}

/** A lock taken over from a run that no longer renewed it (see {@link SyncJournalLock.takenOver}). */
export interface SyncJournalTakeover {
  /** The run that held it. */
  readonly runId: string;
  /** When that run took it (epoch milliseconds, by its host's clock: shown, never compared). */
  readonly takenAt: number | undefined;
}

/** A tenant's run lock as a journal holds it (see {@link SyncJournal.lockHolder}). */
export interface SyncJournalLockHolder {
  /** The run that holds it. */
  readonly runId: string;
  /** When it was taken (epoch milliseconds, by the holder's clock). */
  readonly takenAt: number;
  /**
   * When it was last renewed (epoch milliseconds, by the holder's clock), or undefined for an
   * engine whose locks are not renewed by a write (a session lock).
   */
  readonly renewedAt: number | undefined;
  /** Its lease: the lock is taken over once it goes unrenewed that long, in milliseconds. */
  readonly leaseMs: number | undefined;
}

/** One atomic change of a journal: entries to put (add or replace) and keys to remove. */
export interface SyncJournalChange {
  /** Entries to add, or to replace the entry of the same type and key. */
  readonly put?: readonly SyncJournalEntry[] | undefined;
  /** Entries to delete, by type and key; a key the journal does not hold is ignored. */
  readonly remove?: readonly SyncJournalKey[] | undefined;
}

/** A record's identity in a journal, within a tenant. */
export interface SyncJournalKey {
  /** The source list the record came from. */
  readonly type: SyncType;
  /** The record's key in the source (its id in the user's system). */
  readonly key: string;
}

/**
 * Where a record stands:
 * - `'sending'`: its create is about to be sent, or was, and no answer has been written. A run
 *   that finds one (its process crashed) treats the record as in doubt.
 * - `'inDoubt'`: its create was answered by a failure that may have acted (`sideEffects:
 *   'unknown'`); it is never sent blindly again.
 * - `'synced'`: the CRM holds it as `crmId`, with `data` as last synced.
 * - `'deactivated'`: as `'synced'`, and the sync set its status to inactive when the source no
 *   longer held it.
 */
export type SyncJournalState = 'sending' | 'inDoubt' | 'synced' | 'deactivated';

/**
 * What a journal holds of one record. A journal stores each field as it is given and gives it
 * back unchanged: it never reads `data` or `hash`.
 */
export interface SyncJournalEntry extends SyncJournalKey {
  /** Where the record stands. */
  readonly state: SyncJournalState;
  /** The record's id in the CRM: set when `state` is `'synced'` or `'deactivated'`, else undefined. */
  readonly crmId: string | undefined;
  /**
   * A hash of the record's canonical data (references resolved, keys sorted, dates as ISO
   * strings), as last synced, or as sent while `'sending'` or `'inDoubt'`. Equal hashes mean an
   * unchanged record.
   */
  readonly hash: string;
  /**
   * The canonical data that `hash` was computed from, as JSON: the fields the engine compares to
   * send only those that changed, and matches to find a record in doubt.
   */
  readonly data: string;
  /**
   * When the record's create was first attempted (epoch milliseconds): an activity the source
   * gives no `activityDate` is sent with this one, so that it can be found again. Undefined when
   * the engine sent none of its own.
   */
  readonly attemptedAt: number | undefined;
  /** The request id of the answer that left the record in doubt, when it carried one. */
  readonly requestId: string | undefined;
  /** The run that last wrote this entry. */
  readonly runId: string;
}

/** Why a journal refused to work (see {@link SyncJournal.open} and {@link SyncJournal.lock}). */
export type SyncJournalErrorReason = 'newer-version' | 'corrupt' | 'unavailable' | 'locked';

// Generations (README.md, "Syncing with many workers"): what a shared journal keeps so that the
// slices of a fleet's pass over a tenant's source remove, once complete, what no slice read.

/**
 * Where a generation stands in a journal:
 * - `'open'`: slices are missing;
 * - `'removing'`: every slice finished, and a run holds (or held, until its lease lapsed) the
 *   claim to remove what no slice read;
 * - `'done'`: complete, its removal done or refused (or none, when its last slice kept removals);
 * - `'superseded'`: a newer generation of the tenant started before it completed;
 * - `'expired'`: it did not complete within the journal's age limit.
 */
export type SyncJournalGenerationState = 'open' | 'removing' | 'done' | 'superseded' | 'expired';

/** A list a slice read to its end, with how many of its records had a key that could not be read. */
export interface SyncJournalSliceList {
  /** The list. */
  readonly type: SyncType;
  /** Its records whose key could not be read: the generation cannot tell what its source no longer holds. */
  readonly unusableKeys: number;
}

/** The claim to do a complete generation's removal (see {@link SyncJournalGenerations.finish}). */
export interface SyncJournalRemovalClaim {
  /** Its fencing number: a claim taken over after its lease lapsed has a higher one. */
  readonly fence: number;
  /** Marks the removal done (sent or refused) and ends the claim; false when it was taken over meanwhile. */
  done(): Promise<boolean>;
  /** Ends the claim without marking it done (the run stopped): the next run of the generation claims it at once. */
  release(): Promise<void>;
}

/** What {@link SyncJournalGenerations.finish} found once the slice was recorded. */
export type SyncJournalGenerationEnd =
  /** Slices are missing: nothing is removed yet. */
  | { readonly outcome: 'open'; readonly missing: readonly number[] }
  /** This run holds the removal: the lists every slice read to their end, and their unusable keys summed. */
  | {
      readonly outcome: 'remove';
      readonly lists: readonly SyncJournalSliceList[];
      readonly claim: SyncJournalRemovalClaim;
    }
  /** Nothing for this run to remove: the generation is done, superseded, expired, or another run holds its removal. */
  | { readonly outcome: 'closed'; readonly state: Exclude<SyncJournalGenerationState, 'open'> };

/** An open generation, as `crm sync status` shows it (see {@link SyncJournalGenerations.open}). */
export interface SyncJournalGenerationStatus {
  /** Its id. */
  readonly id: string;
  /** How many slices it has. */
  readonly slices: number;
  /** `'open'` (slices missing) or `'removing'` (complete, its removal not done yet). */
  readonly state: 'open' | 'removing';
  /** When its first slice joined it (epoch milliseconds, the journal's clock). */
  readonly startedAt: number;
  /** The slices that have not finished, ascending. */
  readonly missing: readonly number[];
}

/**
 * Generations in a shared journal (see {@link SyncJournal.generations}): a named, complete pass
 * over a tenant's source made of many slices, each run by any worker. The journal records the keys
 * each slice reads and the slices that finish; the run that finishes the last slice (or, when that
 * run stopped, the next run of the generation once its claim lapsed) claims the removal, once.
 */
export interface SyncJournalGenerations {
  /** How long a generation may stay open, in milliseconds: older, it expires and removes nothing. */
  readonly maxAgeMs: number;

  /**
   * Joins the generation `id` of `slices` slices, starting it when the tenant has none of that id
   * (and superseding the tenant's older open ones). Resolves to its state and its slice count as
   * the journal holds them: a count other than `slices` means the id was used with another one.
   */
  join(
    tenant: string,
    id: string,
    slices: number,
  ): Promise<{ readonly state: SyncJournalGenerationState; readonly slices: number }>;

  /** Records that a slice of the open generation `id` read `keys` of `type` (one call per batch). */
  read(tenant: string, id: string, type: SyncType, keys: readonly string[]): Promise<void>;

  /**
   * The keys of `keys` (of `type`, at most 1,000) that no slice of `id` read, while the removal
   * claim `fence` holds: none once it was taken over or the generation is no longer removing.
   */
  unread(
    tenant: string,
    id: string,
    type: SyncType,
    keys: readonly string[],
    fence: number,
  ): Promise<ReadonlySet<string>>;

  /**
   * Records that `slice` of `id` finished with `lists` read to their end (a slice finished twice
   * counts once), and, when that completes the generation, or it is complete and its removal's
   * claim lapsed, claims its removal for `runId` when `remove` (else a complete generation is done).
   */
  finish(
    tenant: string,
    runId: string,
    ended: {
      readonly id: string;
      readonly slice: number;
      readonly remove: boolean;
      readonly lists: readonly SyncJournalSliceList[];
    },
  ): Promise<SyncJournalGenerationEnd>;

  /** The tenant's open generations (open, or complete with their removal not done), latest first. */
  open(tenant: string): Promise<readonly SyncJournalGenerationStatus[]>;
}
