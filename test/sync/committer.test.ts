import { afterEach, expect, test, vi } from 'vitest';
import type { SyncJournal, SyncJournalChange, SyncJournalEntry } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { Committer } from '../../src/sync/sender';

const intentOf = (key: string): SyncJournalEntry =>
  ({
    type: 'accounts',
    key,
    state: 'sending',
    crmId: undefined,
    hash: 'h',
    data: '{}',
    attemptedAt: undefined,
    requestId: undefined,
    runId: 'run_1',
  }) as SyncJournalEntry;

const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
afterEach(() => {
  process.off('unhandledRejection', record);
  unhandled.length = 0;
});

/** A memory journal whose writes are recorded, and held until `release()` when `hold` is set. */
function recordingJournal(fail?: Error) {
  const journal = memoryJournal();
  const writes: SyncJournalChange[] = [];
  const held: (() => void)[] = [];
  const state = { hold: false };
  const recording = Object.assign(Object.create(journal) as SyncJournal, {
    write: async (tenant: string, change: SyncJournalChange) => {
      writes.push(change);
      if (state.hold) await new Promise<void>((resolve) => held.push(resolve));
      if (fail) throw fail;
      return journal.write(tenant, change);
    },
  });
  const release = () => {
    for (const go of held.splice(0)) go();
  };
  return { journal: recording, inner: journal, writes, state, release };
}

test('the intents of requests at their gates in one turn are written in one change', async () => {
  const { journal, writes } = recordingJournal();
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  await Promise.all(['A1', 'A2', 'A3'].map((key) => committer.intend(intentOf(key))));
  expect(writes.map((w) => w.put?.map((e) => e.key))).toEqual([['A1', 'A2', 'A3']]);
});

test('intents gated while a group is being written go together in the next change, with the outcomes buffered', async () => {
  const { journal, writes, state, release } = recordingJournal();
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  state.hold = true;
  const first = committer.intend(intentOf('A1'));
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(writes).toHaveLength(1);
  committer.put({ ...intentOf('A0'), state: 'synced', crmId: 'acc_0' } as SyncJournalEntry);
  const later = [committer.intend(intentOf('A2')), committer.intend(intentOf('A3'))];
  await new Promise((resolve) => setTimeout(resolve, 5));
  state.hold = false;
  release();
  await Promise.all([first, ...later]);
  expect(writes.map((w) => w.put?.map((e) => e.key))).toEqual([['A1'], ['A0', 'A2', 'A3']]);
});

test('a gate resolves only once its intent is written', async () => {
  const { journal, inner, state, release } = recordingJournal();
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  state.hold = true;
  let passed = false;
  const gate = committer.intend(intentOf('A1')).then(() => {
    passed = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(passed).toBe(false);
  expect(await inner.pending('tenant_1')).toEqual([]);
  release();
  await gate;
  expect((await inner.pending('tenant_1')).map((e) => e.key)).toEqual(['A1']);
});

test('a failed write rejects every gate of its group and of the groups after it, and leaves no unhandled rejection', async () => {
  process.on('unhandledRejection', record);
  const { journal } = recordingJournal(new Error('disk full'));
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  const first = await Promise.allSettled([committer.intend(intentOf('A1')), committer.intend(intentOf('A2'))]);
  const after = await Promise.allSettled([committer.intend(intentOf('A3'))]);
  expect([...first, ...after].map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(unhandled).toEqual([]);
});

test("with claims, a group's intents are claimed in one call, each gate given its own answer", async () => {
  const asked: string[][] = [];
  const journal = Object.assign(Object.create(memoryJournal()) as SyncJournal, {
    claims: {
      leaseMs: 30_000,
      claim: async (_tenant: string, _run: string, intents: readonly { intent: SyncJournalEntry }[]) => {
        asked.push(intents.map(({ intent }) => intent.key));
        return intents.map(({ intent }, i) =>
          intent.key === 'A2' ? { outcome: 'held' as const } : { outcome: 'claimed' as const, fence: i + 1 },
        );
      },
      held: async () => new Map(),
      commit: async () => true,
    },
  });
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  const answers = await Promise.all(['A1', 'A2', 'A3'].map((key) => committer.intend(intentOf(key))));
  expect(asked).toEqual([['A1', 'A2', 'A3']]);
  expect(answers).toEqual([{ outcome: 'claimed', fence: 1 }, { outcome: 'held' }, { outcome: 'claimed', fence: 3 }]);
});

test('an intent withdrawn while its request waits for a retry is gone from the journal on the next turn, and written again at its next gate', async () => {
  const { journal, inner, writes } = recordingJournal();
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  await committer.intend(intentOf('A1'));
  committer.withdraw(intentOf('A1'));
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect(await inner.pending('tenant_1')).toEqual([]);
  await committer.intend(intentOf('A1'));
  expect((await inner.pending('tenant_1')).map((e) => e.key)).toEqual(['A1']);
  expect(writes.map((w) => [w.put?.map((e) => e.key), w.remove?.map((e) => e.key)])).toEqual([
    [['A1'], []],
    [[], ['A1']],
    [['A1'], []],
  ]);
});

test("a create's outcome is written without waiting for the next group of intents, when none comes", async () => {
  const { journal, inner } = recordingJournal();
  const committer = new Committer(journal, 'tenant_1', 'run_1');
  await committer.intend(intentOf('A1'));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    committer.put({ ...intentOf('A1'), state: 'synced', crmId: 'acc_1' } as SyncJournalEntry, true);
    committer.put({ ...intentOf('A2'), state: 'synced', crmId: 'acc_2' } as SyncJournalEntry);
    // Not before its timer (10 ms), and by it, whatever the machine's load.
    await vi.advanceTimersByTimeAsync(9);
    expect((await inner.pending('tenant_1')).map((e) => e.key)).toEqual(['A1']);
    await vi.advanceTimersByTimeAsync(1);
    expect(await inner.pending('tenant_1')).toEqual([]);
    expect((await inner.get('tenant_1', 'accounts', ['A1', 'A2'])).size).toBe(2);
  } finally {
    vi.useRealTimers();
  }
});
