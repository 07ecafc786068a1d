import { describe, expect, test, vi } from 'vitest';
import { CrmNotFoundError } from '../../src/index';
import { capture, makeClient, ok, rejection } from '../support/capture';
import { record } from '../support/tracing-channels';

// As when a browser-like runtime with diagnostics_channel cannot download the tracing chunk.
vi.mock('../../src/internal/tracing', () => {
  throw new Error('Failed to fetch dynamically imported module');
});

describe('when the tracing chunk cannot be loaded, calls are made all the same, untraced', () => {
  test('a success and a failure, with a subscriber waiting', async () => {
    capture('get', '/integrations/v1/opportunities/opp_1', ok({ id: 'opp_1', name: 'Deal', accountId: 'acc_1' }));
    capture('get', '/integrations/v1/opportunities/missing', () => Response.json({ success: false }, { status: 404 }));
    const { events } = record();
    const crm = makeClient({ maxRetries: 0 });

    await expect(crm.opportunities.get('opp_1')).resolves.toMatchObject({ id: 'opp_1' });
    expect(await rejection(crm.opportunities.get('missing'))).toBeInstanceOf(CrmNotFoundError);

    expect(events).toEqual([]);
  });
});
