import { afterEach, describe, expect, test, vi } from 'vitest';
import type { SyncType } from '../../src/sync/journal';
import { Tally } from '../../src/sync/tally';
import type { SyncProgress } from '../../src/sync/types';
import { erpSource, syncHarness } from '../support/sync';

/* onProgress: at most 4 calls a second, and at most one last call (issue 45, 7). */

afterEach(() => {
  vi.useRealTimers();
});

/** The most calls at `at` times within any one second. */
const mostInASecond = (at: readonly number[]) =>
  Math.max(0, ...at.map((t) => at.filter((u) => u >= t && u < t + 1000).length));

/**
 * A tally on a clock of its own, and a run of its four lists of `records` each, one record every
 * `everyMs`: the calls of onProgress, each with the time it came at.
 */
function fourLists(records: number, everyMs: number): (SyncProgress & { at: number })[] {
  let now = 0;
  const calls: (SyncProgress & { at: number })[] = [];
  const tally = new Tally(
    (p) => calls.push({ ...p, at: now }),
    () => now,
  );
  for (const type of ['accounts', 'contacts', 'opportunities', 'activities'] as SyncType[]) {
    tally.begin(type, records);
    for (let i = 0; i < records; i++) {
      now += everyMs;
      tally.count(type, 'created');
    }
    tally.progress(type);
  }
  tally.report('run_1', [], []);
  return calls;
}

describe('onProgress', () => {
  test('is not called once more at the end of each list: lists that end within a second get one last call between them', () => {
    const calls = fourLists(3, 10);

    expect(calls.map((c) => [c.type, c.done])).toEqual([
      ['accounts', 1],
      ['activities', 3],
    ]);
  });

  test('keeps to 4 calls in any second however the lists end, and its last call tells where the run ended', () => {
    // Lists of 7 records, one every 37 ms: each ends at another point between two calls.
    const calls = fourLists(7, 37);
    const at = calls.map((c) => c.at);

    // The last call may come less than 250 ms after the one before: it alone.
    expect(mostInASecond(at.slice(0, -1))).toBeLessThanOrEqual(4);
    expect(mostInASecond(at)).toBeLessThanOrEqual(5);
    expect(calls.at(-1)).toMatchObject({ type: 'activities', done: 7, created: 7 });
  });

  test('a list that ends after a quiet spell is told at once, and no last call repeats it', () => {
    let now = 0;
    const calls: SyncProgress[] = [];
    const tally = new Tally(
      (p) => calls.push(p),
      () => now,
    );
    tally.begin('accounts', 2);
    tally.count('accounts', 'created');
    now += 1000;
    tally.count('accounts', 'created');
    now += 1000;
    tally.progress('accounts');
    tally.report('run_1', [], []);

    expect(calls.map((c) => c.done)).toEqual([1, 2, 2]);
  });

  test('of a run whose lists all end within a moment: two calls, the first and the last, not one per list', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { sync } = await syncHarness();
    const calls: SyncProgress[] = [];
    await sync.run(erpSource(5), { onProgress: (p) => calls.push(p) });

    expect(calls).toHaveLength(2);
    expect(calls.at(-1)).toMatchObject({ type: 'activities', done: 10, created: 10 });
  });

  test('an onProgress that throws at the last call fails the run', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { sync } = await syncHarness();
    let calls = 0;
    const run = sync.run(erpSource(1), {
      onProgress: () => {
        if (++calls === 2) throw new Error('progress bar broke');
      },
    });
    await expect(run).rejects.toThrow('progress bar broke');
  });
});
