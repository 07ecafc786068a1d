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
};

const USAGES: Readonly<Record<SyncCommand, string>> = {
  plan: 'crm sync plan (--journal <path> | --postgres [<url>] [--schema <name>]) [--accounts <file>] [--contacts <file>] [--opportunities <file>] [--activities <file>] [--removed keep|deactivate] [--max-removed <n|n%>] [options]',
  apply:
    'crm sync apply (--journal <path> | --postgres [<url>] [--schema <name>]) [--accounts <file>] ... [--removed keep|deactivate] [--max-removed <n|n%>] [--concurrency <n>] [--in-doubt report|recreate] [--report <file>] [options]',
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
field, UTF-8, a byte order mark and CRLF taken); any other is NDJSON, one record a line:
{ "key": ..., "data": { ... }, "accountKey"?, "contactKey"?, "opportunityKey"? }. Standard input
(-) is read by its first character, for one list at most. A bad file exits 2 before anything is sent.`;

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

/** `crm sync --help`: the commands, the sources and every type's columns. */
export const syncHelp = (): string =>
  `${[
    'Usage: crm sync <command> (--journal <path> | --postgres [<url>]) [options]',
    'Loads and syncs a tenant from CSV or NDJSON files, through crm-integration-sdk/sync: a journal keeps\nwhat was synced, so a re-run sends only what changed and a crash never duplicates a record.',
    `Commands:\n${columns(Object.entries(SUMMARIES).map(([name, summary]) => [name, summary]))}`,
    SOURCES,
    csvColumns(),
    'Exit codes: those of crm --help, and 9 when apply finished but some records failed or are in doubt,\nor the removals of a type were refused.',
    'Run crm sync <command> --help for its options.',
  ].join('\n\n')}\n`;

/** `crm sync <command> --help`. */
export const syncCommandHelp = (command: SyncCommand): string => {
  const sections = [
    `Usage: ${USAGES[command]}`,
    `${SUMMARIES[command]}.`,
    `Options:\n${columns(optionRows(syncOptions[command]))}`,
  ];
  if (command === 'plan' || command === 'apply') sections.push(REMOVALS, SOURCES, csvColumns());
  if (command === 'resolve') sections.push(RESOLVE);
  if (command === 'apply') {
    sections.push(
      'On a terminal, stderr shows one live progress line. Ctrl-C stops after the requests in flight\nhave answered; a second Ctrl-C stops at once. Either way the next apply resumes.\nExit 9: finished, but some records failed or are in doubt, or the removals of a type were refused\n(listed on stderr).',
    );
  }
  return `${sections.join('\n\n')}\n`;
};
