import { expect, test } from 'vitest';
import { erpSource, syncHarness } from '../support/sync';

// The reader of an async list waits on each step with the run's signal (read.ts, batchesOf):
// a source that stops answering does not hold an aborted run.
test('a run whose async list stops answering rejects with the abort reason, and reads no further', async () => {
  const { sync } = await syncHarness();
  const stop = new AbortController();
  let asked = 0;
  const stalled: AsyncIterable<{ key: string; data: { name: string } }> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        asked++;
        if (asked === 1) return Promise.resolve({ value: { key: 'A1', data: { name: 'One' } }, done: false });
        // The cursor hangs: the run is aborted while it waits.
        queueMicrotask(() => stop.abort(new Error('night window over')));
        return new Promise(() => {});
      },
    }),
  };
  await expect(sync.run({ accounts: stalled }, { signal: stop.signal })).rejects.toThrow('night window over');
  expect(asked).toBe(2);
  // The journal is free for the next run, which goes on as usual.
  expect((await sync.run({ accounts: erpSource(1).accounts })).created).toBe(1);
});
