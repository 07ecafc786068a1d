import { HttpResponse } from 'msw';
import { describe, expect, test, vi } from 'vitest';
import { CrmConnectionError, CrmNotFoundError } from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';

// Guards "One bundle, ky on demand" (PERFORMANCE.md): as when a browser cannot download the chunk
// that holds ky, the module fails to load; a retry is then sent with fetch.
const loads = vi.hoisted(() => ({ tried: 0 }));
vi.mock('../../src/internal/exchange/ky', () => {
  loads.tried += 1;
  throw new Error('Failed to fetch dynamically imported module');
});

const OPP_PATH = '/integrations/v1/opportunities/:id';

describe('when ky cannot be loaded', () => {
  test('a call whose first attempt succeeds returns its data, and ky is not even asked for', async () => {
    const before = loads.tried;
    capture('get', OPP_PATH, () => ok({ id: 'opp_1' }));

    await expect(makeClient().opportunities.get('opp_1')).resolves.toEqual({ id: 'opp_1' });
    expect(loads.tried).toBe(before);
  });

  test('a 503 is retried with fetch, and the retry returns the data', async () => {
    const seen = capture('get', OPP_PATH, (_request, index) =>
      index === 0 ? new Response('busy', { status: 503, headers: { 'retry-after': '0' } }) : ok({ id: 'opp_1' }),
    );

    await expect(makeClient().opportunities.get('opp_1')).resolves.toEqual({ id: 'opp_1' });
    expect(seen).toHaveLength(2);
    expect(loads.tried).toBeGreaterThan(0);
  });

  test('a 404 is reported as CrmNotFoundError with the server’s message, as usual', async () => {
    capture('get', OPP_PATH, () => HttpResponse.json({ message: 'No such opportunity' }, { status: 404 }));

    const error = await makeClient()
      .opportunities.get('opp_1')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmNotFoundError);
    expect(error).toMatchObject({ status: 404, message: expect.stringContaining('No such opportunity') });
  });

  test('a network failure is retried with fetch and then reported as CrmConnectionError', async () => {
    const seen = capture('get', OPP_PATH, () => HttpResponse.error());

    await expect(makeClient().opportunities.get('opp_1', { maxRetries: 1 })).rejects.toBeInstanceOf(CrmConnectionError);
    expect(seen).toHaveLength(2);
  });
});
