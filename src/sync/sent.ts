import type { SyncJournalEntry, SyncType } from './journal';
import { stampedDate } from './settle';

/**
 * The fields of each type that a person searches the CRM by to find a record in doubt: an
 * account's or an opportunity's name (with the opportunity's account and amount, which tell two
 * deals of one name apart), a contact's email and names, an activity's subject, kind, date and
 * what it relates to. Only these are shown: never the rest of the data (which may hold notes,
 * phones), and never a credential, which a record's data does not hold.
 */
export const SENT_FIELDS: Readonly<Record<SyncType, readonly string[]>> = {
  accounts: ['name'],
  contacts: ['email', 'firstName', 'lastName'],
  opportunities: ['name', 'accountId', 'amount'],
  activities: ['subject', 'type', 'activityDate', 'opportunityId', 'relatedToType', 'relatedToId'],
};

/** The identifying fields of a record's body as it was sent (see {@link SyncInDoubt.sent}). */
export type SyncSentFields = Readonly<Record<string, string | number | boolean>>;

/**
 * The identifying fields ({@link SENT_FIELDS}) of the body that a journal entry says was sent:
 * its canonical data, references resolved, and an activity sent without a date given the date
 * the sync stamped it with. A field the body did not hold is left out; data that cannot be read
 * gives `{}`.
 */
export function sentOf(entry: Pick<SyncJournalEntry, 'type' | 'data' | 'attemptedAt'>): SyncSentFields {
  let data: unknown;
  try {
    data = JSON.parse(entry.data);
  } catch {
    return {};
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
  const body = data as Record<string, unknown>;
  const sent: Record<string, string | number | boolean> = {};
  for (const field of SENT_FIELDS[entry.type] ?? []) {
    const value = Object.hasOwn(body, field) ? body[field] : undefined;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') sent[field] = value;
  }
  if (entry.type === 'activities' && sent.activityDate === undefined && entry.attemptedAt !== undefined) {
    sent.activityDate = stampedDate(entry.attemptedAt);
  }
  return sent;
}
