/** The data of a call together with the raw HTTP response it came from. */
export interface WithResponse<T> {
  readonly data: T;
  /** The raw response: status, and headers such as rate limits and request ids. Its body is consumed. */
  readonly response: Response;
}

/**
 * The promise every method returns: await it for the data, or call `withResponse()` for the
 * data and the raw `Response`. The request is sent when the method is called.
 *
 * @example
 * ```ts
 * const { data, response } = await crm.opportunities.get('opp_1').withResponse();
 * console.log(data.name, response.headers.get('x-request-id'));
 * ```
 */
export class CrmPromise<T> extends Promise<T> {
  /** Chained promises (`.then()` results) are plain promises, not CrmPromises. */
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #result: Promise<WithResponse<T>>;

  /** @internal */
  constructor(result: Promise<WithResponse<T>>) {
    // The base promise is never used: then/catch/finally read `result`, so that only the
    // chain a caller builds can hold a rejection (no unhandled rejection from `withResponse()`).
    super(resolveUnused);
    this.#result = result;
  }

  /** The data and the raw `Response`. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  // biome-ignore lint/suspicious/noThenProperty: it is a promise, by design
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    // Straight from the result, not through a promise of the data: one promise and one
    // microtask fewer for each `await`.
    if (!onfulfilled) return this.#result.then(dataOf, onrejected) as Promise<A | B>;
    return this.#result.then((result) => onfulfilled(result.data), onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#result.then(dataOf, onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result.then(dataOf).finally(onfinally);
  }
}

// Shared rather than written inline: each call makes a CrmPromise, and an inline arrow is a new
// function object each time.
const resolveUnused = (resolve: (value: never) => void) => resolve(undefined as never);
const dataOf = <T>(result: WithResponse<T>): T => result.data;
