/**
 * What `CrmSync` remembers of a key's pace between runs when the client paces alone
 * (`throttle: 'auto'`, no store): the rate each credential's pacer learned, read at a run's end
 * and kept in the sync journal, and given back to the pacers at the next run's start (issue 48).
 * The sync entry is a bundle of its own: it reaches a client's pacers through this symbol of the
 * global registry, and names a credential only by a fingerprint it computes (a keyed hash), never
 * by the credential itself.
 */
export const PACE_MEMORY = Symbol.for('crm-integration-sdk.pace-memory');

/** A rate learned, as it is remembered. */
export interface RememberedPace {
  /** Requests a second. */
  readonly rate: number;
  /** The most the pace climbs to without a refusal, before the slower search past it. */
  readonly ceiling: number;
  /** How long the pace keeps to its ceiling before it searches past it (ms). */
  readonly quietMs: number;
  /** The refusals the rate took, from the first run that learned it. */
  readonly refusals: number;
  /** When it was learned (epoch ms). */
  readonly learnedAt: number;
}

/** The fingerprint of a credential: a keyed hash, computed by the sync entry. */
export type Fingerprint = (credential: string) => string;

/** A transport's pacers, as `CrmSync` reads and seeds them. */
export interface PaceMemory {
  /** The rate each credential's pacer has learned (those that have one), by fingerprint. */
  learned(fingerprint: Fingerprint): Map<string, RememberedPace>;
  /**
   * The pacers made from now on start at the rate remembered for their credential's fingerprint:
   * a starting point (the first refusal corrects it, and the climb goes on), never for a pacer
   * that has already paced calls.
   */
  seed(fingerprint: Fingerprint, seeds: ReadonlyMap<string, RememberedPace>): void;
  /** The same, narrowed to one credential's pacer. */
  narrowed(credential: string): PaceMemory;
}

/** A client's pace memory, when it is a client of this SDK that has one. */
export const paceMemoryOf = (client: unknown): PaceMemory | undefined => {
  const method = (client as { [PACE_MEMORY]?: () => PaceMemory } | undefined)?.[PACE_MEMORY];
  return typeof method === 'function' ? method.call(client) : undefined;
};
