import type { Pagination } from '../schemas/pagination';
import { CrmPromise, type WithResponse } from './crm-promise';
import { CrmError } from './errors';

/** Fetches page `n` of the same list, with the same parameters and options. */
type FetchPage<T extends { id: string }> = (page: number) => PagePromise<T>;

/**
 * One page of a list: its items, the server's `pagination`, and the way to the next page.
 *
 * @example
 * ```ts
 * let page = await crm.contacts.list({ limit: 100 });
 * while (page.hasNextPage()) page = await page.nextPage();
 * ```
 */
export class Page<T extends { id: string }> {
  /** The items of this page. */
  readonly data: T[];
  /** The server's `pagination` object (`page`, `limit`, `total`, `pages`). */
  readonly pagination: Pagination;
  readonly #number: number;
  readonly #limit: number | undefined;
  readonly #fetch: FetchPage<T>;

  /** @internal */
  constructor(data: T[], pagination: Pagination, number: number, limit: number | undefined, fetch: FetchPage<T>) {
    this.data = data;
    this.pagination = pagination;
    this.#number = number;
    this.#limit = limit;
    this.#fetch = fetch;
  }

  /**
   * Whether another page should be asked for: not after an empty page, not past
   * `pagination.pages`, and not when the server answered another page than the one asked for.
   */
  hasNextPage(): boolean {
    if (this.data.length === 0) return false;
    const { page, pages, limit } = this.pagination;
    if (typeof page === 'number' && page !== this.#number) return false;
    if (typeof pages === 'number') return this.#number < pages;
    const size = limit ?? this.#limit;
    return size === undefined || size === null || this.data.length >= size;
  }

  /** Requests the next page with the same parameters. Rejects when there is none. */
  nextPage(): PagePromise<T> {
    if (!this.hasNextPage()) {
      return new PagePromise(Promise.reject(new CrmError('There is no next page: check hasNextPage() first')));
    }
    return this.#fetch(this.#number + 1);
  }

  /** @internal Ids of this page's items, to recognise a repeated page or a shifted record. */
  ids(): Set<string> {
    return new Set(this.data.map((item) => item.id));
  }
}

/**
 * What `list()` returns: await it for the first page, `for await` it for every item of every
 * page, or iterate `pages()` for page after page. Iteration asks for the next page only when
 * the current one is used up, and stops at the last page, on an empty page, or on a page that
 * repeats the previous one (a server ignoring `page`); leaving the loop stops fetching.
 *
 * @example
 * ```ts
 * for await (const contact of crm.contacts.list({ status: 'active' })) {
 *   console.log(contact.email);
 * }
 * ```
 */
export class PagePromise<T extends { id: string }> extends CrmPromise<Page<T>> implements AsyncIterable<T> {
  /** @internal */
  constructor(result: Promise<WithResponse<Page<T>>>) {
    super(result);
  }

  /**
   * Every page, in order, starting with this one. Stops early on a page that repeats the first,
   * the previous or the one before it: a server cycling through pages cannot loop us forever,
   * and memory stays bounded by three pages.
   */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> = await (this as CrmPromise<Page<T>>);
    yield page;
    const first = page.ids();
    let recent: Set<string>[] = [first];
    while (page.hasNextPage()) {
      page = await page.nextPage();
      const ids = page.ids();
      const repeats = (seen: Set<string>) => [...ids].every((id) => seen.has(id));
      if (repeats(first) || recent.some(repeats)) return;
      recent = [recent.at(-1) as Set<string>, ids];
      yield page;
    }
  }

  /** Every item of every page. A record that an insert shifted onto the next page is not yielded twice. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    let previous: Set<string> | undefined;
    for await (const page of this.pages()) {
      for (const item of page.data) {
        if (!previous?.has(item.id)) yield item;
      }
      previous = page.ids();
    }
  }
}
