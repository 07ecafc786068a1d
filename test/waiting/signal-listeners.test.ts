import { getEventListeners } from 'node:events';
import { describe, expect, test } from 'vitest';
import { CrmAbortError, CrmClient } from '../../src/index';
import { Queue } from '../../src/internal/waiting/queue';
import { hang, nextTurn, okOpportunity } from '../support/waits';

// Cancelling many queued calls takes linear time because no queued call adds a listener of its
// own to the signal it waits on, and none scans a queue to leave it (bench, "abort 100,000").

describe('calls waiting on one signal', () => {
  test('add one listener to it between them, however many wait, and remove it once none waits', async () => {
    const release: (() => void)[] = [];
    const crm = new CrmClient({
      baseUrl: 'http://waits.invalid',
      apiKey: 'key_1',
      tenantId: 'tenant_1',
      maxConcurrency: 1,
      fetch: () =>
        new Promise<Response>((resolve) => {
          release.push(() => resolve(okOpportunity()));
        }),
    });
    const controller = new AbortController();
    const calls = Array.from({ length: 500 }, () => crm.opportunities.get('opp_1', { signal: controller.signal }));
    await nextTurn();

    // The one call on the wire has its own (fetch's); the 499 queued share one.
    expect(release).toHaveLength(1);
    expect(getEventListeners(controller.signal, 'abort').length).toBeLessThanOrEqual(3);

    while (release.length > 0) {
      release.shift()?.();
      await nextTurn();
    }
    await Promise.all(calls);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  test('all leave at one abort, each with CrmAbortError, and only the call on the wire was sent', async () => {
    let sent = 0;
    const crm = new CrmClient({
      baseUrl: 'http://waits.invalid',
      apiKey: 'key_1',
      tenantId: 'tenant_1',
      maxConcurrency: 1,
      fetch: (_input, init) => {
        sent += 1;
        return hang(init);
      },
    });
    const controller = new AbortController();
    const calls = Array.from({ length: 500 }, () => crm.opportunities.get('opp_1', { signal: controller.signal }));
    await nextTurn();
    controller.abort();

    const results = await Promise.allSettled(calls);
    expect(results.every((result) => result.status === 'rejected' && result.reason instanceof CrmAbortError)).toBe(
      true,
    );
    expect(sent).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('the waiting queue', () => {
  test('keeps its order, takes a waiter from the middle, the front or the back, and ignores one removed twice', () => {
    const queue = new Queue<string>();
    const a = queue.add('a');
    const b = queue.add('b');
    queue.add('c');
    const first = queue.add('first', true);

    queue.remove(b);
    queue.remove(b);
    queue.remove(first);
    queue.remove(a);

    expect(queue.size).toBe(1);
    expect(queue.shift()).toBe('c');
    expect(queue.shift()).toBeUndefined();
    expect(queue.size).toBe(0);
  });
});
