import type { Kit } from './kit';

/**
 * At most `max` calls in flight; the others wait in order. A waiting call whose signal aborts
 * leaves the queue at once. No timers: an idle limiter holds nothing.
 */
export class Limiter {
  readonly #max: number;
  readonly #kit: Kit;
  #active = 0;
  readonly #queue: (() => void)[] = [];

  constructor(max: number, kit: Kit) {
    this.#max = max;
    this.#kit = kit;
  }

  /**
   * Runs `task` in a slot. A call still queued when its signal aborts or at `deadline` (epoch ms)
   * leaves the queue with an `AttemptFailure` of kind `queued`.
   */
  async run<T>(task: () => Promise<T>, signal: AbortSignal | undefined, deadline: number | undefined): Promise<T> {
    // A finishing call hands its slot straight to the next waiter, so no newcomer can slip in between.
    if (this.#active >= this.#max) await this.#wait(signal, deadline);
    else this.#active += 1;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#active -= 1;
    }
  }

  #wait(signal: AbortSignal | undefined, deadline: number | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new this.#kit.AttemptFailure({ kind: 'queued' }));
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = () => {
        this.#queue.splice(this.#queue.indexOf(start), 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', leave);
        reject(new this.#kit.AttemptFailure({ kind: 'queued' }));
      };
      const start = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      signal?.addEventListener('abort', leave, { once: true });
      if (deadline !== undefined) timer = setTimeout(leave, Math.max(0, deadline - Date.now()));
      this.#queue.push(start);
    });
  }
}
