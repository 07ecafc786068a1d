import type * as z from 'zod/mini';
import { checkPrefetch, type ListOptions, type RequestOptions } from '../options';
import { CrmPromise } from './crm-promise';
import type { Endpoint, EndpointInput } from './endpoint';
import { Page, PagePromise } from './page';
import type { Transport } from './request';

/** Binds the transport to one tenant and wraps results in the promise types methods return. */
export class Caller {
  readonly #transport: Transport;
  readonly #tenantId: string | undefined;
  readonly #prefetch: number;

  constructor(transport: Transport, tenantId: string | undefined, prefetch: number) {
    this.#transport = transport;
    this.#tenantId = tenantId;
    this.#prefetch = prefetch;
  }

  one<E extends Endpoint>(
    endpoint: E,
    input: EndpointInput<E>,
    options?: RequestOptions,
  ): CrmPromise<z.output<E['data']>> {
    return new CrmPromise(this.#transport.request(endpoint, input, this.#tenantId, options));
  }

  list<E extends Endpoint<z.ZodMiniType, undefined, z.ZodMiniType<{ id: string }>>>(
    endpoint: E,
    query: { page?: number | undefined; limit?: number | undefined } & EndpointInput<E>['query'],
    options?: ListOptions,
  ): PagePromise<z.output<E['data']>> {
    type Item = z.output<E['data']>;
    // Read before validation, so a caller's null or non-object must not throw here: the request path reports it.
    const given: { page?: unknown; limit?: unknown } = typeof query === 'object' && query !== null ? query : {};
    const limit = typeof given.limit === 'number' ? given.limit : undefined;
    const prefetch = options?.prefetch ?? this.#prefetch;
    if (options?.prefetch !== undefined) {
      const checked = checkPrefetch(options.prefetch);
      if (checked) return new PagePromise(Promise.reject(checked));
    }
    // The first request sends the caller's parameters as given; later ones add `page`.
    const fetchPage = (
      page: number,
      signal?: AbortSignal,
      pageQuery: object = { ...query, page },
    ): PagePromise<Item> => {
      const callOptions = signal
        ? { ...options, signal: options?.signal ? AbortSignal.any([options.signal, signal]) : signal }
        : options;
      const result = this.#transport
        .request(endpoint, { query: pageQuery } as EndpointInput<E>, this.#tenantId, callOptions)
        .then(({ data, pagination, response }) => ({
          data: new Page<Item>(data as Item[], pagination ?? {}, { number: page, limit, prefetch, fetch: fetchPage }),
          response,
        }));
      return new PagePromise(result);
    };
    return fetchPage(typeof given.page === 'number' ? given.page : 1, undefined, query);
  }
}
