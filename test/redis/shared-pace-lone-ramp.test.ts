import { expect, test, vi } from 'vitest';
import { memoryStore } from '../../src/redis/index';
import { bucket, type Sent, sharedJob, usePacedClock } from '../support/paced';

/*
 * While no rate is known, the worker given a phase's first turn ramps alone and the others stand
 * by, asking for one turn a few times a second (stand-by.ts). Standing by must not
 * outlast the ramp: a ramping worker whose turns stop (its calls done, its process gone) hands the
 * ramp over to the others.
 */
usePacedClock();

const KEY = 'sk_lone_1f2e3d4c5b6a7f8e9d0c';

/** Runs the fake clock in 100 ms steps until `count` requests of `jobs` were accepted (at most a minute); the seconds it took. */
async function accepted(jobs: Sent[][], count: number): Promise<number> {
  let elapsed = 0;
  while (jobs.flat().filter((s) => s.accepted).length < count && elapsed < 60_000) {
    await vi.advanceTimersByTimeAsync(100);
    elapsed += 100;
  }
  return elapsed / 1000;
}

test('a worker given the ramp with too few calls hands it over: the others ramp once its turns stop', async () => {
  const store = memoryStore();
  const take = bucket(200, 20);
  // The first to ask is given the phase's first turn: the ramp is this worker's, and it has 3 calls.
  const few = sharedJob(store, KEY, 1, 3, take);
  await vi.advanceTimersByTimeAsync(1);
  const many = sharedJob(store, KEY, 3, 200, take);

  const seconds = await accepted([few, many], 603);

  expect(few.filter((s) => s.accepted)).toHaveLength(3);
  // Standing by for ever, the three would send one request each every 400 ms: 80 s. Handed over
  // at the first ask that finds the ramp stopped, the job takes its ramp, a pause and 2.9 s at
  // the bucket's rate.
  expect(seconds).toBeLessThanOrEqual(5.5);
});

test("a worker joining a phase whose ramp stopped long ago (an earlier job's, too small to be refused) ramps at once: it does not stand by", async () => {
  const store = memoryStore();
  const take = bucket(200, 20);
  const first = sharedJob(store, KEY, 1, 30, take);
  expect(await accepted([first], 30)).toBeLessThan(2);
  expect(first.every((s) => s.accepted)).toBe(true);
  // A minute later, within the 15 minutes the store keeps the phase: turn 30 of it, no rate known.
  await vi.advanceTimersByTimeAsync(60_000);
  const next = sharedJob(store, KEY, 1, 30, take);
  await accepted([next], 30);

  // Standing by, its second request would have waited 400 ms for its next ask; ramping, it goes
  // at the ramp's pace from its first answer.
  const second = next[1]?.at as number;
  expect(second - (next[0]?.at as number)).toBeLessThan(100);
});
