import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { CrmNotFoundError, CrmValidationError } from '../../src/index';
import { capture, makeClient, ok, rejection } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

/*
 * toArray({ max }): bad max values, early stop, errors, prefetch, and no unhandled rejection
 * whatever the caller does with the promise it gets.
 */

/** `pages` pages of two contacts each; records which pages were asked for. */
function pagesOf(pages: number, failOn?: number) {
  return capture('get', mswPath(endpoints.listContacts), (request) => {
    const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
    if (page === failOn) return Response.json({ success: false, error: { code: 'GONE' } }, { status: 404 });
    return ok([{ id: `c${2 * page - 1}` }, { id: `c${2 * page}` }], { pagination: { page, pages, limit: 2 } });
  });
}

/** Unhandled rejections while a test runs, taken from vitest's own handler so that the test can assert them. */
let unhandled: unknown[] = [];
let saved: NodeJS.UnhandledRejectionListener[] = [];
const record = (reason: unknown) => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  saved = process.listeners('unhandledRejection');
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', record);
});
afterEach(() => {
  process.off('unhandledRejection', record);
  for (const listener of saved) process.on('unhandledRejection', listener);
});
/** Lets a rejection nobody handles be reported. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('toArray() with a bad max on a list that fails', () => {
  test.each([[-1], [Number.NaN], ['3']])(
    'max %s: rejects with CrmValidationError, and the list’s own failure is not an unhandled rejection',
    async (max) => {
      const error = await rejection(
        makeClient()
          .contacts.list({ limit: 0 })
          .toArray({ max: max as number }),
      );
      await settle();
      expect(error).toBeInstanceOf(CrmValidationError);
      expect(unhandled).toEqual([]);
    },
  );

  test('max -1 on a list whose server answers 404: no unhandled rejection', async () => {
    capture('get', mswPath(endpoints.listContacts), Response.json({ success: false }, { status: 404 }));
    const error = await rejection(makeClient().contacts.list().toArray({ max: -1 }));
    await settle();
    expect(error).toBeInstanceOf(CrmValidationError);
    expect(unhandled).toEqual([]);
  });
});

describe('toArray({ max }) with prefetch', () => {
  // Pages fetched ahead past the max-th record are cancelled, not awaited (a known cost, left as it is).
  test('gives the first max records and cancels what was fetched ahead', async () => {
    pagesOf(5);
    const contacts = await makeClient().contacts.list({ limit: 2 }, { prefetch: 3 }).toArray({ max: 2 });
    await settle();
    expect(contacts.map((contact) => contact.id)).toEqual(['c1', 'c2']);
    expect(unhandled).toEqual([]);
  });
});

describe('toArray({ max }) at and past the end of the list', () => {
  test('max larger than the list, and Infinity, give every record', async () => {
    pagesOf(2);
    expect(await makeClient().contacts.list({ limit: 2 }).toArray({ max: 1000 })).toHaveLength(4);
    expect(await makeClient().contacts.list({ limit: 2 }).toArray({ max: Number.POSITIVE_INFINITY })).toHaveLength(4);
  });

  test('max equal to a page boundary asks for no further page (no prefetch)', async () => {
    const seen = pagesOf(5);
    await makeClient().contacts.list({ limit: 2 }).toArray({ max: 4 });
    expect(seen).toHaveLength(2);
  });

  test.each([
    ['null options', null],
    ['max null', { max: null }],
    ['max -Infinity', { max: Number.NEGATIVE_INFINITY }],
    ['max a bigint', { max: 2n }],
    ['max -0.5', { max: -0.5 }],
  ])('%s', async (_name, options) => {
    pagesOf(1);
    const result = await makeClient()
      .contacts.list()
      .toArray(options as never)
      .then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
    if ('error' in result) expect(result.error).toBeInstanceOf(CrmValidationError);
    else expect(result.value).toHaveLength(2);
    await settle();
    expect(unhandled).toEqual([]);
  });

  test('a page that fails mid-list rejects toArray with its error, pages fetched ahead included, nothing unhandled', async () => {
    pagesOf(4, 3);
    const error = await rejection(makeClient().contacts.list({ limit: 2 }, { prefetch: 2 }).toArray());
    await settle();
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(unhandled).toEqual([]);
  });

  test('a failure past max is never seen: the records before it', async () => {
    pagesOf(4, 2);
    expect(await makeClient().contacts.list({ limit: 2 }).toArray({ max: 2 })).toHaveLength(2);
  });

  test('max 0 on a list that fails rejects, nothing unhandled', async () => {
    capture('get', mswPath(endpoints.listContacts), Response.json({ success: false }, { status: 404 }));
    const error = await rejection(makeClient().contacts.list().toArray({ max: 0 }));
    await settle();
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(unhandled).toEqual([]);
  });

  test('extraQuery goes with every page toArray asks for, page numbers are not overridden unless asked', async () => {
    const seen = pagesOf(3);
    await makeClient()
      .contacts.list({ limit: 2 }, { extraQuery: { view: 'full' } })
      .toArray();
    expect(seen.map((request) => [request.url.searchParams.get('page'), request.url.searchParams.get('view')])).toEqual(
      [
        [null, 'full'],
        ['2', 'full'],
        ['3', 'full'],
      ],
    );
  });

  test('extraQuery page: 1 on a list does not loop: it stops on the repeated page', async () => {
    const seen = pagesOf(3);
    const contacts = await makeClient()
      .contacts.list({ limit: 2 }, { extraQuery: { page: 1 } })
      .toArray();
    expect(contacts.map((contact) => contact.id)).toEqual(['c1', 'c2']);
    expect(seen.length).toBeLessThanOrEqual(2);
  });
});
