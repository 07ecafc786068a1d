import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { makeClient } from '../support/capture';

/* fetchOptions: what fetch takes that the SDK does not send (a proxy's dispatcher, keepalive), on every attempt. */

/** Stands for undici's ProxyAgent: fetch receives it as it was given. */
const dispatcher = { dispatch: () => true, name: 'a proxy agent' };

function recordingFetch(statuses: number[]) {
  const calls: { input: RequestInfo | URL; init: RequestInit | undefined }[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ input, init });
    const status = statuses[calls.length - 1] ?? 200;
    return Response.json(status === 200 ? { success: true, data: { id: 'opp_1', name: 'x' } } : {}, { status });
  };
  return { fetch, calls };
}

describe('fetchOptions', () => {
  test('reaches fetch on the first attempt and on a retry, with the method, headers and signal the SDK sets', async () => {
    const { fetch, calls } = recordingFetch([503, 200]);
    const crm = makeClient({ fetch, fetchOptions: { dispatcher, keepalive: true }, maxRetries: 1 });

    await crm.opportunities.get('opp_1');

    expect(calls).toHaveLength(2);
    const [first, retry] = calls as [(typeof calls)[number], (typeof calls)[number]];
    expect(first.init).toMatchObject({ dispatcher, keepalive: true, method: 'GET', redirect: 'manual' });
    expect(first.init?.signal).toBeInstanceOf(AbortSignal);
    expect(first.init?.headers).toHaveProperty('x-api-key');
    // The retry goes through ky, which hands fetch a Request and what a Request does not hold.
    expect(retry.init).toMatchObject({ dispatcher });
    expect((retry.input as Request).keepalive).toBe(true);
    expect((retry.input as Request).method).toBe('GET');
  });

  test.each(['method', 'body', 'headers', 'signal', 'redirect'])('refuses %s, which the SDK sets', (name) => {
    expect(() => makeClient({ fetchOptions: { [name]: 'x' } as never })).toThrow(CrmValidationError);
  });

  test('refuses fetchOptions that are not an object', () => {
    expect(() => makeClient({ fetchOptions: 'keepalive' as never })).toThrow(CrmValidationError);
  });
});
