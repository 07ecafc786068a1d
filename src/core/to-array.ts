import { CrmValidationError } from './errors';

/**
 * Every item `items` yields, or the first `max`, as an array; `PagePromise.toArray()`. Stops
 * fetching once it has `max` items.
 */
export async function toArray<T>(
  items: AsyncIterable<T> & PromiseLike<unknown>,
  options: { max?: number | undefined } | undefined,
): Promise<T[]> {
  const { max = Number.POSITIVE_INFINITY } = options ?? {};
  if (typeof max !== 'number' || !(Number.isInteger(max) || max === Number.POSITIVE_INFINITY) || max < 0) {
    throw new CrmValidationError(
      [{ field: 'max', path: ['max'], message: 'Expected an integer >= 0' }],
      'Invalid toArray options',
    );
  }
  const list: T[] = [];
  // Still awaited: a list that fails says so, whatever `max`.
  if (max === 0) await items;
  else for await (const item of items) if (list.push(item) >= max) break;
  return list;
}
