import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { capture, makeClient, ok, rejection } from '../support/capture';

/** Three pages of two contacts each; records which pages were asked for. */
function threePages() {
  return capture('get', '/integrations/v1/contacts', (request) => {
    const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
    return ok([{ id: `c${2 * page - 1}` }, { id: `c${2 * page}` }], { pagination: { page, pages: 3, limit: 2 } });
  });
}

describe('list().toArray()', () => {
  test('gives every record of every page', async () => {
    const seen = threePages();

    const contacts = await makeClient().contacts.list({ limit: 2 }).toArray();

    expect(contacts.map((contact) => contact.id)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    expect(seen).toHaveLength(3);
  });

  test('gives the first max records and asks for no page past them', async () => {
    const seen = threePages();

    const contacts = await makeClient().contacts.list({ limit: 2 }).toArray({ max: 3 });

    expect(contacts.map((contact) => contact.id)).toEqual(['c1', 'c2', 'c3']);
    expect(seen).toHaveLength(2);
  });

  test('with max 0 gives no record, but still rejects when the list fails', async () => {
    threePages();
    expect(await makeClient().contacts.list().toArray({ max: 0 })).toEqual([]);

    const error = await rejection(makeClient().contacts.list({ limit: 0 }).toArray({ max: 0 }));
    expect(error).toBeInstanceOf(CrmValidationError);
  });

  test.each([[-1], [1.5], [Number.NaN], ['3']])('refuses max %s with CrmValidationError', async (max) => {
    threePages();

    const error = await rejection(
      makeClient()
        .contacts.list()
        .toArray({ max: max as number }),
    );

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.message).toBe('Invalid toArray options: max: Expected an integer >= 0');
  });
});
