import { afterEach, beforeAll, beforeEach, expect, type MockInstance, vi } from 'vitest';
import type { FaultServer } from './fault-server';

/*
 * The client's clocks (setTimeout, Date, performance.now()) faked around each test, its sockets
 * real: a test moves the clock only once the fault server holds what was sent, so that a timeout
 * of 100 ms measures the server's silence, never how long a busy machine took to connect and write.
 * The fault server's delays run on the same fake clock (it lives in the test's process).
 */

/** What the clock of a test sees of `fetch`, and the steps that move it. */
export interface FaultClock {
  /** `fetch` (MSW's, undici's), spied: every attempt the client made, and the response it got. */
  readonly fetch: MockInstance<typeof globalThis.fetch>;
  /**
   * Runs the clock from timer to timer (timeouts, backoff, a scripted delay) until `done()`, and
   * before each step waits for the server to have received every request sent so far.
   */
  runUntil(done: () => boolean, fault: FaultServer): Promise<void>;
  /** Moves the clock by `ms` once the server holds every request sent so far. */
  advance(ms: number, fault: FaultServer): Promise<void>;
  /** `promise`, once the clock has run (as `runUntil`) until it settled. */
  settle<T>(promise: Promise<T>, fault: FaultServer): Promise<T>;
}

/** Registers the fake clock for the tests of the calling file; returns its view of the current test. */
export function useFaultClock(): FaultClock {
  let fetch: MockInstance<typeof globalThis.fetch> | undefined;
  // Loaded before the clock stands: a first retry imports ky, the one await of a call that is real.
  beforeAll(() => import('../../src/internal/exchange/ky'));
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
    // Spied through: the client still calls the fetch it would (MSW lets loopback through to undici).
    fetch = vi.spyOn(globalThis, 'fetch');
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const spied = () => {
    if (!fetch) throw new Error('No fake clock: call inside a test');
    return fetch;
  };
  const delivered = (fault: FaultServer) => fault.waitForRequests(spied().mock.calls.length);
  return {
    get fetch() {
      return spied();
    },
    async runUntil(done, fault) {
      // A bound on the steps, so that a call that never ends fails the test rather than spinning.
      for (let step = 0; !done(); step++) {
        expect(step, 'timers run before the call settled').toBeLessThan(1000);
        await delivered(fault);
        // A client between two timers may be awaiting something real (ky, imported at a first
        // retry): the clock stands until it waits on a timer again, or has sent, or is done.
        const sent = spied().mock.calls.length;
        await realPoll(() => done() || vi.getTimerCount() > 0 || spied().mock.calls.length > sent);
        if (done() || spied().mock.calls.length > sent) continue;
        // One timer, synchronously: nothing real happens between choosing it and running it.
        vi.advanceTimersToNextTimer();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async advance(ms, fault) {
      await delivered(fault);
      await vi.advanceTimersByTimeAsync(ms);
    },
    async settle(promise, fault) {
      const call = watched(promise);
      await this.runUntil(() => call.settled, fault);
      return promise;
    },
  };
}

// The timers of the machine, taken before any test fakes them (vi.waitFor and expect.poll move a
// fake clock as they poll).
const realSetTimeout = globalThis.setTimeout;

/** Polls `ready` on real time, every 2 ms, until it holds or 20 s pass (a bound for a hang, not a speed). */
export async function realPoll(ready: () => boolean): Promise<void> {
  const until = process.hrtime.bigint() + 20_000_000_000n;
  while (!ready() && process.hrtime.bigint() < until) await new Promise((resolve) => realSetTimeout(resolve, 2));
}

/** A promise, and whether it has settled yet (as of the last turn of the microtask queue). */
export function watched<T>(promise: Promise<T>): { readonly promise: Promise<T>; readonly settled: boolean } {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  promise.then(mark, mark);
  return {
    promise,
    get settled() {
      return settled;
    },
  };
}

/**
 * `run()` on a clock that stands still: what it returns must come over the sockets alone, with no
 * timer run (a wait, a backoff, a timeout), or the test fails. For "ends at once": a bound in
 * milliseconds says the same, but a busy machine overruns it.
 */
export async function withoutTime<T>(run: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  try {
    const call = watched(run());
    await realPoll(() => call.settled);
    expect(call.settled, 'settled with the clock standing').toBe(true);
    return await call.promise;
  } finally {
    vi.useRealTimers();
  }
}
