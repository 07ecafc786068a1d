/** A source record as read (sources.ts's `SourceRecord`). */
type SourceRecord = Record<string, unknown>;

/** Where a record's text as read is kept on it: a symbol, so that no engine field or spread sees it. */
const RAW = Symbol('crm.sync.raw');

/** A source record's text as it was read, for `--failed` to write back as it came. */
export interface RawText {
  /** The record's own text, without its line end: a CSV row (quoted fields and all) or an NDJSON line. */
  readonly text: string;
  /** A CSV file's header row as read (without its line end); undefined for NDJSON. */
  readonly header: string | undefined;
}

/** Keeps `raw` on `record` (not enumerable: the engine, JSON and spreads never see it), and gives the record. */
export function withRaw(record: SourceRecord, raw: RawText): SourceRecord {
  Object.defineProperty(record, RAW, { value: raw, enumerable: false });
  return record;
}

/** The text a record was read from, when its reader kept it. */
export const rawOf = (record: SourceRecord): RawText | undefined =>
  (record as Record<symbol, RawText | undefined>)[RAW];
