/** Calls that started together with the same timeout, under one timer. */
export interface TimeoutBatch {
  readonly ms: number;
  controllers: AbortController[];
  /** Calls of the batch not yet over. */
  pending: number;
  /** Undefined once the batch has fired or every call in it is over. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Aborts each call's controller when its attempt timeout passes, with one timer for all the calls
 * that start in the same turn of the event loop instead of one per call. 200 calls at once
 * (`Promise.all`) start in one turn; a timer each cost about 3% of their CPU, most of it garbage.
 *
 * Sharing a timer does not move any deadline: Node's timers count from the event loop's time,
 * which stands still for the whole turn, so calls in one turn already have the same deadline.
 * Nothing here reads a clock, so fake timers (`vi.useFakeTimers()`) drive it as they drive
 * `setTimeout`. A batch's timer is cleared when its last call is over, so idle clients hold none.
 */
export class Timeouts {
  #open: TimeoutBatch | undefined;
  readonly #close = (): void => {
    this.#open = undefined;
  };

  /** Aborts `controller` after `ms`, unless `end()` is called for it first. */
  start(controller: AbortController, ms: number): TimeoutBatch {
    let batch = this.#open;
    if (batch?.ms === ms) {
      batch.controllers.push(controller);
      batch.pending += 1;
      return batch;
    }
    const opened: TimeoutBatch = { ms, controllers: [controller], pending: 1, timer: undefined };
    opened.timer = setTimeout(() => this.#fire(opened), ms);
    // Joinable for the rest of this turn only: a call in a later turn has a later deadline.
    if (!batch) queueMicrotask(this.#close);
    this.#open = batch = opened;
    return batch;
  }

  /** Stops the timeout of one call of `batch`: the call is over. */
  end(batch: TimeoutBatch): void {
    batch.pending -= 1;
    if (batch.pending > 0 || batch.timer === undefined) return;
    clearTimeout(batch.timer);
    this.#retire(batch);
  }

  #fire(batch: TimeoutBatch): void {
    const { controllers } = batch;
    this.#retire(batch);
    // Calls of the batch that are over are aborted too, which does nothing to them.
    for (const controller of controllers) controller.abort();
  }

  #retire(batch: TimeoutBatch): void {
    batch.timer = undefined;
    // Let go of the controllers (and through them each call's request) as soon as they are done.
    batch.controllers = [];
    if (this.#open === batch) this.#open = undefined;
  }
}
