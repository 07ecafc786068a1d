import { HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { CrmConnectionError, CrmNotFoundError, CrmResponseValidationError } from '../../src/index';
import { API_KEY, capture, makeClient, ok } from '../support/capture';

// As when a browser cannot download the chunk that reports failures: the module fails to load.
vi.mock('../../src/internal/reporting', () => {
  throw new Error('Failed to fetch dynamically imported module');
});

const OPP_PATH = '/integrations/v1/opportunities/:id';

describe('when the reporter cannot be loaded', () => {
  test('a call that succeeds returns its data', async () => {
    capture('get', OPP_PATH, () => ok({ id: 'opp_1' }));

    await expect(makeClient().opportunities.get('opp_1')).resolves.toEqual({ id: 'opp_1' });
  });

  test('a 404 keeps its class and status, and none of what the server said, which could not be masked', async () => {
    capture('get', OPP_PATH, () => HttpResponse.json({ message: `no such key ${API_KEY}` }, { status: 404 }));

    const error = await makeClient({ maxRetries: 0 })
      .opportunities.get('opp_1')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toMatchObject({ status: 404, message: '404 from GET /integrations/v1/opportunities/opp_1' });
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  test('a body that is not an envelope is a CrmResponseValidationError, and a network failure a CrmConnectionError', async () => {
    capture('get', OPP_PATH, (_, index) => (index === 0 ? HttpResponse.json({ rows: [] }) : HttpResponse.error()));
    const crm = makeClient({ maxRetries: 0 });

    await expect(crm.opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmResponseValidationError);
    await expect(crm.opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmConnectionError);
  });

  test('a logger gets no line rather than one that could not be masked', async () => {
    capture('get', OPP_PATH, () => ok({ id: 'opp_1' }));
    const lines: string[] = [];

    await makeClient({ logger: (line) => lines.push(line) }).opportunities.get('opp_1');

    expect(lines).toEqual([]);
  });
});
