import { SENT_FIELDS } from '../../sync/sent';
import { columns, optionRows, typeOf } from '../help';
import { columnsOf, SOURCE_TYPES } from './columns';
import { type SyncCommand, syncOptions } from './options';

const SUMMARIES: Readonly<Record<SyncCommand, string>> = {
  plan: 'what apply would do, sending nothing',
  apply: 'load and sync: create, update, deactivate; resumes after a crash without duplicates',
  status:
    "the journal's tenants, a run lock held and its age, last runs (live, ended, killed), and records in flight, in doubt or failed",
  resolve:
    'settle records in doubt: one (--id it has, or --absent), a file of them (--from), or by an export (--match)',
  ids: 'print type,key,crmId of every record the journal maps to the CRM (CSV; NDJSON with --json)',
};

const USAGES: Readonly<Record<SyncCommand, string>> = {
  plan: 'crm sync plan (--journal <path> | --postgres [<url>] [--schema <name>]) [--accounts <file>] [--contacts <file>] [--opportunities <file>] [--activities <file>] [--map <file.json>] [--delimiter , | ; | tab] [--encoding <encoding>] [--removed keep|deactivate] [--max-removed <n|n%>] [--summary] [--allow-invalid] [options]',
  apply:
    'crm sync apply (--journal <path> | --postgres [<url>] [--schema <name>]) [--accounts <file>] ... [--map <file.json>] [--delimiter , | ; | tab] [--encoding <encoding>] [--removed keep|deactivate] [--max-removed <n|n%>] [--concurrency <n>] [--in-doubt report|recreate] [--report <file>] [--failed <path>] [--ids <file.csv>] [--summary] [--progress-every <seconds>] [--json] [options]',
  ids: 'crm sync ids (--journal <path> | --postgres [<url>] [--schema <name>]) [--tenant <id>] [--json]',
  status: 'crm sync status (--journal <path> | --postgres [<url>] [--schema <name>]) [options]',
  resolve:
    'crm sync resolve (--journal <path> | --postgres [<url>] [--schema <name>]) (--type <type> --key <key> (--id <crm-id> | --absent) | --from <file> | --type <type> --match <export.csv> [--absent-if-missing] [--apply]) [--force] [options]',
};

/** Each type's CSV columns, with their types and enum values: from the create commands' schemas. */
const csvColumns = (): string =>
  SOURCE_TYPES.map((type) => {
    const { references, fields } = columnsOf(type);
    const rows: [string, string][] = [
      ['key', `string, the record's id in your system (required)`],
      ...references.map((name): [string, string] => [
        name,
        `string, the key of its ${name.replace(/Key$/, '')} in the source`,
      ]),
      ...fields.map((field): [string, string] => [
        field.name,
        `${typeOf(field)}${field.required ? ' (required)' : ''}`,
      ]),
    ];
    return `CSV columns of --${type}:\n${columns(rows)}`;
  }).join('\n\n');

const REMOVALS = `Removals: with --removed deactivate, a type's removals are measured before any is sent; more
than 10 records and more than 10% of the type's synced records are refused (none of them is sent,
the rest goes on, exit 9) unless --max-removed allows them (50, or 5%). A list with no record at
all is refused before anything is sent (exit 2) unless --max-removed is given.`;

const SOURCES = `Sources: a .csv file is CSV (RFC 4180, a header of the columns below, an empty cell is an absent
field, CRLF taken); any other is NDJSON, one record a line:
{ "key": ..., "data": { ... }, "accountKey"?, "contactKey"?, "opportunityKey"? }. Standard input
(-) is read by its first character, for one list at most. A bad file exits 2 before anything is sent,
and so does a file without a column of a required field. The separator is the one the header line
uses (, ; or tab) unless --delimiter says; the encoding UTF-8 unless --encoding says (latin1,
windows-1252, utf-16le), a byte order mark deciding (a head that is not UTF-8 is read as
windows-1252, said on stderr). A compressed or binary file is refused as such (gzip, xlsx).`;

const MAPPING = `Mapping an ERP export (--map erp-map.json): each type's "key" column, its reference columns
(accountKey, contactKey, opportunityKey) and its "fields", by SDK name. A field is a column name, or
{ "column" | "value", and at most one of "date", "number", "boolean", "values" }:
  {
    "$schema": "./node_modules/crm-integration-sdk/sync-map.schema.json",
    "accounts": {
      "key": "Kundennr", "delimiter": ";", "encoding": "windows-1252",
      "fields": {
        "name": "Firma",
        "annualRevenue": { "column": "Umsatz", "number": { "decimal": ",", "thousands": "." } },
        "status": { "column": "Status", "values": { "aktiv": "active", "inaktiv": "inactive" } },
        "industry": { "value": "Wholesale" }
      }
    },
    "contacts": {
      "key": "PersNr", "accountKey": "Kundennr",
      "fields": { "isPrimary": { "column": "Haupt", "boolean": { "true": ["J", "ja"], "false": ["N", "nein"] } } }
    },
    "opportunities": {
      "key": "AuftragNr", "accountKey": "Kundennr",
      "fields": {
        "name": "Bezeichnung",
        "expectedCloseDate": { "column": "Abschluss", "date": { "format": "dd.MM.yyyy", "timeZone": "Europe/Berlin" } }
      }
    }
  }
"date": Unicode tokens as date-fns reads them (dd.MM.yyyy, yyyy-MM-dd HH:mm) in an IANA zone; a date
alone is that day's midnight there; sent with the zone's offset (2027-01-31T00:00:00+01:00); a time
the clock skips is invalid. "number": groups of three between thousands separators (1.200.000,50).
"boolean" and "values": matched trimmed and without regard to case; a value not listed makes its
record invalid, naming it. Cells are trimmed unless "trim": false; an empty cell leaves the field
out unless "empty": "empty-string" (on a type or a field). "delimiter" and "encoding" on a type
apply to its file, over the flags. A type without a mapping reads its columns by field name; one
with a mapping reads only the columns it names. An unknown key or field, a transform the field's
type does not take, a zone that does not exist or a format date-fns cannot read exits 2 at start;
a mapped column missing from the header exits 2 before anything is sent, naming file, column, field.`;

const RESOLVE = `--from <file>: CSV with a header (type,key,crmId; id is read as crmId; other columns ignored, so
a file of type,key,crmId as written for the journal's ids is taken as it is) or NDJSON
({"type","key","crmId"} a line). An empty crmId, or "absent", says the record is not in the CRM. One
change: a row whose record is not in doubt (unless --force) or whose id the journal gives another
key is refused with its line (the header is line 1), and nothing of the file is applied (exit 2).

--match <export.csv> --type <type>: each record of that type in doubt is compared with the export's
rows on the fields that were sent and that the export has a column of (named as the API names
them), trimmed, names and emails without regard to case, numbers and dates by value. One match: it
is settled to that id; none: it stays in doubt, or is settled absent with --absent-if-missing (an
export may be partial); several: it stays in doubt, listed. An id the journal maps to another key
is never taken. A dry run unless --apply. Exit 9 while records stay in doubt, 0 when none.
A record must have one of its type's identifying fields among the export's columns:
${SOURCE_TYPES.map((type) => `  ${type}: ${SENT_FIELDS[type].join(', ')}`).join('\n')}`;

const EXIT_TEXT = `Exit codes (those of crm --help):
  0   done: every record synced, or a plan with nothing invalid or blocked
  2   bad usage or a bad file: nothing was sent
  3   the API key or tenant was refused
  9   apply finished, but some records failed or are in doubt, or removals were refused: load the
      --failed file once fixed, and settle what is in doubt (crm sync status, crm sync resolve)
  10  another run holds the journal's lock: try again later
  11  the journal is corrupt, not a journal, or written by a newer crm: restore it from a backup
  12  the journal cannot be opened or written (the message says why: a missing directory, no
      write permission, a database out of reach)
  13  plan found invalid or blocked records (--allow-invalid exits 0 for them)`;

const FAILED = `--failed <path>: after the run, each source row that failed or was invalid (and each held back
because its parent failed) is written as it was read, with two columns added: error (why) and
field (the field, by its source column). CSV keeps its delimiter and encoding; NDJSON gets "error"
and "field" properties. With one source <path> is a file; with several, a directory holding a file
per source that had failed rows, named as the source. A source with no failed row gets no file
(an old one is removed). Fix the rows and load the file again: the error and field columns are
ignored. A key repeated in the source: its first row is the one synced, and each repeat is refused.
--ids <file.csv>: after the run, type,key,crmId of every record the journal maps (crm sync ids
prints the same), which crm sync resolve --from reads back.
Progress: on a terminal, one live line; off one (cron, a container's log), a line every 10 s
(--progress-every), as NDJSON with --json. --summary: the counts and the first 5 of each problem.`;

/** `crm sync --help`: the commands, the sources and every type's columns. */
export const syncHelp = (): string =>
  `${[
    'Usage: crm sync <command> (--journal <path> | --postgres [<url>]) [options]',
    'Loads and syncs a tenant from CSV or NDJSON files, through crm-integration-sdk/sync: a journal keeps\nwhat was synced, so a re-run sends only what changed and a crash never duplicates a record.',
    `Commands:\n${columns(Object.entries(SUMMARIES).map(([name, summary]) => [name, summary]))}`,
    SOURCES,
    MAPPING,
    csvColumns(),
    EXIT_TEXT,
    'Run crm sync <command> --help for its options.',
  ].join('\n\n')}\n`;

/** `crm sync <command> --help`. */
export const syncCommandHelp = (command: SyncCommand): string => {
  const sections = [
    `Usage: ${USAGES[command]}`,
    `${SUMMARIES[command]}.`,
    `Options:\n${columns(optionRows(syncOptions[command]))}`,
  ];
  if (command === 'plan' || command === 'apply') sections.push(REMOVALS, SOURCES, MAPPING, csvColumns());
  if (command === 'resolve') sections.push(RESOLVE);
  if (command === 'plan') {
    sections.push(
      'Exit 13 when the plan finds invalid or blocked records (apply would not load them): --allow-invalid\nexits 0 for them. --summary prints the counts and the first 5 entries of each action.',
    );
  }
  if (command === 'ids') {
    sections.push(
      "Prints type,key,crmId of every record the journal maps (synced or deactivated), for the tenant of\n--tenant or CRM_TENANT_ID, or the journal's only one. Reads the journal only; no API key needed.",
    );
  }
  if (command === 'apply') sections.push(FAILED);
  if (command === 'apply') {
    sections.push(
      'On a terminal, stderr shows one live progress line. Ctrl-C stops after the requests in flight\nhave answered; a second Ctrl-C stops at once. Either way the next apply resumes.\nExit 9: finished, but some records failed or are in doubt, or the removals of a type were refused\n(listed on stderr).',
    );
  }
  return `${sections.join('\n\n')}\n`;
};
