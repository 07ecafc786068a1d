import { describe, expect, test, vi } from 'vitest';
import { climbed, Pacers, rateOf, type Ticket } from '../../src/internal/waiting/pacer';
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
  });

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
  });

  test('the ramp after a slow first answer spaces its turns, rather than sending at once those it waited for', async () => {
    // The first request is answered 45 ms late. Its pace (50/s) had the next turns due at 20 and
    // 40 ms: sent together when the answer came, they reached a slow bucket at once and told it
    // nothing, and a 20/s tenant was paced at 15/s for its whole job.
    const seen = contactsServer(created, 45);
    const crm = makeClient({ throttle: 'auto' });

    await settle(Promise.all(Array.from({ length: 6 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` }))));

    const times = seen.map((request) => request.at);
    expect(times).toHaveLength(6);
    // The first turn after the answer goes with it; the next one a turn's time after, not with it.
    // (Later turns may still go two at once: the fake clock moves in steps, and a turn a little late is caught up.)
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(45);
    expect(times[2] as number).toBeGreaterThan(times[1] as number);
  });

  test('a request counts at the time it went, not when its turn was given: a slow bucket is not measured low by a busy start', async () => {
    // W5b's 20/s tenant: the first request's turn is given inside the loop that queues the job's
    // calls, and goes out 90 ms later. Counted at its turn, the bucket looked slower than 17/s.
    expect(await paceAfterBusyStart({ sentAt: 90, reachedAt: 90 })).toBeGreaterThan(19);
  });

  test("the job's first request counts when the server can have seen it: its answer less the shortest round trip", async () => {
    // Handed to fetch at its turn, it opened a connection while the process went on queuing the
    // job's calls, and reached the server 90 ms later: counted at fetch, the 20/s bucket read 13.5/s.
    expect(await paceAfterBusyStart({ sentAt: 0, reachedAt: 90 })).toBeGreaterThan(19);
  });

  test("a job's short first phase whose times agree with its answers is paced at its middle, searched past only after 30 s", () => {
    // W5b, a 20/s bucket of 2: four requests before the pause, the third refused. Climbing to the
    // highest rate they allow (20.8) drained the bucket and cost a second pause in most runs.
    const { rate, ceiling, quietMs } = rateOf([0, 24, 44, 63], [1, 1, 2, 1], 2, false);

    expect(rate).toBeGreaterThan(19);
    expect(rate).toBeLessThan(20.2);
    expect(ceiling).toBe(rate);
    expect(quietMs).toBe(30_000);
    expect(climbed(rate, ceiling, 29_000, quietMs)).toBeLessThan(20);
  });

  test('a refusal early in a phase paced at a known rate (another client, say) is searched past within seconds', () => {
    // 200/s, paced at 199/s after a long phase; refused at the fourth request.
    const times = [0, 5, 10, 15, 20];
    const { rate, ceiling, quietMs } = rateOf(times, [1, 1, 1, 2, 1], 3, true);

    expect(ceiling).toBeLessThan(100);
    expect(quietMs).toBeLessThanOrEqual(1000);
    // Within five seconds without a refusal, the pace is past 199/s again.
    expect(climbed(rate, ceiling, 5000, quietMs)).toBeGreaterThan(199);
  });

  test('a phase whose times disagree with its outcomes (a stall) has its ceiling searched past within seconds', () => {
    // Accepted at once after a refusal-free start, then refused where a bucket of any rate that
    // accepted the first would still hold tokens: the server saw other times than these.
    const times = [0, 10, 20, 30, 40, 40, 40, 40, 40, 40, 40, 40];
    const outcomes = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1];

    const { rate, ceiling, quietMs } = rateOf(times, outcomes, 10, false);

    expect(ceiling).toBeCloseTo(rate * 1.1, 6);
    expect(quietMs).toBeLessThanOrEqual(3000);
    expect(climbed(rate, ceiling, 6000, quietMs)).toBeGreaterThan(ceiling * 1.3);
  });

  test('a phase that said much keeps its pace near its middle, and searches past it only after 30 s', () => {
    // A 200/s bucket of 20 met by a pace climbing past it: 60 turns before it ran dry.
    const times = Array.from({ length: 64 }, (_, i) => i * 4);
    const outcomes = times.map((_, i) => (i < 60 ? 1 : 2));
    const { rate, ceiling, quietMs } = rateOf(times, outcomes, 60, false);

    expect(quietMs).toBe(30_000);
    expect(ceiling).toBeLessThan(rate * 1.02);
    expect(climbed(rate, ceiling, 29_000, quietMs)).toBeLessThan(ceiling);
  });
});

/**
 * A 20/s bucket of 2, driven through a pacer directly, each request answered as it reaches it:
 * the first request is handed to fetch `sentAt` ms after its turn (the pacer is told so) and
 * reaches the server at `reachedAt`; the ramp's requests go at their turns. The pace, in requests
 * a second, of the turns given once the refusal's pause is over.
 */
async function paceAfterBusyStart({ sentAt, reachedAt }: { sentAt: number; reachedAt: number }): Promise<number> {
  const pacer = new Pacers(undefined).of('key', true);
  let tokens = 2;
  let last = Date.now();
  const start = last;
  const answer = (ticket: Ticket) => {
    const now = Date.now();
    tokens = Math.min(2, tokens + ((now - last) / 1000) * 20);
    last = now;
    const dry = tokens < 1;
    if (!dry) tokens -= 1;
    pacer.learned(ticket, dry ? 429 : 200, new Headers(dry ? { 'retry-after': '1' } : {}), 60_000);
  };
  const given: number[] = [];
  const turns = Array.from({ length: 12 }, (_, i) =>
    pacer.turn(false, undefined, undefined).then((ticket) => {
      given.push(Date.now() - start);
      if (i === 0) return ticket;
      pacer.sent(ticket);
      answer(ticket);
      return ticket;
    }),
  );
  const first = await (turns[0] as Promise<Ticket>);
  await vi.advanceTimersByTimeAsync(sentAt);
  pacer.sent(first);
  await vi.advanceTimersByTimeAsync(reachedAt - sentAt);
  answer(first);
  await vi.advanceTimersByTimeAsync(20);
  await vi.advanceTimersByTimeAsync(5000);
  await Promise.all(turns);
  const after = given.filter((at) => at > 1100);
  return ((after.length - 1) * 1000) / ((after.at(-1) as number) - (after[0] as number));
}
