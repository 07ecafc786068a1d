import { describe, expect, test } from 'vitest';
import { CrmError } from '../../src/index';
import { makeClient } from '../support/capture';

/** A client whose fetch is `answer(page)`: a server in memory, as fast as the SDK can ask. */
function clientOf(answer: (page: number) => object) {
  let requests = 0;
  const fetch = async (input: RequestInfo | URL) => {
    requests += 1;
    const page = Number(new URL(String(input)).searchParams.get('page') ?? 1);
    return Response.json({ success: true, ...answer(page) });
  };
  return { crm: makeClient({ fetch }), requests: () => requests };
}

const records = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}` }));

/** Every id a for await loop yields, and how it ended. */
async function drain(iterable: AsyncIterable<{ id: string }>): Promise<{ ids: string[]; error: unknown }> {
  const ids: string[] = [];
  try {
    for await (const item of iterable) ids.push(item.id);
  } catch (error) {
    return { ids, error };
  }
  return { ids, error: undefined };
}

describe('a server cannot keep a for await loop going forever', () => {
  test('one that rotates the order of two record sets is read once: each set once, then the loop ends', async () => {
    const a = records('a', 50);
    const b = records('b', 50);
    const rotate = <T>(list: T[], by: number) => [...list.slice(by % list.length), ...list.slice(0, by % list.length)];
    const { crm, requests } = clientOf((page) => ({
      data: rotate(page % 2 ? a : b, page),
      pagination: { page, limit: 50, total: 20_000, pages: 400 },
    }));

    const { ids, error } = await drain(crm.contacts.list({ limit: 50 }));

    expect(error).toBeUndefined();
    expect(new Set(ids).size).toBe(100);
    expect(ids).toHaveLength(100);
    expect(requests()).toBe(3);
  });

  test('one whose pages grow on every page, with fresh records, ends the loop with a CrmError past twice what it first reported, and ten', async () => {
    const { crm, requests } = clientOf((page) => ({
      data: records(`p${page}-`, 10),
      pagination: { page, limit: 10, total: (page + 1) * 10, pages: page + 1 },
    }));

    const { ids, error } = await drain(crm.contacts.list({ limit: 10 }));

    expect(error).toBeInstanceOf(CrmError);
    expect((error as Error).message).toContain('twice the pages its first page reported');
    // The first page reported 2 pages: 2 x 2 + 10 = 14 pages are read.
    expect(requests()).toBe(14);
    expect(ids).toHaveLength(140);
  });

  test('one that reports neither pages nor total, and always serves a full page, is read for 10,000 pages', async () => {
    const { crm, requests } = clientOf((page) => ({ data: [{ id: `r${page}` }], pagination: {} }));

    const { error } = await drain(crm.contacts.list({ limit: 1 }));

    expect(error).toBeInstanceOf(CrmError);
    expect((error as Error).message).toContain('10000 pages');
    expect(requests()).toBe(10_000);
  }, 60_000);

  test('a list that grows by a few pages while it is read is read to its end', async () => {
    const { crm, requests } = clientOf((page) => ({
      data: records(`p${page}-`, 10),
      // Reported 10 pages at first; records added meanwhile make it 13.
      pagination: { page, limit: 10, total: page < 5 ? 100 : 130, pages: page < 5 ? 10 : 13 },
    }));

    const { ids, error } = await drain(crm.contacts.list({ limit: 10 }));

    expect(error).toBeUndefined();
    expect(ids).toHaveLength(130);
    expect(requests()).toBe(13);
  });

  test('a page is remembered in some 40 bytes, whatever the length of its ids', async () => {
    const long = 'x'.repeat(10_000);
    const { crm } = clientOf((page) => ({
      data: [{ id: `${long}-${page}-a` }, { id: `${long}-${page}-b` }],
      pagination: { page, limit: 2, total: 2, pages: 1 },
    }));

    const first = await crm.contacts.list({ limit: 2 });

    expect(first.fingerprint().length).toBeLessThan(40);
  });
});

/** A client whose fetch answers `answer(page)` as it is, text or an envelope. */
function textClientOf(answer: (page: number) => string | object, options = {}) {
  let requests = 0;
  const fetch = async (input: RequestInfo | URL) => {
    requests += 1;
    const page = Number(new URL(String(input)).searchParams.get('page') ?? 1);
    const body = answer(page);
    return new Response(typeof body === 'string' ? body : JSON.stringify({ success: true, ...body }), {
      headers: { 'content-type': 'application/json' },
    });
  };
  return { crm: makeClient({ fetch: fetch as typeof globalThis.fetch, ...options }), requests: () => requests };
}

describe('odd page counts, odd ids and repeated pages', () => {
  test('a first page reporting 1e308 pages, or a total of 1e308, bounds the loop at 1,000,000 pages; Infinity at 10,000', async () => {
    const boundOf = async (body: string | object, options = {}) => {
      const { crm } = textClientOf(() => body, options);
      return (await crm.contacts.list({ limit: 1 })).pageBound();
    };
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { page: 1, limit: 1, pages: 1e308 } })).toBe(1_000_000);
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { total: 1e308 } })).toBe(1_000_000);
    expect(await boundOf({ data: [{ id: 'r1' }], pagination: { page: 1, pages: 12 } })).toBe(34);
    const infinite = '{"success":true,"data":[{"id":"r1"}],"pagination":{"page":1,"pages":1e400}}';
    expect(await boundOf(infinite, { validateResponses: false })).toBe(10_000);
  });

  test('with validateResponses: false, a record id that cannot become a string causes no TypeError in for await', async () => {
    const { crm } = textClientOf(() => `{"success":true,"data":[{"id":{"toString":null}}],"pagination":{"pages":2}}`, {
      validateResponses: false,
    });
    let error: unknown;
    try {
      for await (const _ of crm.contacts.list()) {
        /* drain */
      }
    } catch (e) {
      error = e;
    }
    expect(error).not.toBeInstanceOf(TypeError);
  });

  test('repeated pages in shuffled order, records without id, duplicate ids: the loop ends', async () => {
    const { crm, requests } = textClientOf((page) => ({
      data: page % 2 ? [{ id: 'a' }, { id: 'a' }] : [{ id: 'a' }, { id: 'a' }],
      pagination: { page, pages: 1_000 },
    }));
    for await (const _ of crm.contacts.list()) {
      /* drain */
    }
    expect(requests()).toBeLessThan(5);
    const noId = textClientOf(
      (page) => `{"success":true,"data":[{"n":${page}}],"pagination":{"page":${page},"pages":1000}}`,
      { validateResponses: false },
    );
    for await (const _ of noId.crm.contacts.list()) {
      /* drain */
    }
    expect(noId.requests()).toBeLessThan(5);
  });

  test('prefetch 16 with pages -1 or 0.5 stops after the first page', async () => {
    for (const pages of [-1, 0.5]) {
      const { crm, requests } = textClientOf((page) => ({ data: [{ id: `r${page}` }], pagination: { page, pages } }), {
        prefetch: 16,
      });
      for await (const _ of crm.contacts.list()) {
        /* drain */
      }
      expect(requests()).toBe(1);
    }
  });
});
