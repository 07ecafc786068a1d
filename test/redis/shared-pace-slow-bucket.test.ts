import { describe, expect, test, vi } from 'vitest';
import { Pacers, type Ticket } from '../../src/internal/waiting/pacer';
import { memoryStore } from '../../src/redis/index';
import { bucket, type Sent, sharedJob, usePacedClock, worstExcess } from '../support/paced';

/*
 * Four workers sharing a pace through a store against a slow bucket (20/s, a burst of 2), on the
 * fake clock: W6 at 20/s (bench/w5.mjs), where every refusal costs the job a pause of a second.
 */
usePacedClock();

const KEY = 'sk_slow_9f8e7d6c5b4a39281706';

describe('a shared pace on a slow bucket', () => {
  test('the turns another worker leases during a pause, before the phase that ended is learned, are not spread at the pace that ran the bucket dry', async () => {
    const store = memoryStore();
    const workers = Array.from({ length: 3 }, () => new Pacers(undefined).of(KEY, store));
    /** Each worker's requests, as they go: its pacer's ticket, when it went, and an answer to give. */
    const sent: { worker: number; ticket: Ticket; at: number }[] = [];
    workers.forEach((pacer, worker) => {
      for (let i = 0; i < 20; i++)
        void pacer.turn(false, undefined, undefined).then((ticket) => {
          pacer.sent(ticket);
          sent.push({ worker, ticket, at: performance.now() });
        });
    });
    const answer = (i: number, status: number) => {
      const { worker, ticket } = sent[i] as (typeof sent)[number];
      workers[worker]?.learned(ticket, status, new Headers(status === 429 ? { 'retry-after': '1' } : {}), 60_000);
    };
    // The workers' first requests (their probes) are accepted: their ramps run.
    await vi.advanceTimersByTimeAsync(0);
    answer(0, 201);
    await vi.advanceTimersByTimeAsync(30);
    for (let i = 1; i < sent.length; i++) answer(i, 201);
    // The ramp: a few turns more, each accepted, until worker 0 has sent two more; the first of those
    // is refused while the second is still on its way (its rate is found when that one is answered).
    let from = sent.length;
    while (sent.slice(from).filter((s) => s.worker === 0).length < 2) await vi.advanceTimersByTimeAsync(1);
    const [refused, onItsWay] = sent.map((_, i) => i).filter((i) => i >= from && sent[i]?.worker === 0);
    for (let i = from; i < sent.length; i++) if (i !== refused && i !== onItsWay) answer(i, 201);
    answer(refused as number, 429);
    // The other workers send the turns they hold and lease the next ones, in the phase the refusal
    // began, before worker 0 has heard from its request on its way.
    from = sent.length;
    await vi.advanceTimersByTimeAsync(100);
    for (let i = from; i < sent.length; i++) answer(i, 201);
    answer(onItsWay as number, 201);
    await vi.advanceTimersByTimeAsync(2000);
    const afterPause = sent.filter((s) => s.at >= 1000);
    const first = afterPause.slice(0, 10).map((s) => s.at);
    expect(first).toHaveLength(10);
    // After the pause, the bucket the rate found stands for (a burst of a tenth of a second of it)
    // takes every one of the first ten: those leased before it was found among them. (They went
    // at the ramp's 60/s: four in 52 ms.)
    const { learned } = await store.reserve(KEY, 1, 0);
    const rate = learned?.rate as number;
    expect(worstExcess(first, rate, Math.max(1, rate / 10))).toBeLessThanOrEqual(0);
  });

  test('a rate found well below the pace of the phase that found it is kept: the pace does not search past it a second later, into one more refusal', async () => {
    const store = memoryStore();
    // What a ramp found too high (others' refusals not heard yet): 26/s, against a bucket of 20/s.
    await store.learn(KEY, 0, { rate: 26, ceiling: 26, quietMs: 30_000 });
    const sent = sharedJob(store, KEY, 4, 50, bucket(20, 2));
    await vi.advanceTimersByTimeAsync(30_000);
    const refused = sent.filter((s) => !s.accepted);
    expect(sent.filter((s) => s.accepted)).toHaveLength(200);
    // The pace at 26/s is refused once (its phase's first refusals, heard together); the rate found then holds.
    const pauses = refused.filter((s, i) => i === 0 || s.at - (refused[i - 1] as Sent).at > 500);
    expect(pauses).toHaveLength(1);
  });
});
