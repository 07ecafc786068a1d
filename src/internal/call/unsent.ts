// A signal that stops a call only before it is sent: the sync engine's, for creates the API
// cannot make idempotent. Known by a symbol of the global registry, so that the sync entry (a
// bundle of its own) and the main entry's transport agree on it.

const WIRE = Symbol.for('crm-integration-sdk.unsent-signal');

type Marked = AbortSignal & { readonly [WIRE]?: { readonly wire: AbortSignal | undefined } };

/**
 * `signal`, marked to stop a call only while it is not sent (waiting for its key, a
 * `maxConcurrency` slot, its turn at the pace, a retry's wait): an attempt already on the wire
 * goes on to its answer or its own timeout, so that what it did is known rather than left in
 * doubt. `wire` is the signal that still stops an attempt on the wire, if any. Marks the object it
 * is given: pass a signal of your own (`AbortSignal.any([theirs])`), never one shared with others.
 */
export function unsentOnly<S extends AbortSignal>(signal: S, wire?: AbortSignal | undefined): S {
  Object.defineProperty(signal, WIRE, { value: { wire } });
  return signal;
}

/** The signal that stops an attempt already sent: `signal` itself, unless {@link unsentOnly} marked it. */
export function onTheWire(signal: AbortSignal | undefined): AbortSignal | undefined {
  const mark = (signal as Marked | undefined)?.[WIRE];
  return mark ? mark.wire : signal;
}

/** Whether {@link unsentOnly} marked `signal`. */
export const isUnsentOnly = (signal: AbortSignal | undefined): boolean =>
  signal !== undefined && (signal as Marked)[WIRE] !== undefined;
