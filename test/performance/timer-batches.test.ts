import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { TimerBatches } from '../../src/internal/timer-batches';

// Only the timers are faked, as many test suites do: the queue must not depend on a clock.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  vi.useRealTimers();
});

const nextTurn = () => vi.advanceTimersByTimeAsync(0);

test('a call is aborted when its timeout passes, and not a millisecond before', async () => {
  const timeouts = new TimerBatches();
  const call = new AbortController();
  timeouts.start(call, 100);

  await vi.advanceTimersByTimeAsync(99);
  expect(call.signal.aborted).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(call.signal.aborted).toBe(true);
});

test('calls started in the same turn share one timer, and each is aborted at its timeout', async () => {
  const timeouts = new TimerBatches();
  const calls = Array.from({ length: 200 }, () => new AbortController());
  for (const call of calls) timeouts.start(call, 100);

  expect(vi.getTimerCount()).toBe(1);
  await vi.advanceTimersByTimeAsync(100);
  expect(calls.every((call) => call.signal.aborted)).toBe(true);
});

test('a call started in a later turn keeps its whole timeout', async () => {
  const timeouts = new TimerBatches();
  const first = new AbortController();
  const later = new AbortController();
  timeouts.start(first, 100);
  await vi.advanceTimersByTimeAsync(60);
  timeouts.start(later, 100);

  await vi.advanceTimersByTimeAsync(40);
  expect(first.signal.aborted).toBe(true);
  expect(later.signal.aborted).toBe(false);
  await vi.advanceTimersByTimeAsync(60);
  expect(later.signal.aborted).toBe(true);
});

test('a call started after the turn of an earlier one gets a timer of its own', async () => {
  const timeouts = new TimerBatches();
  timeouts.start(new AbortController(), 100);
  await nextTurn();
  timeouts.start(new AbortController(), 100);

  expect(vi.getTimerCount()).toBe(2);
});

test('calls with different timeouts in the same turn are each aborted at their own', async () => {
  const timeouts = new TimerBatches();
  const short = new AbortController();
  const long = new AbortController();
  const alsoShort = new AbortController();
  timeouts.start(short, 50);
  timeouts.start(long, 100);
  timeouts.start(alsoShort, 50);

  await vi.advanceTimersByTimeAsync(50);
  expect([short.signal.aborted, long.signal.aborted, alsoShort.signal.aborted]).toEqual([true, false, true]);
  await vi.advanceTimersByTimeAsync(50);
  expect(long.signal.aborted).toBe(true);
});

test('a call that is over is not aborted, and a batch whose calls are all over leaves no timer', async () => {
  const timeouts = new TimerBatches();
  const calls = [new AbortController(), new AbortController()];
  const batches = calls.map((call) => timeouts.start(call, 100));

  for (const batch of batches) timeouts.end(batch);
  expect(vi.getTimerCount()).toBe(0);
  await vi.advanceTimersByTimeAsync(1_000);
  expect(calls.map((call) => call.signal.aborted)).toEqual([false, false]);
});

test('the calls of a batch that are not over are still aborted when one of them ends', async () => {
  const timeouts = new TimerBatches();
  const done = new AbortController();
  const waiting = new AbortController();
  const batch = timeouts.start(done, 100);
  timeouts.start(waiting, 100);

  timeouts.end(batch);
  await vi.advanceTimersByTimeAsync(100);
  expect(waiting.signal.aborted).toBe(true);
});

test('ending a call after its timeout fired changes nothing for the calls that follow', async () => {
  const timeouts = new TimerBatches();
  const timedOut = new AbortController();
  const batch = timeouts.start(timedOut, 100);
  await vi.advanceTimersByTimeAsync(100);
  timeouts.end(batch);

  const next = new AbortController();
  timeouts.start(next, 100);
  await vi.advanceTimersByTimeAsync(99);
  expect(next.signal.aborted).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(next.signal.aborted).toBe(true);
});

test('a batch that emptied within its turn is not joined again: the next call gets a timer of its own', async () => {
  const timeouts = new TimerBatches();
  const first = new AbortController();
  timeouts.end(timeouts.start(first, 100));
  const second = new AbortController();
  timeouts.start(second, 100);

  expect(vi.getTimerCount()).toBe(1);
  await vi.advanceTimersByTimeAsync(100);
  expect([first.signal.aborted, second.signal.aborted]).toEqual([false, true]);
});
