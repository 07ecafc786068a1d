/**
 * A module loaded on demand, once (PERFORMANCE.md, "Chunks loaded on demand"): `value` once it
 * has arrived; a load that failed (a flaky network, in a browser) is tried again by the next
 * `load()`, and the caller that needed it reports the failure.
 */
export class OnDemand<T> {
  value: T | undefined;
  #loading: Promise<T> | undefined;
  readonly #load: () => Promise<T>;

  constructor(load: () => Promise<T>) {
    this.#load = load;
  }

  load(): Promise<T> {
    this.#loading ??= this.#load().then(
      (value) => {
        this.value = value;
        return value;
      },
      (error: unknown) => {
        this.#loading = undefined;
        throw error;
      },
    );
    return this.#loading;
  }

  /** Starts loading in the background; a failure is left to the next `load()`. */
  preload(): void {
    this.load().catch(() => {});
  }
}
