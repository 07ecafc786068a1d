import { describe, expect, test } from 'vitest';
import { makeClient } from '../support/capture';
import { contactsServer, created, refused, type Seen, settle, usePacedClock } from '../support/paced';

usePacedClock();

/** A token bucket of `rate` a second holding `burst`, answering 429 with Retry-After when dry; `glitch(index)` refuses besides. */
function bucket(rate: number, burst: number, glitch: (index: number) => boolean = () => false) {
  let tokens = burst;
  let last = Date.now();
  return (index: number) => {
    const now = Date.now();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
    last = now;
    if (tokens < 1) return refused(Math.max(1, Math.ceil((1 - tokens) / rate)));
    if (glitch(index)) return refused(1);
    tokens -= 1;
    return created(index);
  };
}

/** Accepted requests a second between `from` and `to` (fake ms). */
const paceOf = (seen: Seen[], from: number, to: number) =>
  (seen.filter((request) => request.status === 200 && request.at >= from && request.at < to).length * 1000) /
  (to - from);

describe("throttle: 'auto' never settles low", () => {
  test('a 20/s bucket of 2 is measured as well as a fast one: every record placed once, then its pace', async () => {
    const seen = contactsServer(bucket(20, 2), 20);
    const crm = makeClient({ throttle: 'auto' });

    await settle(Promise.all(Array.from({ length: 300 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` }))));

    expect(seen.filter((request) => request.status === 200)).toHaveLength(300);
    const refusals = seen.filter((request) => request.status === 429);
    // A phase or two to learn it, not a refusal every few seconds.
    expect(refusals.length).toBeLessThanOrEqual(4);
    const last = refusals.at(-1) as Seen;
    const end = (seen.at(-1) as Seen).at;
    // After the last pause: close to the bucket's pace (above 90%).
    expect(paceOf(seen, last.at + 1000, end)).toBeGreaterThan(20 * 0.9);
  }, 30_000);

  test('a refusal in the middle of a job costs one pause, not a lower pace for the rest of it', async () => {
    // A 100/s bucket, and one request refused on a whim (another client of the key, say) once the
    // pace is learned.
    let whim = -1;
    const seen = contactsServer(
      bucket(100, 10, (index) => index === whim),
      10,
    );
    const crm = makeClient({ throttle: 'auto' });
    const job = Promise.all(Array.from({ length: 2000 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` })));
    job.catch(() => {});
    await settle(new Promise((resolve) => setTimeout(resolve, 6000)), 6000);
    const before = paceOf(seen, Date.now() - 3000, Date.now());
    whim = seen.length + 5;
    await settle(job);

    const refusal = seen[whim] as Seen;
    expect(refusal.status).toBe(429);
    expect(seen.filter((request) => request.status === 200)).toHaveLength(2000);
    // After its pause, the key goes on at the pace it had before.
    expect(paceOf(seen, refusal.at + 1500, refusal.at + 6500)).toBeGreaterThan(before * 0.95);
  }, 30_000);
});
