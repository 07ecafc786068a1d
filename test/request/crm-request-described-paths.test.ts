import { describe, expect, test } from 'vitest';
import { CrmClient, type CrmLogger, CrmNotFoundError } from '../../src/index';
import { API_KEY, rejection, TENANT } from '../support/capture';

/*
 * crm.request() to a path the SDK also describes: its data is "unchecked" (client.ts), so the
 * described endpoint's validators must not apply, let alone fail.
 */

const client = (data: unknown, options: ConstructorParameters<typeof CrmClient>[0] = {}) =>
  new CrmClient({
    baseUrl: 'https://crm.test',
    apiKey: API_KEY,
    tenantId: TENANT,
    maxRetries: 0,
    fetch: async () => Response.json({ success: true, data }),
    ...options,
  });

describe('crm.request() to a described list path', () => {
  test.each(['integrations/v1/contacts', 'integrations/v1/activities', '/integrations/v1/contacts'])(
    'GET %s with records the SDK’s schema refuses resolves to the data as sent',
    async (path) => {
      const data = [{ id: 5, note: 'a record of a newer server' }];
      const crm = client(data);
      // Twice: before and after the generated validators have loaded.
      for (let i = 0; i < 2; i++) {
        expect(await crm.request({ method: 'GET', path })).toEqual(data);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  );
});

describe('regressions', () => {
  test('GET of a described record path with data of another shape resolves to it', async () => {
    const crm = client({ anything: true });
    expect(await crm.request({ method: 'GET', path: 'integrations/v1/opportunities/opp_1' })).toEqual({
      anything: true,
    });
    expect(await crm.request({ method: 'POST', path: 'integrations/v1/contacts', body: {} })).toEqual({
      anything: true,
    });
  });

  test('validateResponses: false, a described list path: the data as sent', async () => {
    const data = [{ id: 5 }];
    expect(
      await client(data, { validateResponses: false }).request({ method: 'GET', path: 'integrations/v1/contacts' }),
    ).toEqual(data);
  });
});

describe('a key the caller put in the path', () => {
  test('is masked in the error message as it is in the log line', async () => {
    const lines: string[] = [];
    const logger: CrmLogger = (line) => {
      lines.push(line);
    };
    const crm = client(undefined, {
      logger,
      fetch: async () => Response.json({ success: false }, { status: 404 }),
    });
    const error = await rejection(crm.request({ method: 'GET', path: `integrations/v1/keys/${API_KEY}` }));
    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(lines.join('\n')).not.toContain(API_KEY);
    expect(error.message).not.toContain(API_KEY);
  });
});
