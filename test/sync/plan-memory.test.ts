import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runNode } from '../support/run-node';

// sync.plan() over an async generator holds a batch of records at a time, not the list: 20,000
// accounts of 4 KiB of text (80 MiB) plan in a 40 MiB heap, entries kept or handed out. Its list
// reader raced each step against one promise that never settled, which kept every step's record
// until the list ended (bench/plan-memory.mjs has the 50,000-record figures).

const CHILD = fileURLToPath(new URL('./plan-memory-child.mjs', import.meta.url));
const RECORDS = 20_000;

async function planInSmallHeap(onEntry: boolean) {
  const { exit, output } = runNode(['--max-old-space-size=40', CHILD], {
    PLAN_RECORDS: String(RECORDS),
    PLAN_ON_ENTRY: onEntry ? '1' : '0',
  });
  const code = await exit;
  const { stdout, stderr } = output();
  return { code, stderr: stderr.slice(0, 300), result: code === 0 ? JSON.parse(stdout) : undefined };
}

describe('sync.plan() memory', () => {
  test.each([
    ['kept in plan().entries', false],
    ['handed out to onEntry', true],
  ])(
    'plans 20,000 accounts of 4 KiB each from an async generator within a 40 MiB heap, entries %s',
    async (_, onEntry) => {
      const { code, stderr, result } = await planInSmallHeap(onEntry);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(result).toEqual({
        counts: { create: RECORDS, update: 0, unchanged: 0, skip: 0, deactivate: 0, blocked: 0, invalid: 0 },
        entries: RECORDS,
      });
    },
  );
});
