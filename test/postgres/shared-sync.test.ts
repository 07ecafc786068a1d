import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournalClaims } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { throughMsw } from '../support/fake-harness';
import { startPostgres, type TestPostgres } from '../support/postgres';
import { type ErpSource, erpSource } from '../support/sync';
import { entry } from '../sync/journal-conformance';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await postgres?.close();
});

const fresh = () => `s_${Math.random().toString(36).slice(2)}`;

/** The records of `source` whose index `keep` accepts, in every list. */
function slice(source: ErpSource, keep: (i: number) => boolean): ErpSource {
  const of = <T>(list: T[], per: number) => list.filter((_, i) => keep(Math.floor(i / per)));
  return {
    accounts: of(source.accounts, 1),
    contacts: of(source.contacts, 2),
    opportunities: of(source.opportunities, 1),
    activities: of(source.activities, 2),
  };
}

describe('CrmSync over a shared postgresJournal()', () => {
  test('workers on overlapping slices of one tenant run at once and create each record once', async () => {
    const { fake, baseUrl } = await throughMsw({ latencyMs: 5 });
    const schema = fresh();
    const source = erpSource(12);
    const slices = [(i: number) => i < 8, (i: number) => i >= 4, (i: number) => i % 2 === 0];
    const runs = slices.map((keep) => {
      const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
      const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema }), settleMs: 0 });
      return sync.run(slice(source, keep), { concurrency: 4 });
    });
    const reports = await Promise.all(runs);

    expect(fake.store.accounts.size).toBe(12);
    expect(fake.store.contacts.size).toBe(24);
    expect(fake.store.opportunities.size).toBe(12);
    expect(fake.store.activities.size).toBe(24);
    expect(reports.reduce((n, r) => n + r.created, 0)).toBe(72);
    for (const report of reports) expect(report).toMatchObject({ failed: [], inDoubt: [], skipped: [] });
    // Every contact points at its account's one record.
    const journal = postgresJournal(postgres.pool(), { schema });
    await journal.open();
    const accounts = await journal.list(fake.tenantId, 'accounts', undefined, 100);
    const contacts = await journal.list(fake.tenantId, 'contacts', undefined, 100);
    for (const c of contacts) {
      const account = accounts.find((a) => a.key === `A${Number(c.key.slice(1)) >> 1}`);
      expect(fake.store.contacts.get(c.crmId as string)?.accountId).toBe(account?.crmId);
    }
  });

  test("a contact whose account another worker is creating waits for that account's id", async () => {
    const { fake, baseUrl } = await throughMsw();
    const schema = fresh();
    const journal = postgresJournal(postgres.pool(), { schema });
    await journal.open();
    const claims = journal.claims as SyncJournalClaims;
    const tenant = fake.tenantId;
    // Another worker has claimed account A0 and is creating it.
    const [claim] = await claims.claim(tenant, 'run_other', [
      { intent: entry('accounts', 'A0', { state: 'sending', crmId: undefined, runId: 'run_other' }), resend: false },
    ]);
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema }), settleMs: 0 });
    const source = erpSource(1);
    const run = sync.run({ contacts: source.contacts });

    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.store.contacts.size).toBe(0);
    const account = await crm.accounts.create({ name: 'Account 0' });
    await claims.commit(
      tenant,
      { put: [entry('accounts', 'A0', { crmId: account.id, runId: 'run_other' })] },
      (claim as { fence: number }).fence,
    );
    const report = await run;

    expect(report).toMatchObject({ created: 2, failed: [], skipped: [] });
    expect([...fake.store.contacts.values()].map((c) => c.accountId)).toEqual([account.id, account.id]);
  });

  test("removed: 'deactivate' is refused with a shared journal, and nothing is sent", async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema: fresh() }) });

    await expect(sync.run(erpSource(1), { removed: 'deactivate' })).rejects.toThrow(CrmValidationError);
    await expect(sync.run(erpSource(1), { removed: 'deactivate' })).rejects.toThrow(/slice/);
    expect(fake.requests).toEqual([]);
  });

  test('a Postgres that cannot be reached fails the run at once, and nothing is sent', async () => {
    const { fake, baseUrl } = await throughMsw();
    const pool = new pg.Pool({ ...postgres.connection, port: 1, connectionTimeoutMillis: 5_000 });
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    const sync = new CrmSync(crm, { journal: postgresJournal(pool) });
    try {
      const error = await sync.run(erpSource(2)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncJournalError);
      expect(error).toMatchObject({ reason: 'unavailable', message: expect.stringMatching(/could not be opened/) });
      expect(fake.requests).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  test('Postgres lost mid-run: the run rejects saying so, and the next run settles what was in flight without duplicating', async () => {
    const own = await startPostgres();
    try {
      const { fake, baseUrl } = await throughMsw({ latencyMs: 20 });
      const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
      const source = {
        accounts: erpSource(1).accounts,
        contacts: erpSource(20).contacts.map((c) => ({ ...c, accountKey: 'A0' })),
      };
      const sync = new CrmSync(crm, { journal: postgresJournal(own.pool(), { leaseMs: 2000 }), settleMs: 0 });
      const run = sync.run(source, { concurrency: 6 });
      // Postgres goes once some contacts are on their way.
      while (fake.requests.length < 8) await new Promise((resolve) => setTimeout(resolve, 2));
      await own.stop();
      const error = await run.catch((e: unknown) => e);

      expect(error).toBeInstanceOf(SyncJournalError);
      expect(error).toMatchObject({
        reason: 'unavailable',
        message: expect.stringMatching(/could not be \w+ .*settled as in doubt by the next run/),
      });
      const sentWhileDown = fake.requests.length;
      await own.restart();
      const again = new CrmSync(crm, { journal: postgresJournal(own.pool(), { leaseMs: 2000 }), settleMs: 0 });
      const report = await again.run(source, { concurrency: 6 });

      expect(report).toMatchObject({ failed: [], inDoubt: [], skipped: [] });
      expect(fake.store.accounts.size).toBe(1);
      const emails = [...fake.store.contacts.values()].map((c) => c.email);
      expect(new Set(emails).size).toBe(emails.length);
      expect(emails).toHaveLength(40);
      expect(sentWhileDown).toBeGreaterThanOrEqual(8);
    } finally {
      await own.close();
    }
  }, 120_000);
});
