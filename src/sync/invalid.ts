import { type CrmError, CrmValidationError, type CrmValidationIssue } from '../core/errors';

// A bad record fails at the read step (its key, its data, its references) and at the decide step
// (its schema): both build its error here, the same way, and a run keeps one per failed record,
// so how that error is built and shared is what holds a run of a million bad records in memory.

/** The most bad-record errors a run shares among the records that fail alike ({@link SharedErrors}). */
const SHARED_ERRORS = 1000;

export function invalid(field: string, message: string): CrmValidationError {
  return invalidRecord([{ field, path: field ? field.split('.') : [], message }]);
}

/**
 * A bad record's error, built without a stack: a run keeps one per failed record (a million, for
 * a source whose every record fails), and the engine's frames tell nothing of the record. Its
 * message and issues say what is wrong; with a stack each took some 2 KB.
 */
export function invalidRecord(issues: readonly CrmValidationIssue[]): CrmValidationError {
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 0;
  } catch {
    // A runtime whose limit cannot be set: the error keeps its stack.
  }
  try {
    return new CrmValidationError(issues, 'Invalid record');
  } finally {
    try {
      Error.stackTraceLimit = limit;
    } catch {}
  }
}

/** The errors of bad records, by message. */
export class SharedErrors {
  readonly #errors = new Map<string, CrmError>();

  /**
   * One error for the bad records that fail alike: a source whose every record fails for one
   * reason keeps one error, not a million (the report's `failed` holds each record's type and
   * key beside it). Up to {@link SHARED_ERRORS} reasons are kept; past them, each error is its own.
   */
  of(error: CrmError): CrmError {
    const known = this.#errors.get(error.message);
    if (known) return known;
    if (this.#errors.size < SHARED_ERRORS) this.#errors.set(error.message, error);
    return error;
  }
}
