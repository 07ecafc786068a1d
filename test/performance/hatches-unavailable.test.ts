import { describe, expect, test, vi } from 'vitest';
import { CrmError, CrmValidationError } from '../../src/index';
import { captureAll, makeClient, rejection } from '../support/capture';

// As when a browser cannot download the chunk of what few calls need (PERFORMANCE.md, "Chunks loaded on demand").
vi.mock('../../src/internal/hatches', () => {
  throw new Error('Failed to fetch dynamically imported module');
});

describe('when the chunk of crm.request(), extraQuery and extraBody cannot be loaded', () => {
  test('crm.request() rejects with a CrmError whose cause is the failure, and sends nothing', async () => {
    const seen = captureAll();

    const error = await rejection(makeClient().request({ method: 'GET', path: 'integrations/v1/widgets' }));

    expect(error).toBeInstanceOf(CrmError);
    expect(error.message).toBe('Could not load part of the SDK');
    expect(error.cause).toBeInstanceOf(Error);
    expect(seen).toEqual([]);
  });

  test('a call with extraQuery rejects with a CrmError and sends nothing', async () => {
    const seen = captureAll();

    const error = await rejection(makeClient().opportunities.get('opp_1', { extraQuery: { view: 'full' } }));

    expect(error).toBeInstanceOf(CrmError);
    expect(error).not.toBeInstanceOf(CrmValidationError);
    expect(seen).toEqual([]);
  });
});
