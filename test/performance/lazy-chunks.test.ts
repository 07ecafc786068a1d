import { HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { CrmConnectionError, CrmNotFoundError, CrmServerError } from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';

// As when a browser cannot download the chunk that holds ky: the module fails to load.
vi.mock('../../src/internal/retrier', () => {
  throw new Error('Failed to fetch dynamically imported module');
});

const OPP_PATH = '/integrations/v1/opportunities/:id';

describe('when ky cannot be loaded', () => {
  test('a call whose first attempt succeeds still returns its data', async () => {
    capture('get', OPP_PATH, () => ok({ id: 'opp_1' }));

    await expect(makeClient().opportunities.get('opp_1')).resolves.toEqual({ id: 'opp_1' });
  });

  test('a 404 is reported as CrmNotFoundError with the server’s message, as usual', async () => {
    capture('get', OPP_PATH, () => HttpResponse.json({ message: 'No such opportunity' }, { status: 404 }));

    const error = await makeClient()
      .opportunities.get('opp_1')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toMatchObject({ status: 404, message: expect.stringContaining('No such opportunity') });
  });

  test('a 503 is reported after one attempt instead of being retried', async () => {
    const seen = capture('get', OPP_PATH, () => new Response('busy', { status: 503 }));

    await expect(makeClient().opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmServerError);
    expect(seen).toHaveLength(1);
  });

  test('a network failure is reported as CrmConnectionError', async () => {
    capture('get', OPP_PATH, () => HttpResponse.error());

    await expect(makeClient().opportunities.get('opp_1')).rejects.toBeInstanceOf(CrmConnectionError);
  });
});
