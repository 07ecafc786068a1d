import { describe, expect, test } from 'vitest';
import { endpoints } from '../../src/endpoints';
import { CrmValidationError } from '../../src/index';
import { capture, captureAll, makeClient, ok, rejection, TENANT } from '../support/capture';
import { mswPath } from '../support/endpoint-paths';

const CONTACT = { id: 'con_1', email: 'a@x.io' };

describe('extraQuery and extraBody send what the SDK does not describe yet', () => {
  test('extraQuery adds parameters after the checked ones, and its value wins over one the call also sends', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), ok([CONTACT], { pagination: { page: 1, pages: 1 } }));

    await makeClient().contacts.list(
      { status: 'active', limit: 50 },
      { extraQuery: { updatedSince: '2026-11-01T00:00:00Z', limit: 75, tag: ['a', 'b'] } },
    );

    expect(seen[0]?.url.search).toBe(
      `?tenantId=${TENANT}&status=active&updatedSince=2026-11-01T00%3A00%3A00Z&limit=75&tag=a&tag=b`,
    );
  });

  test('extraQuery goes with every page a loop asks for', async () => {
    const seen = capture('get', mswPath(endpoints.listContacts), (request) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
      return ok([{ id: `con_${page}` }], { pagination: { page, pages: 2, limit: 1 } });
    });

    const ids: string[] = [];
    for await (const contact of makeClient().contacts.list({ limit: 1 }, { extraQuery: { view: 'full' } })) {
      ids.push(contact.id);
    }

    expect(ids).toEqual(['con_1', 'con_2']);
    expect(seen.map((request) => request.url.searchParams.get('view'))).toEqual(['full', 'full']);
  });

  test('extraBody is merged into the JSON body after the tenant and the checked fields', async () => {
    const seen = capture('post', mswPath(endpoints.createContact), ok(CONTACT));

    await makeClient().contacts.create(
      { email: 'a@x.io', status: 'active' },
      { extraBody: { loyaltyTier: 'gold', status: 'vip' } },
    );

    expect(seen[0]?.body).toEqual({ tenantId: TENANT, email: 'a@x.io', status: 'vip', loyaltyTier: 'gold' });
  });

  test('extraBody gives a call without a body of its own a JSON body', async () => {
    const seen = capture('post', mswPath(endpoints.generateApiKey), ok({ apiKey: 'new' }));

    await makeClient().apiKey.generate({ extraBody: { label: 'ci' } });

    expect(seen[0]?.body).toEqual({ label: 'ci' });
    expect(seen[0]?.headers.get('content-type')).toBe('application/json');
  });

  test.each([
    ['tenantId in extraQuery', { extraQuery: { tenantId: 'other' } }, 'extraQuery.tenantId'],
    ['tenantId in extraBody', { extraBody: { tenantId: 'other' } }, 'extraBody.tenantId'],
    ['an object as a query value', { extraQuery: { filter: { a: 1 } } }, 'extraQuery.filter'],
    ['an array as extraQuery', { extraQuery: ['a'] }, 'extraQuery'],
    ['null as extraBody', { extraBody: null }, 'extraBody'],
    ['a string as extraQuery', { extraQuery: 'a=1' }, 'extraQuery'],
  ])('refuses %s with CrmValidationError and sends nothing', async (_name, options, field) => {
    const seen = captureAll();

    const error = await rejection(makeClient().contacts.create({ email: 'a@x.io' }, options as never));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((issue) => issue.field)).toEqual([field]);
    expect(error.message).toMatch(/^Invalid request options: /);
    expect(seen).toEqual([]);
  });

  test('refuses extraBody on a GET, which sends no body, and sends nothing', async () => {
    const seen = captureAll();

    const error = await rejection(makeClient().opportunities.get('opp_1', { extraBody: { a: 1 } }));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.message).toBe('Invalid request options: extraBody: Not accepted: a GET request sends no body');
    expect(seen).toEqual([]);
  });

  test('withOptions() does not take them: they belong to one call', () => {
    expect(() => makeClient().withOptions({ extraQuery: { a: 1 } } as never)).toThrow(CrmValidationError);
  });
});
