import type { Pagination } from '../schemas/pagination';
import { CrmPromise } from './crm-promise';
import { CrmError } from './errors';
import { toArray } from './to-array';

// Public fields are declared (`declare readonly`) and come to be when the constructor sets them:
// PERFORMANCE.md, "Fields the constructor sets".

/** Fetches page `n` of the same list, with the same parameters and options (and an extra signal). */
type FetchPage<T extends { id: string }> = (page: number, signal?: AbortSignal) => PagePromise<T>;

/** How a page was asked for: its number, the page size asked, how many pages to fetch ahead. */
interface PageRequest<T extends { id: string }> {
  readonly number: number;
  readonly limit: number | undefined;
  readonly prefetch: number;
  readonly fetch: FetchPage<T>;
}

const ignore = () => undefined;

/** The most pages a loop asks for when its first page reports neither `pages` nor `total` (nor a finite number). */
const MAX_PAGES_UNREPORTED = 10_000;
/** The most pages a loop asks for, whatever the first page reports: 200 million records at 200 a page. */
const MAX_PAGES = 1_000_000;

/**
 * A page fetched ahead failed before the loop asked for it, so its error's stack stops at the
 * request: taken again here, it leads to the loop's own code (src/internal/README.md, "Stacks").
 */
const restack = (error: unknown): never => {
  // V8's (Node, Deno, Chromium) and Bun's; elsewhere the stack stays as it was.
  if (error instanceof Error) (Error as { captureStackTrace?: (target: object) => void }).captureStackTrace?.(error);
  throw error;
};

/** Why a loop stopped reading a list whose server kept reporting more pages (`PagePromise.pages()`). */
function pageBoundError(bound: number): CrmError {
  const why =
    bound === MAX_PAGES_UNREPORTED
      ? `${bound} pages when its first page reports neither pages nor total`
      : bound === MAX_PAGES
        ? `${bound} pages`
        : 'twice the pages its first page reported, and ten';
  return new CrmError(
    `Stopped reading a list after ${bound} pages, though the server reports more: a list is read for at most ${why}`,
  );
}

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
  declare readonly data: T[];
  /** The server's `pagination` object (`page`, `limit`, `total`, `pages`). */
  declare readonly pagination: Pagination;
  readonly #request: PageRequest<T>;
  #ids: Set<string> | undefined;

  /** @internal */
  constructor(data: T[], pagination: Pagination, request: PageRequest<T>) {
    this.data = data;
    this.pagination = pagination;
    this.#request = request;
  }

  /**
   * Whether another page should be asked for: not after an empty page, not past
   * `pagination.pages`, and not when the server answered another page than the one asked for.
   */
  hasNextPage(): boolean {
    if (this.data.length === 0) return false;
    const { page, pages, limit } = this.pagination;
    const number = this.#request.number;
    if (typeof page === 'number' && page !== number) return false;
    if (typeof pages === 'number') return number < pages;
    const size = limit ?? this.#request.limit;
    return size === undefined || size === null || this.data.length >= size;
  }

  /** Requests the next page with the same parameters. Rejects when there is none. */
  nextPage(): PagePromise<T> {
    if (!this.hasNextPage()) {
      return new PagePromise(Promise.reject(new CrmError('No next page (see hasNextPage())')), {
        response: undefined,
      });
    }
    return this.#request.fetch(this.#request.number + 1);
  }

  /** @internal The page number that was asked for. */
  get number(): number {
    return this.#request.number;
  }

  /** @internal Requests the pages after this one that prefetching wants in flight, into `ahead`. */
  fillAhead(ahead: Ahead<T>[]): void {
    const { prefetch, fetch, number } = this.#request;
    const last = this.pagination.pages;
    // Only ahead of a known end: the API documents no rate limits, so no request goes past it.
    if (prefetch <= 0 || typeof last !== 'number' || !this.hasNextPage()) return;
    for (let next = (ahead.at(-1)?.number ?? number) + 1; ahead.length < prefetch && next <= last; next++) {
      const controller = new AbortController();
      const result = fetch(next, controller.signal);
      // Awaited later, or abandoned: either way its rejection must not be reported as unhandled.
      result.then(ignore, ignore);
      ahead.push({ number: next, result, controller });
    }
  }

  /**
   * @internal What identifies this page's set of records, in any order, to recognise it when a
   * server serves it again: their count, and the sum and exclusive or of a 32-bit hash (FNV-1a) of
   * each id. Some 40 bytes, whatever the length of the ids.
   */
  fingerprint(): string {
    let sum = 0;
    let xor = 0;
    for (const { id } of this.data) {
      let hash = 0x811c9dc5;
      // A string, where records were validated; anything, where they were not.
      const text = typeof id === 'string' ? id : (JSON.stringify(id) ?? '');
      for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
      sum = (sum + hash) | 0;
      xor ^= hash;
    }
    return `${this.data.length}:${sum}:${xor}`;
  }

  /**
   * @internal How many pages a loop from this one may ask for: twice what this page reports, and
   * ten more, which a list that grows while it is read does not reach, and a server that keeps
   * reporting more pages does; 10,000 when this page reports neither `pages` nor `total`.
   */
  pageBound(): number {
    const { pages, total, limit } = this.pagination;
    const size = limit ?? this.#request.limit ?? this.data.length;
    const reported =
      typeof pages === 'number' ? pages : typeof total === 'number' && size ? Math.ceil(total / size) : undefined;
    if (reported === undefined || !Number.isFinite(reported) || reported < 0) return MAX_PAGES_UNREPORTED;
    return Math.min(2 * reported + 10, MAX_PAGES);
  }

  /**
   * @internal The items of this page that `before` did not hold. Records shifted by inserts
   * come first, so the id set of `before` is built only when this page starts with one of them.
   */
  newSince(before: Page<T> | undefined): T[] {
    const first = this.data[0];
    if (!before || !first || !before.data.some((item) => item.id === first.id)) return this.data;
    const ids = before.ids();
    return this.data.filter((item) => !ids.has(item.id));
  }

  /** @internal Ids of this page's items, to recognise a repeated page or a shifted record. */
  ids(): Set<string> {
    if (!this.#ids) {
      this.#ids = new Set();
      for (const item of this.data) this.#ids.add(item.id);
    }
    return this.#ids;
  }
}

/** A page requested ahead of the caller. */
interface Ahead<T extends { id: string }> {
  readonly number: number;
  readonly result: PagePromise<T>;
  readonly controller: AbortController;
}

/**
 * What `list()` returns: await it for the first page, `for await` it for every item of every
 * page, or iterate `pages()` for page after page. Iteration asks for the next page when the
 * current one is used up (or up to `prefetch` pages earlier), and stops at the last page, on an
 * empty page, or on a page that repeats an earlier one (a server ignoring `page`); leaving the
 * loop stops fetching and cancels what was fetched ahead.
 *
 * @example
 * ```ts
 * for await (const contact of crm.contacts.list({ status: 'active' })) {
 *   console.log(contact.email);
 * }
 * ```
 */
export class PagePromise<T extends { id: string }> extends CrmPromise<Page<T>> implements AsyncIterable<T> {
  /**
   * Every page, in order, starting with this one. Stops early on a page served before, in any
   * order (or one made only of the previous page's records): a server cycling through pages
   * cannot loop us forever. Rejects with a `CrmError` past twice the pages the first page reported,
   * and ten (10,000 when it reports neither `pages` nor `total`): a server that keeps reporting
   * more pages cannot keep us reading forever. Memory holds the previous page, the pages fetched
   * ahead, and some 40 bytes per page read.
   */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> = await (this as CrmPromise<Page<T>>);
    const ahead: Ahead<T>[] = [];
    try {
      page.fillAhead(ahead);
      yield page;
      const seen = new Set([page.fingerprint()]);
      const bound = page.pageBound();
      while (page.hasNextPage()) {
        if (seen.size >= bound) throw pageBoundError(bound);
        const wanted = page.number + 1;
        const previous = page;
        const queued = ahead[0]?.number === wanted ? ahead.shift() : undefined;
        page = await (queued ? queued.result.catch(restack) : page.nextPage());
        const fingerprint = page.fingerprint();
        if (seen.has(fingerprint) || page.newSince(previous).length === 0) return;
        seen.add(fingerprint);
        page.fillAhead(ahead);
        yield page;
      }
    } finally {
      for (const { controller } of ahead) controller.abort();
    }
  }

  /**
   * Every item of every page, or the first `max`, as an array: what `Array.fromAsync()` of the
   * list gives, without needing it. Stops fetching once it has `max` items. Rejects with a
   * `CrmValidationError` when `max` is not an integer >= 0.
   *
   * @example
   * ```ts
   * const first500 = await crm.contacts.list({ limit: 200 }).toArray({ max: 500 });
   * ```
   */
  async toArray(options: { max?: number | undefined } = {}): Promise<T[]> {
    // Handled now, before the wait below: toArray() reports a failed list, not the process.
    this.catch(ignore);
    return toArray(this, options);
  }

  /**
   * Every item of every page. A record that an insert shifted onto the next page is not yielded
   * twice. Calls made before the previous one settled are served in order, as an async
   * generator's are: each item once, `done` only after the last (several workers may share one
   * iterator). `return()` and `throw()` wait for the calls before them, then stop fetching.
   * (PERFORMANCE.md, "Items handed out without a generator".)
   */
  [Symbol.asyncIterator](): AsyncIterator<T, undefined> {
    const pages = this.pages();
    let items: readonly T[] = [];
    let index = 0;
    let previous: Page<T> | undefined;
    // Calls not yet settled, and the last one: a call made meanwhile waits for it, as an async
    // generator's queue does. Counted rather than followed with a `then`, so that a lone caller's
    // await is the only one on its call (src/internal/README.md, "Stacks").
    let busy = 0;
    let last: Promise<unknown> = Promise.resolve();
    const done = { done: true, value: undefined } as const;
    const pull = async (): Promise<IteratorResult<T, undefined>> => {
      try {
        for (;;) {
          const next = await pages.next();
          if (next.done) return done;
          items = next.value.newSince(previous);
          previous = next.value;
          index = 0;
          if (items.length > 0) return { done: false, value: items[index++] as T };
        }
      } finally {
        busy -= 1;
      }
    };
    const step = (): IteratorResult<T, undefined> | Promise<IteratorResult<T, undefined>> => {
      if (index >= items.length) return pull();
      busy -= 1;
      return { done: false, value: items[index++] as T };
    };
    const stop = async (): Promise<IteratorResult<T, undefined>> => {
      try {
        items = [];
        await pages.return(undefined);
        return done;
      } finally {
        busy -= 1;
      }
    };
    const call = <R>(run: () => R | Promise<R>): Promise<R> => {
      busy += 1;
      const result = busy === 1 ? Promise.resolve(run()) : last.then(run, run);
      last = result;
      return result;
    };
    return {
      // An item of a page already read, when no call is pending, goes out without a queue.
      next: () =>
        busy === 0 && index < items.length ? Promise.resolve({ done: false, value: items[index++] as T }) : call(step),
      return: () => call(stop),
      throw: (error: unknown) =>
        call(async () => {
          await stop();
          throw error;
        }),
    };
  }
}
