import { describe, expect, test } from 'vitest';
import type { CrmRequestLog } from '../../src/index';
import { memoryStore, type PaceLease, type PaceStore, sharedPaceStore } from '../../src/redis/index';
import { API_KEY, makeClient } from '../support/capture';
import { contactsServer, created, refused, usePacedClock, within } from '../support/paced';

/*
 * A pace store whose answers no server could justify (a Redis whose clock stepped back, a foreign
 * value in the key's hash, a store of the user's): refused, warned of once, the key paced in its
 * process; and a pause another worker wrote, bounded by each worker's own maxRetryAfter. On the
 * fake clock: what the server saw, and what was logged.
 */
usePacedClock();

type Logs = { line: string; entry: CrmRequestLog }[];
const warningsIn = (logs: Logs) => logs.filter(({ entry }) => entry.warning === 'pace-store-unavailable');

/** A memory store whose leases `change` rewrites. */
function rewriting(change: (lease: PaceLease) => PaceLease): PaceStore {
  const inner = memoryStore();
  return sharedPaceStore({
    reserve: async (key, count, intervalMs) => change(await inner.reserve(key, count, intervalMs)),
    refuse: (key, phase, turn, pauseMs) => inner.refuse(key, phase, turn, pauseMs),
    learn: (key, phase, learned) => inner.learn(key, phase, learned),
  });
}

describe('a pace store that answers what no server could', () => {
  for (const [what, change] of [
    ['a wait of an hour before the next turn', (lease: PaceLease) => ({ ...lease, delayMs: 3_600_000 })],
    [
      'a learned rate of 1e-9 a second',
      (lease: PaceLease) => ({ ...lease, learned: { rate: 1e-9, ceiling: 1e-9, at: lease.now } }),
    ],
    [
      'a rate learned an hour ahead of its own clock (its clock stepped back)',
      (lease: PaceLease) => ({ ...lease, learned: { rate: 100, ceiling: 100, at: lease.now + 3_600_000 } }),
    ],
    [
      'a quiet time of a millisecond',
      (lease: PaceLease) => ({ ...lease, learned: { rate: 100, quietMs: 0.001, at: lease.now } }),
    ],
  ] as const) {
    test(`${what}: refused, warned of once, and the key paced in its process: every call placed`, async () => {
      const seen = contactsServer((index) => created(index));
      const logs: Logs = [];
      const crm = makeClient({
        throttle: { mode: 'auto', store: rewriting(change) },
        logger: (line, entry) => logs.push({ line, entry }),
      });

      const job = Promise.all(Array.from({ length: 50 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` })));
      const { settled } = await within(job, 60_000);

      expect(settled).toBe(true);
      expect(seen.filter((request) => request.status === 200)).toHaveLength(50);
      expect(warningsIn(logs)).toHaveLength(1);
      expect(warningsIn(logs)[0]?.line).not.toContain(API_KEY);
    });
  }

  test("another worker's pause longer than this worker's maxRetryAfter does not park it: it waits at most its own", async () => {
    // The server asks for an hour once; worker A waits out up to an hour, worker B a minute.
    const seen = contactsServer((index) => (index === 0 ? refused(3600) : created(index)));
    const store = memoryStore();
    const a = makeClient({ throttle: { mode: 'auto', store }, maxRetryAfter: 3_600_000, logger: () => {} });
    const b = makeClient({ throttle: { mode: 'auto', store }, logger: () => {} });
    a.contacts.create({ email: 'a@x.io' }).catch(() => {});
    await within(new Promise(() => {}), 1000);
    expect(seen.map((request) => request.status)).toEqual([429]);

    const job = Promise.all(Array.from({ length: 5 }, (_, i) => b.contacts.create({ email: `b${i}@x.io` })));
    const { settled, elapsed } = await within(job, 600_000, 1000);

    expect(settled).toBe(true);
    expect(elapsed).toBeLessThanOrEqual(61_000);
  });
});
