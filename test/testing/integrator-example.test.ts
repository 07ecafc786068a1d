import { expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { createFakeCrm } from '../../src/testing/index';
import { server } from '../support/msw-server';

/*
 * How an integrator tests their own code with the fake: the function under test, the fake's
 * handlers for this test, then assertions on what the CRM received and now holds.
 */

// --- The integrator's code under test -------------------------------------------------------

interface Deal {
  company: string;
  title: string;
  value: number;
  firstNote: string;
}

/** Pushes a deal from the integrator's system into the CRM; returns the opportunity id. */
async function syncDeal(crm: CrmClient, deal: Deal): Promise<string> {
  const account = await crm.accounts.create({ name: deal.company });
  const opportunity = await crm.opportunities.create({ name: deal.title, accountId: account.id, amount: deal.value });
  await crm.activities.create({ opportunityId: opportunity.id, type: 'note', subject: deal.firstNote });
  return opportunity.id;
}

// --- The integrator's test ------------------------------------------------------------------

test('syncDeal creates the account, then the opportunity on it, then its first activity', async () => {
  const fake = createFakeCrm();
  server.use(...fake.handlers);

  const id = await syncDeal(new CrmClient(fake.credentials), {
    company: 'Globex',
    title: 'Globex pilot',
    value: 5000,
    firstNote: 'Signed the NDA',
  });

  expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
    'POST /integrations/v1/accounts 201',
    'POST /integrations/v1/opportunities 201',
    'POST /integrations/v1/activities 201',
  ]);
  const accountId = [...fake.store.accounts.values()][0]?.id;
  expect(fake.requests[1]?.body).toEqual({ tenantId: fake.tenantId, name: 'Globex pilot', accountId, amount: 5000 });

  const opportunity = fake.store.opportunities.get(id);
  expect(opportunity).toMatchObject({ name: 'Globex pilot', accountId, amount: 5000, tenantId: fake.tenantId });
  expect(fake.store.activitiesOf('opportunity', id)).toEqual([
    expect.objectContaining({ type: 'note', subject: 'Signed the NDA' }),
  ]);
});
