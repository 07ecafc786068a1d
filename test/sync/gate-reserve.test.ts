import { describe, expect, test } from 'vitest';
import { CrmError } from '../../src/core/errors';
import { gateOf, passesGates } from '../../src/internal/call/unsent';
import type { RequestOptions } from '../../src/options';
import { sendGated } from '../../src/sync/gate';
import type { SyncJournal, SyncJournalClaims, SyncJournalEntry, SyncJournalFencedIntent } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { Committer } from '../../src/sync/sender';

/* sendGated on a shared journal that reserves keys (issue 46, 1): the key claimed ahead, the intent written at the gate. */

const intent = {
  type: 'accounts',
  key: 'A1',
  state: 'sending',
  crmId: undefined,
  hash: 'h',
  data: '{}',
  attemptedAt: undefined,
  requestId: undefined,
  runId: 'run_1',
} as SyncJournalEntry;

const gating = {};
passesGates(gating);

/** A shared journal's claims, in memory, that records what it was asked: reservations, intents by fence, releases. */
function reserving(held = true) {
  const asked: string[] = [];
  const base = memoryJournal();
  const claims: SyncJournalClaims = {
    leaseMs: 30_000,
    claim: async (_tenant, _run, requests) =>
      requests.map(({ reserve }) => {
        asked.push(reserve ? 'reserve' : 'claim with intent');
        return { outcome: 'claimed', fence: 7 } as const;
      }),
    commit: async () => {
      asked.push('commit');
      return true;
    },
    held: async () => new Map(),
    intend: async (_tenant, intents: readonly SyncJournalFencedIntent[]) =>
      intents.map(({ fence, withdrawn }) => {
        asked.push(`${withdrawn ? 'withdraw' : 'intend'} ${fence}`);
        return held;
      }),
    release: async (_tenant, fences) => {
      asked.push(`release ${fences.join(',')}`);
    },
  };
  const journal = Object.assign(Object.create(base) as SyncJournal, { claims });
  return { journal, asked };
}

describe('a create on a shared journal that reserves keys', () => {
  test('is reserved before its turn, and its intent written under the fence at its gate, just before it leaves', async () => {
    const { journal, asked } = reserving();
    const committer = new Committer(journal, 't', 'run_1');
    const gated = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async (options: RequestOptions) => {
        asked.push('waits for its turn');
        await gateOf(options.signal)?.pass();
        asked.push('sent');
        return { id: 'acc_1' };
      },
      gating,
    );
    expect(gated).toEqual({ at: 'sent', fence: 7, answer: { created: { id: 'acc_1' } } });
    expect(asked).toEqual(['reserve', 'waits for its turn', 'intend 7', 'sent']);
  });

  test('failed before its turn (the run stopped): unsent, its reservation released, no intent written', async () => {
    const { journal, asked } = reserving();
    const committer = new Committer(journal, 't', 'run_1');
    const error = new CrmError('the run stopped', { sideEffects: 'none' });
    const gated = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async () => {
        throw error;
      },
      gating,
    );
    expect(gated).toEqual({ at: 'unsent', error });
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual(['reserve', 'release 7']);
  });

  test('whose reservation lapsed before its turn (another run took it): lost, and nothing sent', async () => {
    const { journal, asked } = reserving(false);
    const committer = new Committer(journal, 't', 'run_1');
    let sent = false;
    const gated = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async (options: RequestOptions) => {
        await gateOf(options.signal)?.pass();
        sent = true;
        return { id: 'acc_1' };
      },
      gating,
    );
    expect(gated).toEqual({ at: 'lost' });
    expect(sent).toBe(false);
    expect(asked).toEqual(['reserve', 'intend 7']);
  });

  test('answered 429 with nothing done, then sent again: its intent withdrawn meanwhile, then written again under the same fence', async () => {
    const { journal, asked } = reserving();
    const committer = new Committer(journal, 't', 'run_1');
    const gated = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async (options: RequestOptions) => {
        const gate = gateOf(options.signal);
        await gate?.pass();
        gate?.withdraw();
        await new Promise((resolve) => setImmediate(resolve));
        await gate?.pass();
        return { id: 'acc_1' };
      },
      gating,
    );
    expect(gated).toMatchObject({ at: 'sent', fence: 7 });
    expect(asked).toEqual(['reserve', 'intend 7', 'withdraw 7', 'intend 7']);
  });

  test('with a client that passes no gates, claimed with its intent before the call, as before', async () => {
    const { journal, asked } = reserving();
    const committer = new Committer(journal, 't', 'run_1');
    await sendGated(committer, intent, false, undefined, async () => ({ id: 'acc_1' }), {});
    expect(asked).toEqual(['claim with intent']);
  });
});
