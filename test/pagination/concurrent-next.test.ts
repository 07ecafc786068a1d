import { expect, it } from 'vitest';
import { capture, makeClient, ok } from '../support/capture';

/*
 * Several workers draining one list iterator call next() before the previous call settled. An
 * async generator queues such calls and serves them in order; the list's iterator must too: each
 * record once, and `done` only after the last one.
 */

const CONTACTS = '/integrations/v1/contacts';

const contact = (id: number) => ({ id: `c${id}`, email: `c${id}@example.com` });

/** Pages of 3, 3 and 2 contacts (c1..c8); page 2 a 404 with `failOnPage2`. */
function threePages(options: { failOnPage2?: boolean } = {}) {
  return capture('get', CONTACTS, (request) => {
    const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
    if (options.failOnPage2 && page === 2) return new Response('{"success":false}', { status: 404 });
    const first = 3 * (page - 1) + 1;
    const ids = page === 3 ? [first, first + 1] : [first, first + 1, first + 2];
    return ok(ids.map(contact), { pagination: { page, limit: 3, total: 8, pages: 3 } });
  });
}

const values = (results: readonly IteratorResult<{ id: string }, undefined>[]) =>
  results.map((result) => (result.done ? 'done' : result.value.id));

it('serves 9 concurrent next() calls over pages of 3, 3 and 2 in order: each record once, then done', async () => {
  threePages();
  const iterator = makeClient().contacts.list({ limit: 3 })[Symbol.asyncIterator]();

  const results = await Promise.all(Array.from({ length: 9 }, () => iterator.next()));

  expect(values(results)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'done']);
  expect(values([await iterator.next()])).toEqual(['done']);
});

it('gives 4 workers sharing one iterator every record exactly once, with prefetch', async () => {
  capture('get', CONTACTS, (request) => {
    const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
    return ok(
      [1, 2, 3].map((i) => contact(3 * (page - 1) + i)),
      { pagination: { page, limit: 3, total: 60, pages: 20 } },
    );
  });
  const iterator = makeClient().contacts.list({ limit: 3 }, { prefetch: 4 })[Symbol.asyncIterator]();
  // Workers that take different times over a record, as real ones do.
  const worker = async (turns: number) => {
    const got: string[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      got.push(next.value.id);
      for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
    }
    return got;
  };

  const got = (await Promise.all([worker(0), worker(1), worker(2), worker(3)])).flat();

  expect(got).toHaveLength(60);
  expect(new Set(got).size).toBe(60);
});

it('a return() made while next() calls are pending waits for them, and the calls after it are done', async () => {
  const seen = threePages();
  const iterator = makeClient().contacts.list({ limit: 3 })[Symbol.asyncIterator]();

  const before = [iterator.next(), iterator.next(), iterator.next(), iterator.next()];
  const returned = iterator.return?.();
  const after = iterator.next();

  expect(values(await Promise.all(before))).toEqual(['c1', 'c2', 'c3', 'c4']);
  expect(await returned).toEqual({ done: true, value: undefined });
  expect(values([await after])).toEqual(['done']);
  expect(seen).toHaveLength(2);
});

it('a throw() made while next() calls are pending waits for them, rejects with its error and stops the list', async () => {
  threePages();
  const iterator = makeClient().contacts.list({ limit: 3 })[Symbol.asyncIterator]();

  const before = [iterator.next(), iterator.next()];
  const thrown = iterator.throw?.(new Error('worker gave up'));
  const after = iterator.next();

  expect(values(await Promise.all(before))).toEqual(['c1', 'c2']);
  await expect(thrown).rejects.toThrow('worker gave up');
  expect(values([await after])).toEqual(['done']);
});

it('a page that fails rejects the call that asked for it, and the calls queued behind it are done', async () => {
  threePages({ failOnPage2: true });
  const iterator = makeClient({ maxRetries: 0 }).contacts.list({ limit: 3 })[Symbol.asyncIterator]();

  const results = await Promise.allSettled(Array.from({ length: 6 }, () => iterator.next()));

  expect(results.map((result) => result.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
    'fulfilled',
  ]);
  const fulfilled = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  expect(values(fulfilled)).toEqual(['c1', 'c2', 'c3', 'done', 'done']);
});
