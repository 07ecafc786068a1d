import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

/*
 * Issue 46, 1: a kill -9 leaves in doubt the creates that truly left, not those still waiting for
 * their turn. bench/intent-kills.mjs kills a sync of accounts (100/s, 20 ms, concurrency 8,
 * SQLite) at random moments of the accounts phase, each kill a trial of its own, and counts what
 * the journal holds in doubt against the creates the fake received and the killed process never
 * heard the answer of. KILLS_TEST_KILLS (default 6) and KILLS_TEST_SEED size and repeat it.
 */
const KILLS = Number(process.env.KILLS_TEST_KILLS ?? 6);
const SEED = Number(process.env.KILLS_TEST_SEED ?? Date.now() % 100_000);
const DIST = fileURLToPath(new URL('../../dist/sync.js', import.meta.url));
const BENCH = new URL('../../bench/intent-kills.mjs', import.meta.url).href;

interface Row {
  readonly inDoubt: number;
  readonly inFlight: number;
  readonly neverReached: number;
  readonly unaccounted: number;
  readonly duplicates: number;
  readonly missing: number;
}

test.skipIf(!existsSync(DIST))(
  `a sync killed -9 ${KILLS} times in its accounts phase leaves at most one create in doubt a slot, never the next group written ahead, never a duplicate, and every account made mapped or in doubt`,
  { timeout: 600_000 },
  async () => {
    const { killTrials } = (await import(BENCH)) as {
      killTrials: (o: { kills: number; seed: number }) => Promise<{ rows: Row[] }>;
    };
    const { rows } = await killTrials({ kills: KILLS, seed: SEED });
    const why = `seed ${SEED}: ${JSON.stringify(rows)}`;
    expect(rows.length, why).toBe(KILLS);
    for (const row of rows) {
      expect(row.duplicates, why).toBe(0);
      expect(row.missing, why).toBe(0);
      expect(row.unaccounted, why).toBe(0);
    }
    // What holds at any moment of any machine: an intent is written only at its gate, by one of the
    // run's 8 slots, and a slot's next gate writes its last outcome with it, so a kill finds at most
    // one create in doubt a slot (before, up to 2 x 8: the next group written ahead, 17.8 a kill on
    // average). How close a kill comes to what was truly in flight (<= in flight + 1, <= 4 on
    // average) depends on how fast the process runs between a group's commit and its fetches: the
    // bench measures it (W9, bench/RESULTS.md), since a loaded machine widens that window.
    for (const row of rows) expect(row.inDoubt, why).toBeLessThanOrEqual(8);
  },
);
