import { CrmError } from '../core/errors';

/**
 * A module loaded on demand, once (PERFORMANCE.md, "Chunks loaded on demand"): `value` once it
 * has arrived; a load that failed (a flaky network, in a browser) is tried again by the next
 * `load()`, and rejects with a `CrmError` whose `cause` is the failure, which the caller that
 * needed it reports (no module is loaded after a call has sent anything).
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
        throw new CrmError('Could not load part of the SDK', { cause: error });
      },
    );
    return this.#loading;
  }

  /** The module, once loaded; undefined if it cannot be, for a caller that does without it. */
  async loaded(): Promise<T | undefined> {
    return this.value ?? this.load().catch(() => undefined);
  }

  /** Starts loading in the background; a failure is left to the next `load()`. */
  preload(): void {
    this.load().catch(() => {});
  }
}
