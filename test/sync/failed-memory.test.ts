import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/core/errors';
import { runNode } from '../support/run-node';
import { syncHarness } from '../support/sync';

/* A source whose every record fails keeps what each failure needs, not a stack each (issue 45, 7). */

const BENCH = fileURLToPath(new URL('../../bench/failed-memory.mjs', import.meta.url));

describe('the failures of bad records', () => {
  test('keep their type, key, message and issues, share one stackless error per reason, and each its own otherwise', async () => {
    const { sync } = await syncHarness();
    const report = await sync.run({
      accounts: [
        { key: 'A1', data: { name: 1 as never } },
        { key: 'A2', data: { name: 2 as never } },
        { key: 'A3' } as never,
        { key: 'A4', data: { name: 'Fine', industry: 7 as never } },
      ],
    });

    // A3 fails as it is read, the others once their journal entries are: the order of failing.
    expect(report.failed.map((f) => `${f.type} ${f.key}`).sort()).toEqual([
      'accounts A1',
      'accounts A2',
      'accounts A3',
      'accounts A4',
    ]);
    const byKey = new Map(report.failed.map((f) => [f.key, f.error as CrmValidationError]));
    const [a1, a2, a3, a4] = ['A1', 'A2', 'A3', 'A4'].map((key) => byKey.get(key));
    for (const error of [a1, a2, a3, a4]) {
      expect(error).toBeInstanceOf(CrmValidationError);
      // No frame of the engine's: they tell nothing of the record, and took some 2 KB each.
      expect(error?.stack).not.toMatch(/\n\s+at /);
    }
    expect(a1).toBe(a2);
    expect(a1?.issues).toEqual([expect.objectContaining({ field: 'data.name', path: ['data', 'name'] })]);
    expect(a3).not.toBe(a1);
    expect(a3?.message).toMatch(/^Invalid record: data: Required/);
    expect(a4?.issues).toEqual([expect.objectContaining({ field: 'data.industry' })]);
  });

  test('of 200,000 records take some 100 bytes each once collected, not a stack each (a process of its own, bench/failed-memory.mjs)', async () => {
    const { exit, output } = runNode(['--expose-gc', BENCH, '200000']);
    expect(await exit).toBe(0);
    const result = JSON.parse(output().stdout) as { failed: number; heapAfterGcMiB: number; peakRssMiB: number };
    expect(result.failed).toBe(200_000);
    // With a stack each they held 170 MiB; the heap of the process itself is under 10.
    expect(result.heapAfterGcMiB).toBeLessThan(64);
  }, 120_000);

  // The issue's bound: the whole process, at its peak, garbage and young generation included.
  // A record that fails its schema (zod's error built, with a stack, for each), and one with no
  // data at all, which fails as it is read: both 670 and 365 MiB before, near 300 after.
  test.each([
    ['schema', 'data the schema refuses'],
    ['missing', 'no data at all'],
  ])(
    'of 1,000,000 records, every one failing (%s: %s), keep the process under 400 MiB of RSS at its peak',
    async (kind) => {
      const { exit, output } = runNode(['--expose-gc', BENCH, '1000000', kind]);
      expect(await exit).toBe(0);
      const result = JSON.parse(output().stdout) as { failed: number; peakRssMiB: number };
      expect(result.failed).toBe(1_000_000);
      expect(result.peakRssMiB).toBeLessThan(400);
    },
    300_000,
  );
});
