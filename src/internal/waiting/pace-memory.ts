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

/** A pacer of this process, as `CrmSync` reads and seeds it. */
export interface RememberingPacer {
  /**
   * Starts at a rate remembered from an earlier run: a starting point (the first refusal corrects
   * it, and the climb goes on); nothing is done once the pacer has paced a call.
   */
  seed(remembered: RememberedPace): void;
  /** What the pacer knows of its key's rate; undefined until it knows one. */
  remembered(): RememberedPace | undefined;
}

/**
 * A transport's pacers, as `CrmSync` reads and seeds them. The sync keeps what it remembers and
 * names credentials by their fingerprints (a keyed hash of its own): the main entry carries only
 * these two members, not the bookkeeping of runs it does not make.
 */
export interface PaceMemory {
  /** The pacers made so far, by credential (its key, or its token). */
  readonly made: ReadonlyMap<string, RememberingPacer>;
  /** Given each pacer as it is made, before its first turn: where the sync seeds it. */
  onMade: ((credential: string, pacer: RememberingPacer) => void) | undefined;
}

/** A client's pacers, as its `[PACE_MEMORY]()` gives them. */
export interface ClientPacers {
  readonly memory: PaceMemory;
  readonly only: string | undefined;
}

/**
 * A client's pacers, when it is a client of this SDK: those of its transport, and its own key
 * (`only`), whose pacer alone is the tenant's where derived clients share the transport. Another
 * shape under the symbol (a client of another version, a stand-in) gives none: its run starts cold.
 */
export function paceMemoryOf(client: unknown): ClientPacers | undefined {
  try {
    const method = (client as { [PACE_MEMORY]?: () => unknown } | undefined)?.[PACE_MEMORY];
    const pacers =
      typeof method === 'function' ? (method.call(client) as Partial<ClientPacers> | undefined) : undefined;
    const { memory, only } = pacers ?? {};
    return memory?.made instanceof Map && (only === undefined || typeof only === 'string')
      ? { memory, only }
      : undefined;
  } catch {
    return undefined;
  }
}
