// A shared store is a network away and may fail or stall; the pacer must never wait on it for
// long nor fail a call because of it. How the store is asked (a budget for its answer, an outage
// left alone for a while, one warning per outage) is kept apart from what the pacer asks it, so
// that the pacer's logic reads as if the store always answered, and its failing in one place.
import type { CrmLogger } from '../core/log';
import { redactor } from '../internal/report/redaction';

/** How long a shared store may take to answer; after a failure, how long it is left alone. */
let STORE_MS = 100;
const STORE_RETRY_MS = 5000;

/**
 * Sets how long a shared store may take to answer, and returns what it was: for the tests against
 * a real Redis, whose answers a busy machine delays past 100 ms (internal: not exported by the entry).
 */
export function setStoreBudgetMs(ms: number): number {
  const was = STORE_MS;
  STORE_MS = ms;
  return was;
}

/** How a pacer asks its shared store: one per pacer, the outage shared by the pacers of the store. */
export class StoreAsker {
  readonly #key: string;
  readonly #logger: CrmLogger | undefined;
  /** Whether the store is failing, shared by the pacers of one store: one warning per outage. */
  readonly #outage: { down: boolean };
  /** Until when (performance.now()) the shared store is left alone, after it failed. */
  #after = 0;

  constructor(key: string, logger: CrmLogger | undefined, outage: { down: boolean }) {
    this.#key = key;
    this.#logger = logger;
    this.#outage = outage;
  }

  /** Whether the shared store is left alone at `now` (performance.now()), after it failed. */
  leftAlone(now: number): boolean {
    return now < this.#after;
  }

  /**
   * A shared store's answer within STORE_MS, checked by `check`; a failure, a late or a wrong
   * answer leaves the store alone for STORE_RETRY_MS (the key paced in this process meanwhile),
   * with one warning per outage.
   */
  ask<T>(call: () => T | Promise<T>, check: (answer: T) => T): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const late = new Promise<never>((_, reject) => {
      // The budget runs from when the loop is free (setImmediate: a process busy queuing a job's
      // calls has not even written the command yet), and a late timer looks at the sockets once
      // more before it refuses (the answer may be in, unread). Timed from the call, four workers
      // starting 750 calls each on two cores fell back on pacing alone at every other start, and
      // what they sent unshared put the shared pace at half the limit for the rest of the job.
      setImmediate(() => {
        if (settled) return;
        timer = setTimeout(() => setImmediate(() => reject(new Error(`no answer within ${STORE_MS} ms`))), STORE_MS);
      });
    });
    return Promise.race([Promise.resolve().then(call), late])
      .then(check)
      .then(
        (answer) => {
          settled = true;
          clearTimeout(timer);
          this.#outage.down = false;
          return answer;
        },
        (error: unknown) => {
          settled = true;
          clearTimeout(timer);
          this.#after = performance.now() + STORE_RETRY_MS;
          if (!this.#outage.down) warn(this.#logger, error, this.#key);
          this.#outage.down = true;
          throw error;
        },
      );
  }
}

/**
 * The warning of a store that failed, once per outage: to the client's logger (as a log entry
 * with `warning` set), or, without one, to the console, since a degraded job must not go
 * unnoticed. The key is masked wherever the error quotes it.
 */
function warn(logger: CrmLogger | undefined, error: unknown, key: string): void {
  let text: string;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    text = 'an error that could not be read';
  }
  // The reporter's masking: a store may quote the key JSON-escaped, URL-encoded, in base64 or in another case.
  text = redactor([key])(text)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced, so that a log line stays one line.
    .replace(/[\x00-\x1f\x7f]/g, ' ')
    .slice(0, 500);
  const line = `crm warning pace-store-unavailable: ${text}; each key paced in this process alone until the store answers`;
  const entry = {
    warning: 'pace-store-unavailable' as const,
    method: '',
    url: '',
    status: 0,
    error: text,
    durationMs: 0,
    attempt: 0,
    headers: {},
  };
  try {
    if (!logger) console.warn(line);
    else (logger(line, entry) as unknown as Promise<unknown> | undefined)?.then?.(undefined, () => {});
  } catch {}
}
