import { HttpResponse } from 'msw';
import { describe, expect, test } from 'vitest';
import { CrmApiError, CrmBadRequestError, CrmClient, CrmValidationError } from '../../src/index';
import { capture, makeClient, ok, rejection } from '../support/capture';

describe('CrmApiError.code and details', () => {
  test("carry the server's error.code and error.details", async () => {
    capture(
      'post',
      '/integrations/v1/opportunities',
      HttpResponse.json(
        {
          success: false,
          error: { code: 'INVALID_REFERENCE', message: 'No such account', details: [{ field: 'accountId' }] },
        },
        { status: 400 },
      ),
    );

    const error = await rejection(
      makeClient({ maxRetries: 0 }).opportunities.create({ name: 'N', accountId: 'acc_x' }),
    );

    expect(error).toBeInstanceOf(CrmBadRequestError);
    expect(error).toMatchObject({ code: 'INVALID_REFERENCE', details: [{ field: 'accountId' }] });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'CrmBadRequestError',
      status: 400,
      code: 'INVALID_REFERENCE',
      details: [{ field: 'accountId' }],
    });
  });

  test.each([
    ['a body without error', { message: 'nope' }],
    ['an error that is a string', { error: 'INVALID' }],
    ['a code that is not a string', { error: { code: 42 } }],
    ['a text body', 'Bad Gateway'],
  ])('are undefined for %s', async (_name, body) => {
    const error = new CrmApiError('x', { status: 400, body, headers: new Headers() });

    expect(error.code).toBeUndefined();
    expect(error.details).toBeUndefined();
  });
});

describe('validation messages', () => {
  test('say Required for a missing field, and never repeat their prefix', async () => {
    const error = await rejection(makeClient().opportunities.create({} as never));

    expect(error).toBeInstanceOf(CrmValidationError);
    expect(error.message).toBe('Invalid input: name: Required; accountId: Required');
  });

  test('of a wrong type name what was expected and received, once', async () => {
    const error = await rejection(makeClient().contacts.create({ phone: 5 } as never));

    expect(error.message).toBe('Invalid input: phone: Expected string, received number');
    expect(error.message.match(/Invalid input/g)).toHaveLength(1);
  });

  test.each([
    ['crm.example.com', 'Must start with http:// or https://'],
    ['localhost:3000', 'Must start with http:// or https://'],
    ['ftp://crm.example.com', 'Must start with http:// or https://'],
    ['https:///path', 'Not a valid URL'],
    // Spaces and line breaks around it are trimmed first: what is said is of the URL inside them.
    [' ftp://crm.example.com\n', 'Must start with http:// or https://'],
    [' https:///path ', 'Not a valid URL'],
    ['\thttps://user:secret@crm.example.com ', 'Must not contain a user name or password: pass apiKey or adminToken'],
    ['  ', 'Must start with http:// or https://'],
  ])('say what is wrong with the baseUrl %s', (baseUrl, message) => {
    expect(() => new CrmClient({ baseUrl, apiKey: 'k', tenantId: 't' })).toThrow(
      `Invalid CrmClient options: baseUrl: ${message}`,
    );
  });
});

describe('withResponse()', () => {
  test('gives the request id the errors read, beside the data and the response', async () => {
    capture(
      'get',
      '/integrations/v1/opportunities/opp_1',
      ok({ id: 'opp_1' }, {}, { headers: { 'request-id': 'req_7' } }),
    );

    const { data, response, requestId } = await makeClient().opportunities.get('opp_1').withResponse();

    expect(data).toEqual({ id: 'opp_1' });
    expect(response.headers.get('request-id')).toBe('req_7');
    expect(requestId).toBe('req_7');
  });

  test('gives an undefined request id when the server sent none', async () => {
    capture('get', '/integrations/v1/opportunities/opp_1', ok({ id: 'opp_1' }));

    const { requestId } = await makeClient().opportunities.get('opp_1').withResponse();

    expect(requestId).toBeUndefined();
  });
});
