const ignore = (): void => {};

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/**
 * When an attempt ends: at its time (its timeout, or what `totalTimeout` leaves) or at the
 * caller's abort, whatever fetch or ky does with the signal it is handed. undici may lose a
 * `Request`'s link to its signal after a garbage collection (ky's retries), and a fetch of the
 * caller's, or one patched over the global, may ignore it. So the response is raced against the
 * end, and the body's reader is cancelled at the end, which settles its pending read: one timer,
 * at most one listener (on the attempt's own signal, only when the caller has one), and nothing
 * per chunk.
 */
export class AttemptBound {
  /** Handed to fetch: aborts at the attempt's time, or with the caller's reason. */
  declare readonly signal: AbortSignal;
  readonly #timeout = new AbortController();
  readonly #clock: ReturnType<typeof setTimeout>;
  #ended = false;
  /** The response's wait, while it lasts: the exchange's promise, and the wait's rejection. */
  #waiting: Promise<Response> | undefined;
  #reject: ((reason: unknown) => void) | undefined;
  /** The body's reader, once its read began. */
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  constructor(ms: number, caller: AbortSignal | undefined) {
    // A composite of the caller's signal, not a listener on it: a signal shared by many calls
    // carries no listener per attempt (test/waiting/signal-listeners.test.ts).
    this.signal = caller ? AbortSignal.any([caller, this.#timeout.signal]) : this.#timeout.signal;
    if (caller) this.signal.addEventListener('abort', this);
    this.#clock = setTimeout(expire, ms, this);
  }

  /** Whether its time ended it (not the caller). */
  get timedOut(): boolean {
    return this.#timeout.signal.aborted;
  }

  /** The caller's abort, or the timeout, on the attempt's signal. */
  handleEvent(): void {
    this.#end();
  }

  /** @internal By the clock. */
  expire(): void {
    this.#timeout.abort();
    this.#end();
  }

  /** `response`, or the end's reason once the attempt ends; a response that comes later has its body cancelled. */
  response(response: Promise<Response>): Promise<Response> {
    if (this.#ended) {
      response.then(cancelBody, ignore);
      return Promise.reject(this.signal.reason);
    }
    this.#waiting = response;
    return new Promise<Response>((resolve, reject) => {
      this.#reject = reject;
      response.then(resolve, reject);
    });
  }

  /**
   * The body's reader, to cancel at the end (at once if it is over). Once a read is done, the
   * reader asks `over()`: a read the end cancelled is done too.
   */
  reading(reader: ReadableStreamDefaultReader<Uint8Array>): void {
    this.#reader = reader;
    this.#waiting = undefined;
    this.#reject = undefined;
    if (this.#ended) reader.cancel(this.signal.reason).catch(ignore);
  }

  /** Throws the end's reason once the attempt has ended. */
  over(): void {
    if (this.#ended) throw this.signal.reason;
  }

  /** The attempt is over: its timer and its listener go. */
  dispose(): void {
    clearTimeout(this.#clock);
    this.signal.removeEventListener('abort', this);
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const reason = this.signal.reason;
    this.#reject?.(reason);
    // A response that comes after the end is not read: its body is cancelled, its connection freed.
    this.#waiting?.then(cancelBody, ignore);
    this.#reader?.cancel(reason).catch(ignore);
  }
}

function expire(bound: AttemptBound): void {
  bound.expire();
}

function cancelBody(response: Response): void {
  response.body?.cancel().catch(ignore);
}
