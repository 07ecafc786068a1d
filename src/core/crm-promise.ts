import { requestIdOf } from './errors';

/** The data of a call together with the raw HTTP response it came from. */
export interface WithResponse<T> {
  readonly data: T;
  /** The raw response: status, and headers such as rate limits. Its body is consumed. */
  readonly response: Response;
  /** The server's request id (`x-request-id`, `request-id` or `x-correlation-id`), as the errors read it. */
  readonly requestId: string | undefined;
}

/**
 * The promise every method returns: await it for the data, or call `withResponse()` for the
 * data and the raw `Response`. The request is sent when the method is called.
 *
 * @example
 * ```ts
 * const { data, response, requestId } = await crm.opportunities.get('opp_1').withResponse();
 * console.log(data.name, response.status, requestId);
 * ```
 */
export class CrmPromise<T> extends Promise<T> {
  /** Chained promises (`.then()` results) are plain promises, not CrmPromises. */
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #data: Promise<T>;
  readonly #reply: { readonly response: Response | undefined };

  /** @internal */
  constructor(data: Promise<T>, reply: { readonly response: Response | undefined }) {
    // The base promise is never used: then/catch/finally read `data`, so that only the chain a
    // caller builds can hold a rejection (no unhandled rejection from `withResponse()`).
    super(resolveUnused);
    this.#data = data;
    this.#reply = reply;
  }

  /** The data, the raw `Response`, and the server's request id. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#data.then((data) => {
      const response = this.#reply.response as Response;
      return { data, response, requestId: requestIdOf(response.headers) };
    });
  }

  // biome-ignore lint/suspicious/noThenProperty: it is a promise, by design
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    // The caller's own handlers, straight on the request path's promise: `await` passes the
    // resolving functions of its promise here, which lets V8 follow a rejection to the frame
    // that awaited the call (see src/internal/README.md, "Stacks").
    return this.#data.then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#data.then(undefined, onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#data.finally(onfinally);
  }
}

// Shared rather than written inline: each call makes a CrmPromise, and an inline arrow is a new
// function object each time.
const resolveUnused = (resolve: (value: never) => void) => resolve(undefined as never);
