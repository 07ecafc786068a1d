import { HttpResponse } from 'msw';
import { describe, expect, test } from 'vitest';
import { CrmAuthenticationError } from '../../src/index';
import { API_KEY, capture, makeClient, rejection } from '../support/capture';

/* A key used with another tenant's id reads as a wrong key unless the error names the tenant. */

const unauthorized = () => HttpResponse.json({ success: false, error: { message: 'Unauthorized' } }, { status: 401 });

describe('a 401 to a call with an API key', () => {
  test('names the tenant the key was refused for, and the server words after it', async () => {
    capture('get', '/integrations/v1/opportunities/opp_1', unauthorized);
    const crm = makeClient().withTenant('acme');

    const error = await rejection(crm.opportunities.get('opp_1'));

    expect(error).toBeInstanceOf(CrmAuthenticationError);
    expect(error.message).toBe(
      "401 from GET /integrations/v1/opportunities/opp_1: the API key was refused for tenant 'acme': Unauthorized",
    );
    expect(error.message).not.toContain(API_KEY);
  });

  test('says nothing of a tenant for the administrator token, which belongs to none', async () => {
    capture('get', '/integrations/api-key', unauthorized);

    const error = await rejection(makeClient().apiKey.status());

    expect(error.message).toBe('401 from GET /integrations/api-key: Unauthorized');
  });
});
