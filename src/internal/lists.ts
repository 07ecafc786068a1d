import type { CrmError, CrmValidationError } from '../core/errors';

// What few list calls need, loaded on demand with the escape hatches (hatches.ts): toArray(), and
// the error of a loop that runs away.

/**
 * Every item `items` yields, or the first `max`, as an array; `PagePromise.toArray()`. Stops
 * fetching once it has `max` items.
 */
export async function toArray<T>(
  items: AsyncIterable<T> & PromiseLike<unknown>,
  options: { max?: number | undefined } | undefined,
  ValidationError: typeof CrmValidationError,
): Promise<T[]> {
  const { max = Number.POSITIVE_INFINITY } = options ?? {};
  if (typeof max !== 'number' || !(Number.isInteger(max) || max === Number.POSITIVE_INFINITY) || max < 0) {
    throw new ValidationError(
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

/** Why a loop stopped reading a list whose server kept reporting more pages (`PagePromise.pages()`). */
export function pageBoundError(
  bound: number,
  unreported: boolean,
  most: boolean,
  ErrorClass: typeof CrmError,
): CrmError {
  const why = unreported
    ? `${bound} pages when its first page reports neither pages nor total`
    : most
      ? `${bound} pages`
      : 'twice the pages its first page reported, and ten';
  return new ErrorClass(
    `Stopped reading a list after ${bound} pages, though the server reports more: a list is read for at most ${why}`,
  );
}
