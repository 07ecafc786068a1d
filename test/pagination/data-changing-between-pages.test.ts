import { describe, expect, test } from 'vitest';
import type { Contact, PagePromise } from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';

const CONTACTS = '/integrations/v1/contacts';
const LIMIT = 2;

/** The most items a test reads: a looping iterator fails the test instead of hanging it. */
const MAX_ITEMS = 60;

const contact = (id: string) => ({ id, firstName: id });
const range = (from: number, to: number, prefix = 'c') =>
  Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);

/** The `page` query parameter of a request, 1 when absent. */
const pageParam = (request: Request) => Number(new URL(request.url).searchParams.get('page') ?? '1');

interface Answer {
  ids: readonly string[];
  /** The `pagination` object sent beside them. */
  pagination: Record<string, number>;
}

/**
 * A contacts list served from `records`, which `change` may edit after each answer (the n-th
 * answer has index n - 1): what the next page request sees is the changed list.
 */
function changingList(
  records: string[],
  options: {
    change?: (records: string[], index: number) => void;
    answer?: (records: readonly string[], page: number, index: number) => Answer;
  } = {},
) {
  const answer =
    options.answer ??
    ((list: readonly string[], page: number): Answer => ({
      ids: list.slice((page - 1) * LIMIT, page * LIMIT),
      pagination: { page, limit: LIMIT, total: list.length, pages: Math.ceil(list.length / LIMIT) },
    }));
  const asked: number[] = [];
  const seen = capture('get', CONTACTS, (request, index) => {
    const page = pageParam(request);
    asked.push(page);
    const { ids, pagination } = answer(records, page, index);
    options.change?.(records, index);
    return ok(ids.map(contact), { pagination });
  });
  return { seen, asked };
}

/** Every item `for await` yields, stopping at MAX_ITEMS. */
async function collect(list: PagePromise<Contact>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of list) {
    out.push(item.id);
    if (out.length >= MAX_ITEMS) break;
  }
  return out;
}

const duplicates = (ids: readonly string[]) => ids.filter((id, i) => ids.indexOf(id) !== i);

describe('iterating a list whose data changes between page requests', () => {
  test('a record inserted at the front after each page shifts one record across each boundary, and none is yielded twice', async () => {
    const records = range(1, 6);
    let inserted = 0;
    const { seen, asked } = changingList(records, {
      change: (list) => {
        inserted += 1;
        list.unshift(`new${inserted}`);
      },
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    // Page n holds c(n) and c(n+1): every boundary moved one record, which the previous page already had.
    expect(duplicates(ids)).toEqual([]);
    expect(ids).toEqual(range(1, 6));
    // The inserted records were never on a page yet to be read: an integrator cannot count on them.
    expect(ids.filter((id) => id.startsWith('new'))).toEqual([]);
    expect(asked).toEqual([1, 2, 3, 4, 5]);
    expect(seen.length).toBeLessThanOrEqual(5);
  });

  test('a single insert at the front before page 2 yields the shifted record once and every record', async () => {
    const records = range(1, 6);
    const { seen } = changingList(records, { change: (list, index) => index === 0 && list.unshift('new1') });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    // Page 2 is [c2, c3]: c2 crossed the boundary and is skipped; the list now has 4 pages.
    expect(ids).toEqual(range(1, 6));
    expect(seen).toHaveLength(4);
  });

  test('a whole page inserted at the front makes page 2 repeat page 1, and iteration stops there (documented limit)', async () => {
    const records = range(1, 6);
    const { seen } = changingList(records, { change: (list, index) => index === 0 && list.unshift('new1', 'new2') });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    // Page 2 is [c1, c2] again, which cannot be told apart from a server ignoring `page`:
    // the iterator stops rather than loop, and c3 to c6 are not yielded.
    expect(ids).toEqual(['c1', 'c2']);
    expect(seen).toHaveLength(2);
  });

  test('a record deleted before the next page makes one record be skipped, and iteration still ends', async () => {
    const records = range(1, 6);
    const { seen } = changingList(records, { change: (list, index) => index === 0 && list.splice(0, 1) });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    // After c1 goes, page 2 is [c4, c5]: c3 moved back onto page 1, already read, and is never yielded.
    expect(ids).toEqual(['c1', 'c2', 'c4', 'c5', 'c6']);
    expect(duplicates(ids)).toEqual([]);
    expect(seen).toHaveLength(3);
  });

  test('records deleted after every page end the iteration early, without repeats', async () => {
    const records = range(1, 10);
    const { seen } = changingList(records, { change: (list) => list.splice(0, LIMIT) });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    // Each page removes the records just read: page n starts 2n - 2 records further than it would have.
    expect(ids).toEqual(['c1', 'c2', 'c5', 'c6', 'c9', 'c10']);
    expect(seen.length).toBeLessThanOrEqual(4);
  });

  test('a total that grows on every page while the data does not ends at the first empty page', async () => {
    const records = range(1, 5);
    const { seen, asked } = changingList(records, {
      answer: (list, page, index) => ({
        ids: list.slice((page - 1) * LIMIT, page * LIMIT),
        pagination: { page, limit: LIMIT, total: list.length + 10 * (index + 1), pages: 10 * (index + 1) },
      }),
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(ids).toEqual(range(1, 5));
    expect(asked).toEqual([1, 2, 3, 4]);
    expect(seen).toHaveLength(4);
  });

  test('records appended more slowly than pages are read are all yielded once, and iteration ends', async () => {
    const records = range(1, 5);
    let appended = 0;
    const { seen } = changingList(records, {
      change: (list) => {
        appended += 1;
        list.push(`new${appended}`);
      },
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(duplicates(ids)).toEqual([]);
    expect(ids.slice(0, 5)).toEqual(range(1, 5));
    expect(ids.length).toBeLessThan(MAX_ITEMS);
    expect(seen.length).toBeLessThanOrEqual(10);
  });

  test('pages lying high ends the iteration at the first empty page', async () => {
    const { seen, asked } = changingList(range(1, 6), {
      answer: (list, page) => ({
        ids: list.slice((page - 1) * LIMIT, page * LIMIT),
        pagination: { page, limit: LIMIT, total: 1_000_000, pages: 500_000 },
      }),
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(ids).toEqual(range(1, 6));
    expect(asked).toEqual([1, 2, 3, 4]);
    expect(seen).toHaveLength(4);
  });

  test('pages lying low ends the iteration at pages, even though more data exists', async () => {
    const { seen, asked } = changingList(range(1, 10), {
      answer: (list, page) => ({
        ids: list.slice((page - 1) * LIMIT, page * LIMIT),
        pagination: { page, limit: LIMIT, total: 3, pages: 2 },
      }),
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(ids).toEqual(range(1, 4));
    expect(asked).toEqual([1, 2]);
    expect(seen).toHaveLength(2);
  });

  test.each([
    ['echoes the page it was asked for', (page: number) => ({ page, limit: LIMIT, total: 100, pages: 50 })],
    ['answers page 1 every time', () => ({ page: 1, limit: LIMIT, total: 100, pages: 50 })],
    ['sends no pagination numbers', () => ({})],
  ])('a server that ignores page and %s ends the iteration after the repeated page', async (_, pagination) => {
    const { seen } = changingList(range(1, 6), {
      answer: (list, page) => ({ ids: list.slice(0, LIMIT), pagination: pagination(page) }),
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(ids).toEqual(['c1', 'c2']);
    expect(seen).toHaveLength(2);
  });

  test('a server cycling through pages 1, 2, 3, 1, ... ends the iteration when page 1 comes back', async () => {
    const { seen, asked } = changingList(range(1, 6), {
      answer: (list, page) => {
        const shown = ((page - 1) % 3) + 1;
        return { ids: list.slice((shown - 1) * LIMIT, shown * LIMIT), pagination: { page, limit: LIMIT } };
      },
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(ids).toEqual(range(1, 6));
    expect(asked).toEqual([1, 2, 3, 4]);
    expect(seen).toHaveLength(4);
  });

  test('a server that cycles through 3 pages after the first ends the iteration without yielding a record twice', async () => {
    // Page 1 is [c1, c2]; then [c3, c4], [c5, c6], [c7, c8], [c3, c4], [c5, c6], ... with no `pages` to stop at.
    const { seen } = changingList(range(1, 8), {
      answer: (list, page) => {
        const shown = page === 1 ? 1 : ((page - 2) % 3) + 2;
        return { ids: list.slice((shown - 1) * LIMIT, shown * LIMIT), pagination: { page, limit: LIMIT } };
      },
    });

    const ids = await collect(makeClient().contacts.list({ limit: LIMIT }));

    expect(duplicates(ids)).toEqual([]);
    expect(ids).toEqual(range(1, 8));
    expect(seen.length).toBeLessThanOrEqual(6);
  });

  test('pages() shows the same stops: a cycling server yields each distinct page once', async () => {
    const { seen } = changingList(range(1, 6), {
      answer: (list, page) => {
        const shown = ((page - 1) % 3) + 1;
        return { ids: list.slice((shown - 1) * LIMIT, shown * LIMIT), pagination: { page, limit: LIMIT } };
      },
    });

    const pages: string[][] = [];
    for await (const page of makeClient().contacts.list({ limit: LIMIT }).pages()) {
      pages.push(page.data.map((item) => item.id));
      if (pages.length >= 20) break;
    }

    expect(pages).toEqual([
      ['c1', 'c2'],
      ['c3', 'c4'],
      ['c5', 'c6'],
    ]);
    expect(seen).toHaveLength(4);
  });
});
