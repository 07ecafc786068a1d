import { connectionOptions, type OptionSpec } from '../global-options';

/** The journal, which every `crm sync` command reads: a SQLite file, or a Postgres schema. */
const journalOption = {
  journal: { type: 'string', value: '<path>', help: 'the SQLite journal file (created on the first run)' },
  postgres: {
    type: 'string',
    value: '[<url>]',
    help: 'the Postgres journal a fleet of workers shares, instead of --journal; without a value, DATABASE_URL (which keeps the password off the command line)',
  },
  schema: { type: 'string', value: '<name>', help: "with --postgres, the journal's schema (default: crm_sync)" },
} as const satisfies Record<string, OptionSpec>;

/** The four source lists, parents first. */
const sourceOptions = {
  accounts: { type: 'string', value: '<file|->', help: 'accounts, as CSV (.csv) or NDJSON; - for standard input' },
  contacts: { type: 'string', value: '<file|->', help: 'contacts, as CSV or NDJSON' },
  opportunities: { type: 'string', value: '<file|->', help: 'opportunities, as CSV or NDJSON' },
  activities: { type: 'string', value: '<file|->', help: 'activities, as CSV or NDJSON' },
} as const satisfies Record<string, OptionSpec>;

/** How CSV files are read: their columns (a mapping file), separator and encoding. */
const readOptions = {
  map: {
    type: 'string',
    value: '<file.json>',
    help: "a mapping file: each type's key and fields from your export's own columns, with date, number, boolean and value transforms",
  },
  delimiter: {
    type: 'string',
    value: ', | ; | tab',
    help: 'the CSV separator of every file (default: the one the header line uses)',
  },
  encoding: {
    type: 'string',
    value: 'utf-8|latin1|windows-1252|utf-16le',
    help: 'the encoding of every CSV file (default: UTF-8; a byte order mark decides)',
  },
} as const satisfies Record<string, OptionSpec>;

const removedOption = {
  removed: {
    type: 'string',
    value: 'keep|deactivate',
    help: 'accounts and contacts a complete file no longer holds: left (default) or set inactive',
  },
  'max-removed': {
    type: 'string',
    value: '<n|n%>',
    help: 'the most records of a type --removed deactivate removes: a count, or a share of those synced (default: 10, or 10% if more)',
  },
} as const satisfies Record<string, OptionSpec>;

/** The options of each `crm sync` command, in the order their help lists them. */
export const syncOptions = {
  plan: {
    ...journalOption,
    ...sourceOptions,
    ...readOptions,
    ...removedOption,
    json: { type: 'boolean', help: 'the plan as NDJSON (one entry a line, then the counts), even on a terminal' },
    summary: { type: 'boolean', help: 'only the counts and the first 5 entries of each action' },
    'allow-invalid': {
      type: 'boolean',
      help: 'exit 0 even when records are invalid or blocked (by default such a plan exits 13)',
    },
    ...connectionOptions,
  },
  apply: {
    ...journalOption,
    ...sourceOptions,
    ...readOptions,
    ...removedOption,
    concurrency: { type: 'string', value: '<n>', help: 'requests in flight at most, 1 to 256 (default: 8)' },
    'in-doubt': {
      type: 'string',
      value: 'report|recreate',
      help: 'records in doubt the API cannot look for (accounts, opportunities, activities not of an opportunity): listed (default), or created again, accepting a duplicate',
    },
    report: { type: 'string', value: '<file>', help: 'write the run report there, as JSON' },
    failed: {
      type: 'string',
      value: '<path>',
      help: "write each failed or invalid row as read, with error and field columns, in the source's format: a file (one source) or a directory (a file per source); fixed, it loads again",
    },
    ids: {
      type: 'string',
      value: '<file.csv>',
      help: 'write type,key,crmId of every record the journal maps, after the run',
    },
    summary: { type: 'boolean', help: 'only the counts and the first 5 of each problem (failed, in doubt, skipped)' },
    'progress-every': {
      type: 'string',
      value: '<seconds>',
      help: 'off a terminal, a progress line on stderr this often (default: 10; 0: none)',
    },
    json: { type: 'boolean', help: 'progress lines as NDJSON' },
    ...connectionOptions,
  },
  status: {
    ...journalOption,
    json: { type: 'boolean', help: 'as NDJSON (one tenant a line), even on a terminal' },
    ...connectionOptions,
  },
  ids: {
    ...journalOption,
    json: { type: 'boolean', help: 'as NDJSON ({"type","key","crmId"} a line) instead of CSV' },
    ...connectionOptions,
  },
  resolve: {
    ...journalOption,
    type: {
      type: 'string',
      value: '<type>',
      help: 'accounts, contacts, opportunities or activities; required with --key and --match',
    },
    key: { type: 'string', value: '<key>', help: "the record's key in the source" },
    id: { type: 'string', value: '<crm-id>', help: 'the id the CRM holds the record by' },
    absent: { type: 'boolean', help: 'the record is not in the CRM: the next apply creates it' },
    from: {
      type: 'string',
      value: '<file>',
      help: 'settle every row of a CSV or NDJSON file (type, key, crmId or id; empty or absent: not in the CRM) in one change, or none',
    },
    match: {
      type: 'string',
      value: '<export.csv>',
      help: "settle the --type's records in doubt against an export of the CRM's records (an id column and the fields), on the fields sent",
    },
    'absent-if-missing': {
      type: 'boolean',
      help: 'with --match, settle a record the export does not hold as absent (the next apply creates it)',
    },
    apply: { type: 'boolean', help: 'with --match, write what it settles (without it, a dry run)' },
    json: { type: 'boolean', help: 'with --match, as NDJSON (a record a line, then the summary), even on a terminal' },
    force: {
      type: 'boolean',
      help: 'with --absent or --from, settle a record that is not in doubt (synced: the next apply creates it again); with --match --absent-if-missing, settle absent more than 10 and more than half of those in doubt',
    },
    ...connectionOptions,
  },
} as const satisfies Record<string, Record<string, OptionSpec>>;

/** A `crm sync` command's name. */
export type SyncCommand = keyof typeof syncOptions;
