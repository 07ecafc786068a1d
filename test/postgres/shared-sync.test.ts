import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { postgresJournal } from '../../src/postgres/postgres-journal';
import { canonical } from '../../src/sync/canonical';
import { CrmSync } from '../../src/sync/crm-sync';
import type { SyncJournalClaims } from '../../src/sync/journal';
import { SyncJournalError } from '../../src/sync/journal-error';
import { throughMsw } from '../support/fake-harness';
import { silentRelay, startPostgres, type TestPostgres } from '../support/postgres';
import { type ErpSource, erpSource, withClaims } from '../support/sync';
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

  /** Another worker creating account A0 of erpSource(): its claim, and how it ends (A0 created, committed). */
  async function otherCreatingA0(schema: string, tenant: string, crm: CrmClient) {
    const journal = postgresJournal(postgres.pool(), { schema });
    await journal.open();
    const claims = journal.claims as SyncJournalClaims;
    const form = canonical({ name: 'Account 0', industry: 'Retail' });
    const intent = {
      state: 'sending' as const,
      crmId: undefined,
      hash: form.hash,
      data: form.json,
      runId: 'run_other',
    };
    let fence: number | undefined;
    return {
      async claim() {
        const [claim] = await claims.claim(tenant, 'run_other', [
          { intent: entry('accounts', 'A0', intent), resend: false },
        ]);
        expect(claim?.outcome).toBe('claimed');
        fence = (claim as { fence: number }).fence;
      },
      async commit() {
        const account = await crm.accounts.create({ name: 'Account 0', industry: 'Retail' });
        const synced = entry('accounts', 'A0', { ...intent, state: 'synced', crmId: account.id });
        expect(await claims.commit(tenant, { put: [synced] }, fence as number)).toBe(true);
      },
    };
  }

  test('a record another worker is creating takes no slot: the run sends the rest of its list first, then counts it as that worker left it', async () => {
    const { fake, baseUrl } = await throughMsw();
    const schema = fresh();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const other = await otherCreatingA0(schema, fake.tenantId, crm);
    await other.claim();
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema }), settleMs: 0 });
    // One slot: a record waited for in it would hold back every record after it.
    const run = sync.run({ accounts: erpSource(4).accounts }, { concurrency: 1 });

    await vi.waitFor(() => expect(fake.store.accounts.size).toBe(3), { timeout: 10_000, interval: 20 });
    await other.commit();
    const report = await run;

    expect(report).toMatchObject({ created: 3, unchanged: 1, failed: [], inDoubt: [], skipped: [] });
    expect([...fake.store.accounts.values()].map((a) => a.name).sort()).toEqual([
      'Account 0',
      'Account 1',
      'Account 2',
      'Account 3',
    ]);
  });

  test("a key another worker claims between the read of its entry and this run's claim is set aside too, and waited for at the end of its list", async () => {
    const { fake, baseUrl } = await throughMsw();
    const schema = fresh();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const other = await otherCreatingA0(schema, fake.tenantId, crm);
    const journal = postgresJournal(postgres.pool(), { schema });
    const claims = journal.claims as SyncJournalClaims;
    let raced = false;
    // The other worker's claim lands just before this run's first claim of A0.
    const racing = withClaims(journal, {
      claim: async (...args) => {
        if (!raced && args[2].some((r) => r.intent.key === 'A0')) {
          raced = true;
          await other.claim();
        }
        return claims.claim(...args);
      },
    });
    const sync = new CrmSync(crm, { journal: racing, settleMs: 0 });
    const run = sync.run({ accounts: erpSource(4).accounts }, { concurrency: 1 });

    await vi.waitFor(() => expect(fake.store.accounts.size).toBe(3), { timeout: 10_000, interval: 20 });
    expect(raced).toBe(true);
    await other.commit();
    const report = await run;

    expect(report).toMatchObject({ created: 3, unchanged: 1, failed: [], inDoubt: [], skipped: [] });
    expect(fake.store.accounts.size).toBe(4);
  });

  test("a create's outcome is written to the shared journal while the run's slot sends the next create", async () => {
    const { fake, baseUrl } = await throughMsw();
    const journal = postgresJournal(postgres.pool(), { schema: fresh() });
    const claims = journal.claims as SyncJournalClaims;
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    // Postgres slow to answer the commit of A0's outcome.
    const slow = withClaims(journal, {
      commit: async (...args) => {
        if (args[1].put?.[0]?.key === 'A0') await gate;
        return claims.commit(...args);
      },
    });
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: slow, settleMs: 0 });
    const source = erpSource(2);
    const run = sync.run({ accounts: source.accounts, contacts: source.contacts }, { concurrency: 1 });

    await vi.waitFor(() => expect(fake.store.accounts.size).toBe(2), { timeout: 10_000, interval: 20 });
    // A0's children wait for its id, which its outcome gives.
    expect(fake.store.contacts.size).toBe(0);
    open();
    const report = await run;

    expect(report).toMatchObject({ created: 6, failed: [], inDoubt: [], skipped: [] });
    const a0 = (await journal.get(fake.tenantId, 'accounts', ['A0'])).get('A0');
    expect(a0).toMatchObject({ state: 'synced' });
    expect([...fake.store.contacts.values()].filter((c) => c.accountId === a0?.crmId)).toHaveLength(2);
  });

  test("removed: 'deactivate' is refused with a shared journal, and nothing is sent", async () => {
    const { fake, baseUrl } = await throughMsw();
    const crm = new CrmClient({ ...fake.credentials, baseUrl });
    const sync = new CrmSync(crm, { journal: postgresJournal(postgres.pool(), { schema: fresh() }) });

    await expect(sync.run(erpSource(1), { removed: 'deactivate' })).rejects.toThrow(CrmValidationError);
    await expect(sync.run(erpSource(1), { removed: 'deactivate' })).rejects.toThrow(/slice/);
    expect(fake.requests).toEqual([]);
  });

  test('sync.resolve() settles records on a pool of one client, several at once, rather than waiting for a second client', async () => {
    const { fake, baseUrl } = await throughMsw();
    // No second client ever: a statement that waited for one fails after 10 s, as the pool's timeout says.
    const pool = postgres.pool({ max: 1, connectionTimeoutMillis: 10_000 });
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: postgresJournal(pool, { schema: fresh() }), settleMs: 0 });

    const settled = await Promise.allSettled([
      sync.resolve('accounts', 'A1', 'acc_1'),
      sync.resolve('accounts', 'A2', 'acc_2'),
      sync.resolve('contacts', 'C1', null),
    ]);

    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(await sync.idOf('accounts', 'A1')).toBe('acc_1');
    expect(await sync.idOf('accounts', 'A2')).toBe('acc_2');
    expect(fake.requests).toEqual([]);
  }, 60_000);

  test('a journal whose schema an operator dropped between two runs of a long-lived worker: the run says so and sends nothing, and the next run creates it anew', async () => {
    const { fake, baseUrl } = await throughMsw();
    const pool = postgres.pool({ max: 2 });
    const schema = fresh();
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    // One journal object for every job, as a queue worker keeps it.
    const sync = new CrmSync(crm, { journal: postgresJournal(pool, { schema }), settleMs: 0 });
    await sync.run({ accounts: erpSource(2).accounts });
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    const sent = fake.requests.length;

    const dropped = await sync.run({ accounts: erpSource(3).accounts }).catch((error: unknown) => error);

    expect(dropped).toBeInstanceOf(SyncJournalError);
    expect(dropped).toMatchObject({ reason: 'unavailable' });
    expect((dropped as Error).message).toMatch(
      new RegExp(
        `schema ${schema} is gone .*dropped while this journal was open.*The next run creates the journal anew`,
      ),
    );
    expect(fake.requests.length).toBe(sent);
    const next = await sync.run({ accounts: erpSource(3).accounts });
    expect(next.created).toBe(3);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${schema}.entries`)).rows).toEqual([{ n: 3 }]);
  });

  test("a pooled connection that went silent between two jobs (a NAT forgot it) fails the worker's next run once unanswered for a lease (5 s at least), rather than hanging it; the run after that syncs", async () => {
    const { fake, baseUrl } = await throughMsw();
    const relay = await silentRelay(postgres.port);
    const pool = postgres.pool({ port: relay.port, max: 1 });
    const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
    const sync = new CrmSync(crm, { journal: postgresJournal(pool, { schema: fresh(), leaseMs: 1000 }), settleMs: 0 });
    await sync.run({ accounts: erpSource(1).accounts });
    relay.silence();
    const sent = fake.requests.length;

    // Never answered: the old journal waited on the connection for good, and the test timed out.
    const silent = await sync.run({ accounts: erpSource(2).accounts }).catch((error: unknown) => error);

    expect(silent).toBeInstanceOf(SyncJournalError);
    expect((silent as Error).message).toMatch(/did not answer within 5000 ms: its connection was given up/);
    expect(fake.requests.length).toBe(sent);
    expect(await sync.run({ accounts: erpSource(2).accounts })).toMatchObject({ created: 1, unchanged: 1 });
    await relay.close();
  }, 60_000);

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

  const cut = new Error('The export ended mid-file.');
  test.each([
    ['its journal failing at a send gate', 'journal'],
    ['its export cut mid-list', 'export'],
  ] as const)(
    'a run stopped by %s gives up the claims it holds, and the next run creates the rest once',
    async (_, stop) => {
      const { fake, baseUrl } = await throughMsw({ latencyMs: 20 });
      const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
      const schema = fresh();
      const pool = postgres.pool();
      const journal = postgresJournal(pool, { schema, leaseMs: 1000 });
      const intend = (journal.claims as Required<SyncJournalClaims>).intend;
      let gates = 0;
      // The journal fails at the fifth send gate: the run stops with keys claimed and never sent.
      const failing = withClaims(journal, {
        intend: (tenant, intents) => {
          gates += 1;
          if (gates === 5)
            return Promise.reject(new SyncJournalError('unavailable', 'The journal could not be written.'));
          return intend(tenant, intents);
        },
      });
      const source = {
        accounts: erpSource(1).accounts,
        contacts: erpSource(20).contacts.map((c) => ({ ...c, accountKey: 'A0' })),
      };
      async function* cutAfter12() {
        yield* source.contacts.slice(0, 12);
        throw cut;
      }
      const error = await new CrmSync(crm, { journal: stop === 'journal' ? failing : journal, settleMs: 0 })
        .run(stop === 'journal' ? source : { ...source, contacts: cutAfter12() }, { concurrency: 6 })
        .catch((e: unknown) => e);
      if (stop === 'journal') expect(error).toBeInstanceOf(SyncJournalError);
      else expect(error).toBe(cut);

      // Every claim of the run given up: committed, or released at its end. One the process went on
      // renewing would keep its key from every run while the worker lives, its next run waiting on
      // it for good.
      const claims = async () =>
        (await pool.query(`SELECT pg_catalog.count(*)::int AS claims FROM ${schema}.claims`)).rows[0];
      await vi.waitFor(async () => expect(await claims()).toEqual({ claims: 0 }), { timeout: 20_000, interval: 50 });
      const report = await new CrmSync(crm, { journal, settleMs: 0 }).run(source, { concurrency: 6 });
      expect(report).toMatchObject({ failed: [], inDoubt: [], skipped: [] });
      const emails = [...fake.store.contacts.values()].map((c) => c.email);
      expect(new Set(emails).size).toBe(40);
      expect(emails).toHaveLength(40);
    },
  );

  test.each([
    ['the same journal (a long-lived worker)', true],
    ['a new journal (a new process)', false],
  ])(
    'Postgres lost mid-run: the run rejects saying so, and the next run on %s settles what was in flight without duplicating',
    async (_, same) => {
      const own = await startPostgres();
      try {
        const { fake, baseUrl } = await throughMsw({ latencyMs: 20 });
        const crm = new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 });
        const source = {
          accounts: erpSource(1).accounts,
          contacts: erpSource(20).contacts.map((c) => ({ ...c, accountKey: 'A0' })),
        };
        const journal = postgresJournal(own.pool(), { leaseMs: 2000 });
        const sync = new CrmSync(crm, { journal, settleMs: 0 });
        // Observed from the start: the run may reject while Postgres is still shutting down.
        const run = sync.run(source, { concurrency: 6 }).catch((e: unknown) => e);
        // Postgres goes once some contacts are on their way.
        while (fake.requests.length < 8) await new Promise((resolve) => setTimeout(resolve, 2));
        await own.stop();
        const error = await run;

        expect(error).toBeInstanceOf(SyncJournalError);
        expect(error).toMatchObject({
          reason: 'unavailable',
          message: expect.stringMatching(/could not be \w+ .*settled as in doubt by the next run/),
        });
        const sentWhileDown = fake.requests.length;
        await own.restart();
        const again = new CrmSync(crm, {
          journal: same ? journal : postgresJournal(own.pool(), { leaseMs: 2000 }),
          settleMs: 0,
        });
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
    },
    120_000,
  );
});
