import {
  CrmAuthenticationError,
  CrmConnectionError,
  CrmError,
  CrmNotFoundError,
  CrmPermissionDeniedError,
  CrmRateLimitError,
  CrmResponseValidationError,
  CrmValidationError,
  isCrmApiError,
} from '../core/errors';
import { SyncJournalError } from '../sync/journal-error';
import { escaped, jsonText } from './output';
import { SourceError } from './sync/source-error';
import { UsageError } from './usage-error';

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The exit codes of `crm`, as README.md's "Command line" lists them. */
export const EXIT = {
  ok: 0,
  other: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  rateLimited: 5,
  connection: 6,
  api: 7,
  response: 8,
  /**
   * `crm sync apply` finished, but some records failed or are in doubt, or the removals of a type
   * were refused (listed on stderr and in the report).
   */
  incomplete: 9,
  /** Another run holds the journal's lock for the tenant: try again later. */
  journalLocked: 10,
  /** The journal is corrupt, not a journal, or written by a newer version of crm. */
  journalCorrupt: 11,
  /** The journal cannot be opened or written (the message names why: a directory without write permission). */
  journalUnavailable: 12,
  /** `crm sync plan` found invalid or blocked records (`--allow-invalid`: exit 0). */
  planInvalid: 13,
} as const;

/** The exit code for an error: the first class in the ladder it belongs to. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError || error instanceof CrmValidationError) return EXIT.usage;
  if (error instanceof CrmAuthenticationError || error instanceof CrmPermissionDeniedError) return EXIT.auth;
  if (error instanceof CrmNotFoundError) return EXIT.notFound;
  if (error instanceof CrmRateLimitError) return EXIT.rateLimited;
  if (error instanceof CrmConnectionError) return EXIT.connection;
  if (isCrmApiError(error)) return EXIT.api;
  if (error instanceof CrmResponseValidationError) return EXIT.response;
  if (error instanceof SyncJournalError) {
    if (error.reason === 'locked') return EXIT.journalLocked;
    if (error.reason === 'unavailable') return EXIT.journalUnavailable;
    return EXIT.journalCorrupt;
  }
  return EXIT.other;
}

/** The facts of an error that a script may branch on; absent ones are left out. */
function factsOf(error: unknown): Record<string, unknown> {
  const named = error instanceof Error ? error : new Error(String(error));
  const facts: Record<string, unknown> = { name: named.name, message: named.message };
  if (error instanceof SourceError) Object.assign(facts, { file: error.file, line: error.line, column: error.column });
  if (error instanceof SyncJournalError) facts.reason = error.reason;
  if (error instanceof CrmError) {
    const { status, code, requestId, issues } = error as CrmError & Record<string, unknown>;
    Object.assign(facts, { status, code, requestId, issues });
  }
  return facts;
}

/**
 * How a failure is told on stderr: one line for a person at a terminal, a JSON object for a
 * script. Never a stack: the SDK's messages say what failed and are masked already, and an
 * error that is not the SDK's is a bug whose message is enough to report.
 */
export function describeFailure(error: unknown, asJson: boolean): string {
  const facts = factsOf(error);
  if (asJson) return `${jsonText(facts)}\n`;
  // A server's words reach the message: no control character of theirs may reach the terminal.
  const oneLine = escaped(String(facts.message).replace(/\s*\n\s*/g, ' '), CONTROL);
  const help = error instanceof UsageError ? ` (see ${error.help})` : '';
  return `crm: ${oneLine}${help}\n`;
}
