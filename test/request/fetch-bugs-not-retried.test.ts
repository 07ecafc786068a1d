import { describe, expect, test } from 'vitest';
import { CrmConnectionError } from '../../src/index';
import { makeClient, rejection } from '../support/capture';

/* A custom fetch's bug is not a network failure: retried, it would run the bug again and hide it. */

function throwing(error: unknown) {
  let calls = 0;
  const fetch = async (): Promise<Response> => {
    calls += 1;
    throw error;
  };
  return { fetch, calls: () => calls };
}

describe('a custom fetch that throws', () => {
  test('a TypeError that is not a network failure is not retried, and is the cause', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'headers')");
    const { fetch, calls } = throwing(bug);

    const error = await rejection(makeClient({ fetch }).opportunities.get('opp_1'));

    expect(calls()).toBe(1);
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect((error.cause as Error).name).toBe('TypeError');
    expect((error.cause as Error).message).toBe(bug.message);
  });

  test.each([
    'fetch failed',
    'terminated',
    'Failed to fetch',
    'Failed to fetch (crm.example.com)',
    'NetworkError when attempting to fetch resource.',
    'error sending request for url (https://crm.example.com/x): connection refused',
  ])('a TypeError(%j), a network failure as ky tells them, is retried', async (message) => {
    const { fetch, calls } = throwing(new TypeError(message));

    const error = await rejection(makeClient({ fetch, maxRetries: 1 }).opportunities.get('opp_1'));

    expect(calls()).toBe(2);
    expect(error).toBeInstanceOf(CrmConnectionError);
  });
});
