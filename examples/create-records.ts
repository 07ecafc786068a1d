/**
 * Creates a small pipeline: an account, two contacts, an opportunity with three activities,
 * then moves the opportunity forward. Returns what it created.
 */
import type { Account, Activity, Contact, CrmClient, Opportunity } from 'crm-integration-sdk';

export interface CreatedRecords {
  account: Account;
  contacts: Contact[];
  opportunity: Opportunity;
  activities: Activity[];
}

export async function createRecords(crm: CrmClient): Promise<CreatedRecords> {
  const account = await crm.accounts.create({ name: 'Acme Ltd', status: 'prospect', industry: 'Manufacturing' });
  const contacts = [
    await crm.contacts.create({
      accountId: account.id,
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@acme.example',
      isPrimary: true,
    }),
    await crm.contacts.create({
      accountId: account.id,
      firstName: 'Charles',
      lastName: 'Babbage',
      email: 'charles@acme.example',
    }),
  ];
  const created = await crm.opportunities.create({
    name: 'Acme analytical engines',
    accountId: account.id,
    contactId: contacts[0]?.id,
    amount: 48_000,
    type: 'new_business',
    expectedCloseDate: new Date(Date.now() + 30 * 86_400_000),
  });
  const activities: Activity[] = [];
  for (const [type, subject] of [
    ['call', 'Discovery call'],
    ['meeting', 'On-site demo'],
    ['email', 'Proposal sent'],
  ] as const) {
    activities.push(
      await crm.activities.create({ opportunityId: created.id, type, subject, activityDate: new Date() }),
    );
  }
  const opportunity = await crm.opportunities.update(created.id, { stage: 'proposal', probability: 60 });
  return { account, contacts, opportunity, activities };
}
