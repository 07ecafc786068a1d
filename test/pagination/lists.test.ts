import { describe, expect, it } from 'vitest';
import { type Contact, CrmError, CrmNotFoundError, Page, PagePromise } from '../../src/index';
import { capture, makeClient, ok, TENANT } from '../support/capture';

const CONTACTS = '/integrations/v1/contacts';
const ACTIVITIES = '/integrations/v1/activities';

const contact = (id: string) => ({ id, firstName: `First ${id}`, email: `${id}@example.com` });

/** The `page` query parameter of a request, 1 when absent. */
const pageParam = (request: Request) => Number(new URL(request.url).searchParams.get('page') ?? '1');

/** A contacts server whose page N (of size 2) holds `c{2N-1}` and `c{2N}`, for `pages` pages. */
function pagedContacts(pages: number, total = pages * 2) {
  return capture('get', CONTACTS, (request) => {
    const page = pageParam(request);
    const items = page <= pages ? [contact(`c${2 * page - 1}`), contact(`c${2 * page}`)] : [];
    return ok(items, { pagination: { page, limit: 2, total, pages } });
  });
}

/** Collects at most `max` items, so that a looping iterator fails the test instead of hanging it. */
async function collect<T>(iterable: AsyncIterable<T>, max = 50): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length >= max) break;
  }
  return out;
}

const ids = (items: readonly { id: string }[]) => items.map((item) => item.id);
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('awaiting list()', () => {
  it('resolves to one page with data, pagination, hasNextPage() and nextPage(), from exactly one request', async () => {
    const seen = pagedContacts(3);
    const crm = makeClient();

    const page = await crm.contacts.list({ limit: 2 });

    expect(page).toBeInstanceOf(Page);
    expect(ids(page.data)).toEqual(['c1', 'c2']);
    expect(page.data[0]).toEqual(contact('c1'));
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 6, pages: 3 });
    expect(page.hasNextPage()).toBe(true);
    expect(typeof page.nextPage).toBe('function');
    await tick();
    expect(seen).toHaveLength(1);
  });

  it('sends the caller parameters as given on the first request, without adding page', async () => {
    const seen = pagedContacts(3);
    await makeClient().contacts.list({ limit: 2, status: 'active' });

    expect(seen).toHaveLength(1);
    const params = seen[0]?.url.searchParams;
    expect(params?.get('tenantId')).toBe(TENANT);
    expect(params?.get('limit')).toBe('2');
    expect(params?.get('status')).toBe('active');
    expect(params?.has('page')).toBe(false);
  });

  it('sends only the tenant when list() is called without parameters', async () => {
    const seen = pagedContacts(1);
    await makeClient().contacts.list();

    expect(seen).toHaveLength(1);
    expect([...(seen[0]?.url.searchParams.entries() ?? [])]).toEqual([['tenantId', TENANT]]);
  });

  it('starts at the page the caller asks for', async () => {
    const seen = pagedContacts(3);
    const page = await makeClient().contacts.list({ limit: 2, page: 2 });

    expect(seen[0]?.url.searchParams.get('page')).toBe('2');
    expect(ids(page.data)).toEqual(['c3', 'c4']);
    const next = await page.nextPage();
    expect(seen[1]?.url.searchParams.get('page')).toBe('3');
    expect(ids(next.data)).toEqual(['c5', 'c6']);
  });
});

describe('nextPage()', () => {
  it('requests page=2 with the same parameters as the first request', async () => {
    const seen = pagedContacts(3);
    const first = await makeClient().contacts.list({ limit: 2, status: 'active' });

    const second = await first.nextPage();

    expect(seen).toHaveLength(2);
    const params = seen[1]?.url.searchParams;
    expect(params?.get('page')).toBe('2');
    expect(params?.get('limit')).toBe('2');
    expect(params?.get('status')).toBe('active');
    expect(params?.get('tenantId')).toBe(TENANT);
    expect(ids(second.data)).toEqual(['c3', 'c4']);
    expect(second.pagination.page).toBe(2);
  });

  it('rejects with a CrmError on the last page, and sends no request', async () => {
    const seen = pagedContacts(1);
    const page = await makeClient().contacts.list({ limit: 2 });

    expect(page.hasNextPage()).toBe(false);
    await expect(page.nextPage()).rejects.toBeInstanceOf(CrmError);
    await expect(page.nextPage()).rejects.toThrow(/no next page/i);
    expect(seen).toHaveLength(1);
  });
});

describe('for await over list()', () => {
  it('yields every item of every page in order and stops after pagination.pages', async () => {
    // The server would answer page 4 with more items: the iterator must not ask for it.
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      return ok([contact(`c${2 * page - 1}`), contact(`c${2 * page}`)], {
        pagination: { page, limit: 2, total: 6, pages: 3 },
      });
    });

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    expect(items[4]).toEqual(contact('c5'));
    expect(seen.map((r) => r.url.searchParams.get('page'))).toEqual([null, '2', '3']);
  });

  it('stops fetching when the loop is left early with break', async () => {
    const seen = pagedContacts(1000);
    const items: Contact[] = [];

    for await (const item of makeClient().contacts.list({ limit: 2 })) {
      items.push(item);
      if (items.length === 3) break;
    }
    await tick();

    expect(ids(items)).toEqual(['c1', 'c2', 'c3']);
    expect(seen).toHaveLength(2);
  });

  it('yields nothing and sends one request when the first page is empty', async () => {
    const seen = capture('get', CONTACTS, () => ok([], { pagination: { page: 1, limit: 2, total: 0, pages: 0 } }));

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(items).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('stops at an empty page when pagination gives no page count', async () => {
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      const items = page <= 2 ? [contact(`c${2 * page - 1}`), contact(`c${2 * page}`)] : [];
      return ok(items, { pagination: { page, limit: 2 } });
    });

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(seen).toHaveLength(3);
  });

  it('stops at the first empty page when the server claims 1000 pages', async () => {
    // Page 3 is empty; page 4 would hold items again, and must not be asked for.
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      const items = page === 3 ? [] : [contact(`c${2 * page - 1}`), contact(`c${2 * page}`)];
      return ok(items, { pagination: { page, limit: 2, total: 2000, pages: 1000 } });
    });

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(seen).toHaveLength(3);
  });

  it('stops without looping when the server ignores page and always answers page 1', async () => {
    const seen = capture('get', CONTACTS, () =>
      ok([contact('c1'), contact('c2')], { pagination: { page: 1, limit: 2, total: 1000, pages: 500 } }),
    );

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2']);
    expect(seen.length).toBeLessThanOrEqual(2);
  });

  it('stops without looping when the server repeats the same items while echoing the requested page number', async () => {
    const seen = capture('get', CONTACTS, (request) =>
      ok([contact('c1'), contact('c2')], {
        pagination: { page: pageParam(request), limit: 2, total: 1000, pages: 500 },
      }),
    );

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2']);
    expect(seen.length).toBeLessThanOrEqual(2);
  });

  it('stops without looping when the server repeats the same full page and sends an empty pagination object', async () => {
    const seen = capture('get', CONTACTS, () => ok([contact('c1'), contact('c2')], { pagination: {} }));

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2']);
    expect(seen.length).toBeLessThanOrEqual(2);
  });

  it('stops without looping when the server alternates between two pages and gives no page count', async () => {
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      const items = page % 2 === 1 ? [contact('c1'), contact('c2')] : [contact('c3'), contact('c4')];
      return ok(items, { pagination: { page, limit: 2 } });
    });

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(seen.length).toBeLessThanOrEqual(3);
  });

  it('does not yield twice a record that an insert shifted onto the next page', async () => {
    // Between the two requests a record was inserted before c1, so c2 moved to page 2.
    const pages: Record<number, ReturnType<typeof contact>[]> = {
      1: [contact('c1'), contact('c2')],
      2: [contact('c2'), contact('c3')],
      3: [contact('c4')],
    };
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      return ok(pages[page] ?? [], { pagination: { page, limit: 2, total: 5, pages: 3 } });
    });

    const items = await collect(makeClient().contacts.list({ limit: 2 }));

    expect(ids(items)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(seen).toHaveLength(3);
  });

  it('throws the CrmError of a failing second page after yielding the first page', async () => {
    const seen = capture('get', CONTACTS, (request) => {
      const page = pageParam(request);
      if (page === 2) return Response.json({ success: false, message: 'Page went away' }, { status: 404 });
      return ok([contact('c1'), contact('c2')], { pagination: { page, limit: 2, total: 6, pages: 3 } });
    });
    const items: Contact[] = [];

    const loop = async () => {
      for await (const item of makeClient().contacts.list({ limit: 2 })) items.push(item);
    };

    const error = await loop().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toBeInstanceOf(CrmError);
    expect((error as CrmNotFoundError).status).toBe(404);
    expect((error as CrmNotFoundError).message).toContain('Page went away');
    expect(ids(items)).toEqual(['c1', 'c2']);
    expect(seen).toHaveLength(2);
  });

  it('sends the per-call headers on every page request', async () => {
    const seen = pagedContacts(2);

    await collect(makeClient().contacts.list({ limit: 2 }, { headers: { 'x-trace-id': 'trace-1' } }));

    expect(seen).toHaveLength(2);
    expect(seen.map((r) => r.headers.get('x-trace-id'))).toEqual(['trace-1', 'trace-1']);
  });
});

describe('pages()', () => {
  it('yields page objects in order, each with its own data and pagination', async () => {
    const seen = pagedContacts(3);

    const pages = await collect(makeClient().contacts.list({ limit: 2 }).pages());

    expect(pages).toHaveLength(3);
    for (const page of pages) expect(page).toBeInstanceOf(Page);
    expect(pages.map((page) => ids(page.data))).toEqual([
      ['c1', 'c2'],
      ['c3', 'c4'],
      ['c5', 'c6'],
    ]);
    expect(pages.map((page) => page.pagination.page)).toEqual([1, 2, 3]);
    expect(pages.map((page) => page.hasNextPage())).toEqual([true, true, false]);
    expect(seen).toHaveLength(3);
  });

  it('stops fetching when the loop over pages is left early', async () => {
    const seen = pagedContacts(1000);

    for await (const page of makeClient().contacts.list({ limit: 2 }).pages()) {
      expect(ids(page.data)).toEqual(['c1', 'c2']);
      break;
    }
    await tick();

    expect(seen).toHaveLength(1);
  });
});

describe('activities.list() pagination', () => {
  it('repeats opportunityId, type and fromDate (as an ISO string) on every page request', async () => {
    const seen = capture('get', ACTIVITIES, (request) => {
      const page = pageParam(request);
      return ok(
        [
          { id: `a${2 * page - 1}`, type: 'call', subject: `Call ${2 * page - 1}` },
          { id: `a${2 * page}`, type: 'call', subject: `Call ${2 * page}` },
        ],
        { pagination: { page, limit: 2, total: 6, pages: 3 } },
      );
    });
    const crm = makeClient();

    const list = crm.activities.list({
      opportunityId: 'opp_1',
      type: 'call',
      fromDate: new Date('2026-01-31T09:00:00Z'),
      limit: 2,
    });
    expect(list).toBeInstanceOf(PagePromise);
    const items = await collect(list);

    expect(ids(items)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    expect(seen).toHaveLength(3);
    for (const request of seen) {
      const params = request.url.searchParams;
      expect(params.get('tenantId')).toBe(TENANT);
      expect(params.get('opportunityId')).toBe('opp_1');
      expect(params.get('type')).toBe('call');
      expect(params.get('fromDate')).toBe('2026-01-31T09:00:00.000Z');
      expect(params.get('limit')).toBe('2');
    }
    expect(seen.map((r) => r.url.searchParams.get('page'))).toEqual([null, '2', '3']);
  });
});
