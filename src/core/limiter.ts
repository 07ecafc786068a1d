import { CrmAbortError, CrmTimeoutError } from './errors';

/**
 * At most `max` calls in flight; the others wait in order. A waiting call whose signal aborts
 * leaves the queue at once. No timers: an idle limiter holds nothing.
 */
export class Limiter {
  readonly #max: number;
  #active = 0;
  readonly #queue: (() => void)[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  /** Runs `task` in a slot; a call still queued at `deadline` (epoch ms) fails with CrmTimeoutError. */
  async run<T>(task: () => Promise<T>, signal: AbortSignal | undefined, where: string, deadline?: number): Promise<T> {
    // A finishing call hands its slot straight to the next waiter, so no newcomer can slip in between.
    if (this.#active >= this.#max) await this.#wait(signal, where, deadline);
    else this.#active += 1;
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#active -= 1;
    }
  }

  #wait(signal: AbortSignal | undefined, where: string, deadline: number | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new CrmAbortError(`Aborted: ${where}`, { cause: signal.reason }));
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = (error: Error) => {
        this.#queue.splice(this.#queue.indexOf(start), 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const onAbort = () => leave(new CrmAbortError(`Aborted while queued: ${where}`, { cause: signal?.reason }));
      const start = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (deadline !== undefined) {
        timer = setTimeout(
          () =>
            leave(new CrmTimeoutError(`Not started within totalTimeout (queued for a maxConcurrency slot): ${where}`)),
          Math.max(0, deadline - Date.now()),
        );
      }
      this.#queue.push(start);
    });
  }
}
