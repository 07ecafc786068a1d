import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { memoryStore } from '../../src/redis/index';
import { MemoryStore } from '../../src/redis/memory-store';

/*
 * PaceStore's contract: nothing kept may outlive a few minutes of disuse. memoryStore() kept every
 * key it was ever asked about, for the life of the process: 100,000 keys were all still held an
 * hour later. It now lets a key go 15 minutes after its last use or its last turn (as
 * redisStore()'s TTL does), looked over once a minute. Time is the fake timers' own.
 */

const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A store on the fake clock. */
const storeOnFakeClock = () => new MemoryStore(() => Date.now());

test('100,000 keys used once are all let go within an hour, and no timer is left', () => {
  const store = storeOnFakeClock();
  for (let i = 0; i < 100_000; i++) store.reserve(`key_${i}`, 1, 10);
  expect(store.size).toBe(100_000);

  vi.advanceTimersByTime(60 * MINUTE);

  expect(store.size).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
});

test('a rate remembered is let go rememberMs after the key last used it, and then no timer is left', () => {
  const store = new MemoryStore(() => Date.now(), 120 * MINUTE);
  store.reserve('key_nightly', 1, 10);
  store.learn('key_nightly', 0, { rate: 90 });

  vi.advanceTimersByTime(100 * MINUTE);
  expect(store.size).toBe(0);
  // Used again within rememberMs: it starts from the rate, and is kept 120 minutes from now.
  expect(store.reserve('key_nightly', 1, 10).learned).toMatchObject({ rate: 90 });
  vi.advanceTimersByTime(100 * MINUTE);
  expect(store.reserve('key_nightly', 1, 10).learned).toMatchObject({ rate: 90 });

  vi.advanceTimersByTime(125 * MINUTE);
  expect(store.reserve('key_nightly', 1, 10).learned).toBeUndefined();
  vi.advanceTimersByTime(200 * MINUTE);
  expect(vi.getTimerCount()).toBe(0);
});

test('what is remembered counts the refusals its rate took, job after job', () => {
  const store = storeOnFakeClock();
  store.reserve('key_counted', 1, 10);
  store.refuse('key_counted', 0, 0, 1000);
  store.learn('key_counted', 1, { rate: 200 });
  store.learn('key_counted', 1, { rate: 199 });
  expect(store.reserve('key_counted', 1, 10).learned).toMatchObject({ rate: 199, refusals: 1 });

  vi.advanceTimersByTime(60 * MINUTE);
  store.refuse('key_counted', 0, 0, 1000);
  store.learn('key_counted', 1, { rate: 100 });

  expect(store.reserve('key_counted', 1, 10).learned).toMatchObject({ rate: 100, refusals: 2 });
});

test('a phase that learned no rate (only where a ramp starts) is not remembered', () => {
  const store = storeOnFakeClock();
  store.reserve('key_ramp', 1, 10);
  store.learn('key_ramp', 0, { ramp: 12 });

  vi.advanceTimersByTime(60 * MINUTE);

  expect(store.reserve('key_ramp', 1, 10).learned).toBeUndefined();
});

test('a key is kept through 14 minutes of disuse, and let go by 17', () => {
  const store = storeOnFakeClock();
  store.reserve('key_idle', 1, 10);

  vi.advanceTimersByTime(14 * MINUTE);
  expect(store.size).toBe(1);

  vi.advanceTimersByTime(3 * MINUTE);
  expect(store.size).toBe(0);
});

test('a key in use is kept for as long as it is used, and what it learned with it', () => {
  const store = storeOnFakeClock();
  store.reserve('key_busy', 1, 10);
  store.learn('key_busy', 0, { rate: 42 });
  store.reserve('key_idle', 1, 10);

  for (let minute = 0; minute < 60; minute += 10) {
    vi.advanceTimersByTime(10 * MINUTE);
    store.reserve('key_busy', 1, 10);
  }

  expect(store.size).toBe(1);
  expect(store.reserve('key_busy', 1, 10).learned).toMatchObject({ rate: 42 });
});

test('a key paused for longer than it is kept is held until its pause is over, and 15 minutes more', () => {
  const store = storeOnFakeClock();
  store.reserve('key_paused', 1, 10);
  store.refuse('key_paused', 0, 0, 40 * MINUTE);

  vi.advanceTimersByTime(50 * MINUTE);
  expect(store.size).toBe(1);
  expect(store.reserve('key_paused', 1, 10).phase).toBe(1);

  vi.advanceTimersByTime(17 * MINUTE);
  expect(store.size).toBe(0);
});

test('a refusal or a learned rate for an unknown key is let go too', () => {
  const store = storeOnFakeClock();
  store.refuse('key_refused', 3, 0, 1000);
  store.learn('key_learned', 2, { rate: 5 });
  expect(store.size).toBe(2);

  vi.advanceTimersByTime(20 * MINUTE);

  expect(store.size).toBe(0);
});

test('memoryStore() forgets a key an hour unused: its next lease starts a new pace, from the rate it remembers', async () => {
  const store = memoryStore();
  await store.reserve('key_tenant', 1, 10);
  await store.learn('key_tenant', 0, { rate: 180 });

  vi.advanceTimersByTime(60 * MINUTE);
  const lease = await store.reserve('key_tenant', 1, 10);

  // The schedule is new (phase 0, turn 0); the rate is what job 1 learned (issue 48).
  expect(lease).toMatchObject({ phase: 0, turn: 0, learned: { rate: 180, refusals: 0 } });
});

test('memoryStore({ rememberMs: 0 }) forgets a key an hour unused: its next lease starts a new pace, with nothing learned', async () => {
  const store = memoryStore({ rememberMs: 0 });
  await store.reserve('key_tenant', 1, 10);
  await store.learn('key_tenant', 0, { rate: 180 });
  expect((await store.reserve('key_tenant', 1, 10)).learned).toMatchObject({ rate: 180 });

  vi.advanceTimersByTime(60 * MINUTE);
  const lease = await store.reserve('key_tenant', 1, 10);

  expect(lease).toMatchObject({ phase: 0, turn: 0, learned: undefined });
});
