import { afterEach, expect, test, vi } from 'vitest';
import { CrmClient } from '../../src/index';
import { canonical } from '../../src/sync/canonical';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournalClaim } from '../../src/sync/journal';
import { memoryJournal } from '../../src/sync/memory-journal';
import { throughMsw } from '../support/fake-harness';
import { erpSource, withClaims } from '../support/sync';
import { entry } from './journal-conformance';

afterEach(() => {
  vi.useRealTimers();
});

/**
 * A shared journal in memory, as a fleet's would be: every key is this run's to claim, but A0,
 * which another worker is creating until `done()`. Each look at A0 (held()) is noted with the
 * time it was made.
 */
function otherCreatingA0(tenant: string) {
  const base = memoryJournal();
  const looks: number[] = [];
  let holding = true;
  let fence = 0;
  const journal = withClaims(base, {
    leaseMs: 30_000,
    claim: async (t, _runId, requests) =>
      requests.map(({ intent }): SyncJournalClaim => {
        if (intent.key === 'A0' && holding) return { outcome: 'held', expiresAt: Date.now() + 30_000 };
        base.write(t, { put: [intent] });
        return { outcome: 'claimed', fence: ++fence };
      }),
    commit: async (t, change) => {
      base.write(t, change);
      return true;
    },
    held: async (_t, _runId, _type, keys) => {
      if (keys.includes('A0')) looks.push(Date.now());
      return new Map(holding && keys.includes('A0') ? [['A0', Date.now() + 30_000]] : []);
    },
  });
  const form = canonical({ name: 'Account 0', industry: 'Retail' });
  return {
    journal,
    looks,
    done(crmId: string) {
      holding = false;
      base.write(tenant, {
        put: [entry('accounts', 'A0', { hash: form.hash, data: form.json, crmId, runId: 'run_other' })],
      });
    },
  };
}

test('a record another worker is creating is looked at again every 20 ms after it is set aside, ten times, then every 100 ms', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const { fake, baseUrl } = await throughMsw();
  const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
  const other = otherCreatingA0(fake.tenantId);
  const sync = new CrmSync(crm, { journal: other.journal, settleMs: 0 });
  let report: Awaited<ReturnType<CrmSync['run']>> | undefined;
  const run = sync.run({ accounts: erpSource(4).accounts }, { concurrency: 1 }).then((r) => {
    report = r;
  });

  for (let ms = 0; other.looks.length < 13 && ms < 10_000; ms++) await vi.advanceTimersByTimeAsync(1);
  const created = await crm.accounts.create({ name: 'Account 0', industry: 'Retail' });
  other.done(created.id);
  for (let ms = 0; report === undefined && ms < 10_000; ms++) await vi.advanceTimersByTimeAsync(1);
  await run;

  const waits = other.looks.slice(1, 13).map((at, i) => at - (other.looks[i] as number));
  expect(waits).toEqual([20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 100, 100]);
  expect(report).toMatchObject({ created: 3, unchanged: 1, failed: [], inDoubt: [], skipped: [] });
  expect(fake.store.accounts.size).toBe(4);
});
