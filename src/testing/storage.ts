/**
 * How the fake stores the fields of the records it is sent (`FakeCrmOptions.storage`):
 * - `'as-sent'` (the default): every value as it was sent;
 * - `'normalizing'`: as a server that reformats what it stores would, since the spec does not
 *   show how the service stores values: strings trimmed, emails in lower case, phone numbers
 *   (`phone`, `mobile`) as `+` and digits, date-times (`activityDate`, `expectedCloseDate`,
 *   `closeDate`) in UTC truncated to the second (`2026-11-02T10:00:00Z`). For testing code that
 *   matches records against what it sent, as the sync does to settle a record in doubt.
 */
export type FakeStorage = 'as-sent' | 'normalizing';

const DATE_FIELDS: ReadonlySet<string> = new Set(['activityDate', 'expectedCloseDate', 'closeDate']);
const PHONE_FIELDS: ReadonlySet<string> = new Set(['phone', 'mobile']);

/** Checks a `storage` option: a RangeError for anything but `'as-sent'` and `'normalizing'`. */
export function checkStorage(storage: unknown): FakeStorage {
  if (storage === undefined || storage === 'as-sent') return 'as-sent';
  if (storage === 'normalizing') return storage;
  throw new RangeError(`storage must be 'as-sent' or 'normalizing', not ${JSON.stringify(storage)}`);
}

/** A create's or an update's fields as a `'normalizing'` server stores them. Ids are kept as sent. */
export function normalized(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    out[field] = typeof value === 'string' && field !== 'id' && !field.endsWith('Id') ? stored(field, value) : value;
  }
  return out;
}

function stored(field: string, value: string): string {
  const trimmed = value.trim();
  if (field === 'email') return trimmed.toLowerCase();
  if (PHONE_FIELDS.has(field)) return `${trimmed.startsWith('+') ? '+' : ''}${trimmed.replace(/\D/g, '')}`;
  if (DATE_FIELDS.has(field)) {
    const at = Date.parse(trimmed);
    if (!Number.isNaN(at)) return new Date(Math.floor(at / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }
  return trimmed;
}
