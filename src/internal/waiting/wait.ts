import { AttemptFailure, type Waited } from '../call/failure';
import type { Place, Queue } from './queue';

/** A wait under way: `done()` ends it with a value, unless it already ended. */
export interface Waiting<T> {
  readonly promise: Promise<T>;
  done(value: T): void;
  /** Ends it with a failure, unless it already ended. */
  fail(failure: unknown): void;
}

interface Entry {
  readonly leave: (failure: unknown) => void;
}

/**
 * The one way a call waits, whatever for (a `maxConcurrency` slot, its turn at its key's pace, its
 * key, a retry's backoff): until it is handed what it waits for, its signal aborts, or its
 * deadline passes. A signal carries one listener per `Waits`, however many calls wait on it, so
 * that no wait adds or removes a listener of its own: with 100,000 calls on one signal, each
 * removal would scan all the others.
 */
export class Waits {
  readonly #waiting: Waited;
  readonly #bySignal = new Map<AbortSignal, { readonly entries: Set<Entry>; readonly abort: () => void }>();

  /** `waiting`: what a call here waits for, as a failure names it. */
  constructor(waiting: Waited) {
    this.#waiting = waiting;
  }

  /**
   * Starts a wait. When the signal aborts or the deadline (epoch ms) passes first, the promise
   * rejects with an `AttemptFailure` of kind `queued` and `left()` runs (to leave a queue).
   */
  start<T>(signal: AbortSignal | undefined, deadline: number | undefined, left?: () => void): Waiting<T> {
    let resolve!: (value: T) => void;
    let reject!: (failure: unknown) => void;
    const promise = new Promise<T>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    let open = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const entry: Entry = {
      leave: (failure) => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        left?.();
        reject(failure);
      },
    };
    if (signal?.aborted) {
      entry.leave(this.#failure());
      return { promise, done: () => {}, fail: () => {} };
    }
    if (signal) this.#watch(signal, entry);
    if (deadline !== undefined) {
      timer = setTimeout(
        () => {
          if (signal) this.#unwatch(signal, entry);
          entry.leave(this.#failure());
        },
        Math.max(0, deadline - Date.now()),
      );
    }
    return {
      promise,
      done: (value) => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        if (signal) this.#unwatch(signal, entry);
        resolve(value);
      },
      fail: (failure) => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        if (signal) this.#unwatch(signal, entry);
        reject(failure);
      },
    };
  }

  /**
   * Starts a wait with a place in `queue` (at its front when `front`: a retry before first
   * attempts), for whoever serves the queue to end with `done()`. A wait that leaves otherwise
   * (abort, deadline) leaves the queue at once; `emptied` runs when it was the last one in it.
   */
  inQueue<T>(
    queue: Queue<Waiting<T>>,
    signal: AbortSignal | undefined,
    deadline: number | undefined,
    front?: boolean,
    emptied?: () => void,
  ): Promise<T> {
    let place: Place<Waiting<T>> | undefined;
    const waiting = this.start<T>(signal, deadline, () => {
      if (!place) return;
      queue.remove(place);
      if (queue.size === 0) emptied?.();
    });
    if (!signal?.aborted) place = queue.add(waiting, front);
    return waiting.promise;
  }

  /** Built when a wait fails, not before: an error captures a stack, which costs. */
  #failure(): AttemptFailure {
    return new AttemptFailure({ kind: 'queued', waiting: this.#waiting });
  }

  #watch(signal: AbortSignal, entry: Entry): void {
    let watched = this.#bySignal.get(signal);
    if (!watched) {
      const entries = new Set<Entry>();
      const abort = () => {
        this.#bySignal.delete(signal);
        const failure = this.#failure();
        for (const each of entries) each.leave(failure);
      };
      watched = { entries, abort };
      this.#bySignal.set(signal, watched);
      signal.addEventListener('abort', abort, { once: true });
    }
    watched.entries.add(entry);
  }

  #unwatch(signal: AbortSignal, entry: Entry): void {
    const watched = this.#bySignal.get(signal);
    if (!watched) return;
    watched.entries.delete(entry);
    // The last wait on this signal is over: its listener goes, as the signal may outlive the calls.
    if (watched.entries.size === 0) {
      this.#bySignal.delete(signal);
      signal.removeEventListener('abort', watched.abort);
    }
  }
}
