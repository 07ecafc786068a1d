import { describe, expect, test } from 'vitest';
import { CrmClient } from '../../src/index';
import { createFakeCrm, type FakeCrmOptions } from '../../src/testing/index';
import { throughMsw } from '../support/fake-harness';

async function client(options: FakeCrmOptions = {}) {
  const { fake, baseUrl } = await throughMsw(options);
  return { fake, crm: new CrmClient({ ...fake.credentials, baseUrl, maxRetries: 0 }) };
}

describe("the fake's storage", () => {
  test("storage: 'normalizing' stores strings trimmed, emails in lower case, phones as + and digits, date-times to the second in UTC", async () => {
    const { crm } = await client({ storage: 'normalizing' });
    const account = await crm.accounts.create({ name: '  Acme  ', phone: '(555) 010-0100' });
    const contact = await crm.contacts.create({
      accountId: account.id,
      email: 'Ada.Lovelace@Example.test',
      firstName: ' Ada ',
      mobile: '+44 20 7946 0000',
    });
    const opportunity = await crm.opportunities.create({
      accountId: account.id,
      name: 'Deal',
      expectedCloseDate: '2026-12-31T23:59:59.999+01:00',
    });
    const activity = await crm.activities.create({
      opportunityId: opportunity.id,
      type: 'call',
      subject: ' Call ',
      activityDate: '2026-11-02T11:00:00.250+01:00',
    });

    expect([account.name, account.phone]).toEqual(['Acme', '5550100100']);
    expect([contact.email, contact.firstName, contact.mobile]).toEqual([
      'ada.lovelace@example.test',
      'Ada',
      '+442079460000',
    ]);
    expect(opportunity.expectedCloseDate).toBe('2026-12-31T22:59:59Z');
    expect([activity.subject, activity.activityDate]).toEqual(['Call', '2026-11-02T10:00:00Z']);
    // An update is stored the same way.
    const updated = await crm.contacts.update(contact.id, { lastName: ' Lovelace ', phone: '555 010 0199' });
    expect([updated.lastName, updated.phone]).toEqual(['Lovelace', '5550100199']);
  });

  test('by default every value is stored as it was sent', async () => {
    const { crm } = await client();
    const account = await crm.accounts.create({ name: '  Acme  ' });
    const contact = await crm.contacts.create({ accountId: account.id, email: 'Ada@Example.test', phone: '(555) 010' });
    expect([account.name, contact.email, contact.phone]).toEqual(['  Acme  ', 'Ada@Example.test', '(555) 010']);
  });

  test('an unknown storage is refused with a RangeError', () => {
    expect(() => createFakeCrm({ storage: 'lossy' as never })).toThrow(
      new RangeError(`storage must be 'as-sent' or 'normalizing', not "lossy"`),
    );
  });
});
