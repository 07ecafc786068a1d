import { describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/client';
import { CrmError } from '../../src/core/errors';
import { gateOf, knowsGates, passesGates } from '../../src/internal/call/unsent';
import type { RequestOptions } from '../../src/options';
import { sendGated } from '../../src/sync/gate';
import type { SyncJournal, SyncJournalEntry } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { Committer } from '../../src/sync/sender';

/* sendGated (src/sync/gate.ts): what became of a create sent through its send gate. */

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

/** A client whose transport passes send gates, as CrmClient's does. */
const gating = {};
passesGates(gating);

/** A transport's part: passes the gate the options carry, then answers as `answer` says. */
const through =
  (answer: () => Promise<{ id: string }>) =>
  async (options: RequestOptions): Promise<{ id: string }> => {
    await gateOf(options.signal)?.pass();
    return answer();
  };

/** A transport's part as the real one is: a gate that refuses stops the call unsent; one passed sends it. */
const refusingUnsent =
  (sent: string[]) =>
  async (options: RequestOptions): Promise<{ id: string }> => {
    try {
      await gateOf(options.signal)?.pass();
    } catch (cause) {
      throw new CrmError('Not sent', { cause, sideEffects: 'none' });
    }
    sent.push('sent');
    return { id: 'x' };
  };

describe('a create sent through its gate', () => {
  test('answered: sent, its intent written before it went', async () => {
    const journal = memoryJournal();
    const committer = new Committer(journal, 't', 'run_1');
    let pendingWhenSent: string[] = [];
    const gated = await sendGated(
      committer,
      intent,
      false,
      undefined,
      through(async () => {
        pendingWhenSent = (await journal.pending('t')).map((e) => e.key);
        return { id: 'acc_1' };
      }),
      gating,
    );
    expect(gated).toEqual({ at: 'sent', fence: undefined, answer: { created: { id: 'acc_1' } } });
    expect(pendingWhenSent).toEqual(['A1']);
  });

  test('failed before its turn: unsent, and nothing written', async () => {
    const journal = memoryJournal();
    const committer = new Committer(journal, 't', 'run_1');
    const error = new CrmError('queued too long', { sideEffects: 'none' });
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
    await committer.flush();
    expect(await journal.pending('t')).toEqual([]);
  });

  test('whose intent cannot be written: journal, with the journal error', async () => {
    const base = memoryJournal();
    const failing = Object.assign(Object.create(base) as SyncJournal, {
      write: async () => {
        throw new Error('disk full');
      },
    });
    const sent: string[] = [];
    const gated = await sendGated(
      new Committer(failing, 't', 'run_1'),
      intent,
      false,
      undefined,
      refusingUnsent(sent),
      gating,
    );
    expect(gated).toMatchObject({ at: 'journal', error: { message: 'disk full' } });
    expect(sent).toEqual([]);
  });

  test("another run's (a claim held elsewhere): elsewhere, nothing sent", async () => {
    const journal = Object.assign(Object.create(memoryJournal()) as SyncJournal, {
      claims: {
        leaseMs: 30_000,
        claim: async () => [{ outcome: 'held' as const }],
        held: async () => new Map(),
        commit: async () => true,
      },
    });
    const sent: string[] = [];
    const gated = await sendGated(
      new Committer(journal, 't', 'run_1'),
      intent,
      false,
      undefined,
      refusingUnsent(sent),
      gating,
    );
    expect(gated).toEqual({ at: 'elsewhere', claim: { outcome: 'held' } });
    expect(sent).toEqual([]);
  });

  test('by a client that does not pass send gates: its intent written before the call starts, and the call taken as sent', async () => {
    const journal = memoryJournal();
    const committer = new Committer(journal, 't', 'run_1');
    const error = new CrmError('reset', { sideEffects: 'unknown' });
    let pendingWhenCalled: string[] = [];
    // Such a client never looks at the gate: the intent must already be on disk when it is called.
    const answered = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async () => {
        pendingWhenCalled = (await journal.pending('t')).map((e) => e.key);
        return { id: 'acc_1' };
      },
      {},
    );
    const lost = await sendGated(
      committer,
      intent,
      false,
      undefined,
      async () => {
        throw error;
      },
      {},
    );
    expect(pendingWhenCalled).toEqual(['A1']);
    expect(answered).toEqual({ at: 'sent', fence: undefined, answer: { created: { id: 'acc_1' } } });
    expect(lost).toEqual({ at: 'sent', fence: undefined, answer: { error } });
  });

  test("carries the run's signal: aborting it aborts the call's", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const committer = new Committer(memoryJournal(), 't', 'run_1');
    const gated = sendGated(
      committer,
      intent,
      false,
      controller.signal,
      async (options) => {
        seen = options.signal;
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new CrmError('aborted', { sideEffects: 'none' });
      },
      gating,
    );
    controller.abort(new Error('stop'));
    await gated;
    expect(seen?.aborted).toBe(true);
  });

  test("is gated by every CrmClient, a tenant's client of it included, and by nothing else", () => {
    const crm = new CrmClient({ baseUrl: 'https://crm.example.com', apiKey: 'k', tenantId: 'acme' });
    expect(knowsGates(crm)).toBe(true);
    expect(knowsGates(crm.withTenant('globex'))).toBe(true);
    expect(knowsGates({ accounts: crm.accounts })).toBe(false);
    expect(knowsGates(undefined)).toBe(false);
  });
});
