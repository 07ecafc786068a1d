/*
 * What the waiting tests share: fetches of their own (no network), and a look at calls that are
 * still pending. The tests on real sockets use a node:http server of their own.
 */

export const OPPORTUNITY_BODY = JSON.stringify({ success: true, data: { id: 'opp_1' } });

/** A 200 with the envelope of `opportunities.get('opp_1')`. */
export const okOpportunity = (): Response =>
  new Response(OPPORTUNITY_BODY, { status: 200, headers: { 'content-type': 'application/json' } });

/** A 429 that asks for `retryAfter` seconds. */
export const refused = (retryAfter: number): Response =>
  new Response(JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'slow down' } }), {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': String(retryAfter) },
  });

/** A fetch's answer that never comes: it rejects with the reason when its signal aborts, as fetch does. */
export const hang = (init: RequestInit | undefined): Promise<Response> =>
  new Promise((_, reject) => {
    const signal = init?.signal;
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/** Whether each promise has settled yet, read at any time. */
export function settledFlags(promises: readonly Promise<unknown>[]): () => boolean[] {
  const flags = promises.map(() => false);
  promises.forEach((promise, i) => {
    const mark = () => {
      flags[i] = true;
    };
    promise.then(mark, mark);
  });
  return () => [...flags];
}

/** The next turn of the event loop, after every pending microtask. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
