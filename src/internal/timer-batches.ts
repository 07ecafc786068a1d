/** Calls that started together with the same timeout, under one timer. */
export interface TimeoutBatch {
  readonly ms: number;
  readonly controllers: AbortController[];
  /** Calls of the batch not yet over. */
  pending: number;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * Aborts each call's controller when its attempt timeout passes, with one timer for all the calls
 * that start in the same turn of the event loop (PERFORMANCE.md, "Attempt timers in batches").
 * A batch's timer is cleared when its last call is over, so idle clients hold none.
 */
export class TimerBatches {
  #open: TimeoutBatch | undefined;
  readonly #close = (): void => {
    this.#open = undefined;
  };

  /** Aborts `controller` after `ms`, unless `end()` is called for it first. */
  start(controller: AbortController, ms: number): TimeoutBatch {
    const open = this.#open;
    if (open?.ms === ms) {
      open.controllers.push(controller);
      open.pending += 1;
      return open;
    }
    const controllers = [controller];
    // Calls of the batch that are over are aborted too, which does nothing to them.
    const timer = setTimeout(() => {
      for (const each of controllers) each.abort();
    }, ms);
    // Joinable for the rest of this turn only: a call in a later turn has a later deadline.
    if (!open) queueMicrotask(this.#close);
    this.#open = { ms, controllers, pending: 1, timer };
    return this.#open;
  }

  /** Stops the timeout of one call of `batch`: the call is over. */
  end(batch: TimeoutBatch): void {
    batch.pending -= 1;
    if (batch.pending > 0) return;
    clearTimeout(batch.timer);
    if (this.#open === batch) this.#open = undefined;
  }
}
