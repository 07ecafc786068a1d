import type { Waited } from '../call/failure';
import { Queue } from './queue';
import { type Waiting, Waits } from './wait';

/**
 * At most `max` holders at once; the others wait in order, and one whose signal aborts or whose
 * deadline passes leaves the queue at once. No timers: an idle limiter holds nothing.
 */
export class Limiter {
  readonly #max: number;
  #free: number;
  readonly #queue = new Queue<Waiting<void>>();
  readonly #waits: Waits;

  /** `waiting`: what a call waits for here, as a timeout names it. */
  constructor(max: number, waiting: Waited) {
    this.#max = max;
    this.#free = max;
    this.#waits = new Waits(waiting);
  }

  /** Resolves when the caller holds a place; it must `release()` it once done. */
  acquire(signal: AbortSignal | undefined, deadline: number | undefined): Promise<void> | undefined {
    if (this.#free > 0 && this.#queue.size === 0 && !signal?.aborted) {
      this.#free -= 1;
      return undefined;
    }
    return this.#waits.inQueue(this.#queue, signal, deadline);
  }

  /** No place held and no one waiting: a limiter kept per key can be dropped. */
  get idle(): boolean {
    return this.#free === this.#max && this.#queue.size === 0;
  }

  /** Gives the place back: straight to the next waiter, so that no newcomer slips in between. */
  release(): void {
    const next = this.#queue.shift();
    if (next) next.done();
    else this.#free += 1;
  }
}
