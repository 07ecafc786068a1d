import type { SyncJournalEntry, SyncJournalState, SyncType } from '../sync/journal';
import { SyncJournalError } from '../sync/journal-error';

/*
 * The one shape of an entry's row, written and read by the records, the claims and the commits:
 * each statement that writes or reads entries names the same columns, encodes a string the same
 * way, and refuses the same unreadable row, so that what one module writes another reads back.
 */

// Every function the statements call, and each operator whose operands are not both of one
// built-in type, is named in pg_catalog: the caller's search_path is the session's, and a function
// of the same name in a schema before pg_catalog, or of a closer argument type in any schema on it
// (`public.nextval(text)`, `public.unnest(text[])`), would run in the journal's statements instead.
// Multi-argument unnest is written as the ROWS FROM of one-argument ones that it stands for.
export const COLUMNS = 'type, key, state, crm_id, hash, data, attempted_at, request_id, run_id';
/** What an entry row written again takes from the new one: every column but its identity. */
export const UPSERT = `ON CONFLICT (tenant, type, key) DO UPDATE SET state = excluded.state, crm_id = excluded.crm_id,
  hash = excluded.hash, data = excluded.data, attempted_at = excluded.attempted_at,
  request_id = excluded.request_id, run_id = excluded.run_id`;
/** The entries' rows from parameters: tenant $1, types $2, keys $3, and entryColumns() from `$from` on. */
export const entriesFrom = (from: number): string =>
  `SELECT $1, * FROM ROWS FROM (pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bytea[]), ${[
    'text',
    'bytea',
    'bytea',
    'bytea',
    'bigint',
    'bytea',
    'bytea',
  ]
    .map((sqlType, i) => `pg_catalog.unnest($${from + i}::${sqlType}[])`)
    .join(', ')})`;

export interface Row {
  type: string;
  key: Buffer;
  state: string;
  crm_id: Buffer | null;
  hash: Buffer;
  data: Buffer;
  attempted_at: string | null;
  request_id: Buffer | null;
  run_id: Buffer;
}

const STATES: ReadonlySet<string> = new Set<SyncJournalState>(['sending', 'inDoubt', 'synced', 'deactivated']);
const TYPES: ReadonlySet<string> = new Set<SyncType>(['accounts', 'contacts', 'opportunities', 'activities']);

/**
 * Every string is stored as its UTF-8 bytes (schema.ts): Postgres text holds no NUL. A lone
 * surrogate has no UTF-8 form (two such keys would meet in U+FFFD), so it is refused.
 */
export function bytesOf(value: string, what: string): Buffer {
  if (!value.isWellFormed()) {
    throw new TypeError(`A ${what} given to the Postgres sync journal is not well-formed UTF-16 (a lone surrogate).`);
  }
  return Buffer.from(value, 'utf8');
}

/** The columns of `entries` after their type and key, one array each, strings encoded (see entriesFrom()). */
export function entryColumns(entries: readonly SyncJournalEntry[]): unknown[][] {
  return [
    entries.map((e) => e.state),
    entries.map((e) => (e.crmId === undefined ? null : bytesOf(e.crmId, 'CRM id'))),
    entries.map((e) => bytesOf(e.hash, 'hash')),
    entries.map((e) => bytesOf(e.data, 'data')),
    entries.map((e) => (e.attemptedAt === undefined ? null : String(e.attemptedAt))),
    entries.map((e) => (e.requestId === undefined ? null : bytesOf(e.requestId, 'request id'))),
    entries.map((e) => bytesOf(e.runId, 'run id')),
  ];
}

export const byTypeAndKey = (a: { type: string; key: string }, b: { type: string; key: string }): number =>
  a.type < b.type ? -1 : a.type > b.type ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** The entry a row holds; a row of a state or type this version does not know is refused as corrupt. */
export function entryOf(row: Row, schema: string): SyncJournalEntry {
  if (!STATES.has(row.state) || !TYPES.has(row.type)) {
    throw new SyncJournalError(
      'corrupt',
      `The Postgres sync journal in schema ${schema} holds an entry it cannot read (type ${row.type}, state ${row.state}).`,
    );
  }
  return {
    type: row.type as SyncType,
    key: row.key.toString('utf8'),
    state: row.state as SyncJournalState,
    crmId: row.crm_id?.toString('utf8'),
    hash: row.hash.toString('utf8'),
    data: row.data.toString('utf8'),
    attemptedAt: row.attempted_at === null ? undefined : Number(row.attempted_at),
    requestId: row.request_id?.toString('utf8'),
    runId: row.run_id.toString('utf8'),
  };
}
