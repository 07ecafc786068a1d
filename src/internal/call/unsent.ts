// A signal that stops a call only before it is sent: the sync engine's, for creates the API
// cannot make idempotent. Known by a symbol of the global registry, so that the sync entry (a
// bundle of its own) and the main entry's transport agree on it. It may carry the call's send
// gate: what must be done (a create's intent written) once the call has its turn, before it goes.

const WIRE = Symbol.for('crm-integration-sdk.unsent-signal');

/**
 * What a call must do before it is sent (write a create's intent), and undo while it waits to be
 * sent again. The transport awaits `pass()` once an attempt has its turn (its key looked up, its
 * turn at the pace, a `maxConcurrency` slot), just before it is handed to fetch: for the first
 * attempt, and for a retry only after `withdraw()`. If `pass()` rejects, nothing is sent and the
 * call fails with that reason. `withdraw()` is called when every attempt so far was answered
 * with nothing done (a 429, say) and the call is to wait for a retry: what `pass()` did need not
 * stand while nothing is on its way.
 */
export interface SendGate {
  pass(): Promise<void>;
  withdraw(): void;
}

interface Mark {
  readonly wire: AbortSignal | undefined;
  readonly gate: SendGate | undefined;
}

type Marked = AbortSignal & { readonly [WIRE]?: Mark };

/**
 * `signal`, marked to stop a call only while it is not sent (waiting for its key, a
 * `maxConcurrency` slot, its turn at the pace, a retry's wait): an attempt already on the wire
 * goes on to its answer or its own timeout, so that what it did is known rather than left in
 * doubt. `wire` is the signal that still stops an attempt on the wire, if any; `gate`, the call's
 * {@link SendGate}. Marks the object it is given: pass a signal of your own
 * (`AbortSignal.any([theirs])`), never one shared with others.
 */
export function unsentOnly<S extends AbortSignal>(signal: S, wire?: AbortSignal | undefined, gate?: SendGate): S {
  Object.defineProperty(signal, WIRE, { value: { wire, gate } satisfies Mark });
  return signal;
}

/** The signal that stops an attempt already sent: `signal` itself, unless {@link unsentOnly} marked it. */
export function onTheWire(signal: AbortSignal | undefined): AbortSignal | undefined {
  const mark = (signal as Marked | undefined)?.[WIRE];
  return mark ? mark.wire : signal;
}

/** The {@link SendGate} {@link unsentOnly} gave `signal`, if any. */
export const gateOf = (signal: AbortSignal | undefined): SendGate | undefined =>
  (signal as Marked | undefined)?.[WIRE]?.gate;

/** Whether {@link unsentOnly} marked `signal`. */
export const isUnsentOnly = (signal: AbortSignal | undefined): boolean =>
  signal !== undefined && (signal as Marked)[WIRE] !== undefined;

const GATES = Symbol.for('crm-integration-sdk.send-gates');

/**
 * Marks `target` (CrmClient's prototype) as a client whose transport passes send gates. A client
 * without the mark (another version of the SDK, a stand-in of the caller's) would send a gated
 * call without passing its gate, so the sync writes what a gate would before such a call starts.
 */
export function passesGates(target: object): void {
  Object.defineProperty(target, GATES, { value: true });
}

/** Whether `client`'s transport passes send gates ({@link passesGates}). */
export const knowsGates = (client: unknown): boolean =>
  typeof client === 'object' && client !== null && (client as { [GATES]?: unknown })[GATES] === true;
