/** The four lists of records the fake can export, by the API's names. */
export type FakeExportType = 'accounts' | 'contacts' | 'opportunities' | 'activities';

/** The types `exportCsv()` takes, in the order of the API. */
export const FAKE_EXPORT_TYPES: readonly FakeExportType[] = ['accounts', 'contacts', 'opportunities', 'activities'];

/** A cell: text as it is, a number or boolean as written, an object as JSON, null and undefined empty. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // RFC 4180: quoted when it holds a comma, a quote or a line break, or spaces a reader might trim.
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Records as CSV (RFC 4180, CRLF line ends): a header of `id` and then every other field any
 * record has, in the order they are first met, and a row per record.
 */
export function csvOf(records: readonly Readonly<Record<string, unknown>>[]): string {
  const columns = ['id'];
  const seen = new Set(columns);
  for (const record of records) {
    for (const field of Object.keys(record)) {
      if (!seen.has(field)) {
        seen.add(field);
        columns.push(field);
      }
    }
  }
  const rows = records.map((record) =>
    columns.map((c) => cell(Object.hasOwn(record, c) ? record[c] : undefined)).join(','),
  );
  return `${[columns.join(','), ...rows].join('\r\n')}\r\n`;
}
