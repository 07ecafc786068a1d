import type { CrmError } from '../../core/errors';
import type { SyncReport } from '../../sync';

/** Why one source row goes to the `--failed` file: the message, and the fields it names (SDK names). */
export interface RowFailure {
  readonly message: string;
  readonly fields: readonly string[];
}

/** A report failure that refuses a repeat of a key already met in the list (read.ts's "Repeated"). */
export const isRepeat = (error: CrmError): boolean =>
  (error as { issues?: readonly { field?: string; message?: string }[] }).issues?.some(
    (issue) => issue.field === 'key' && issue.message?.startsWith('Repeated') === true,
  ) === true;

/**
 * A skipped record that a fixed file completes: one held back because its parent failed or is in
 * doubt (decide.ts: "it goes once that is known"), not an activity the API cannot update.
 */
const isBlocked = (reason: string): boolean => reason.endsWith('it goes once that is known');

/** The fields an error names: its issues' (`data.name` as `name`), or none (a refused request). */
function fieldsOf(error: CrmError): string[] {
  const issues = (error as { issues?: readonly { field?: unknown }[] }).issues ?? [];
  const fields = issues
    .map((issue) => (typeof issue.field === 'string' ? issue.field.replace(/^data\./, '') : ''))
    .filter((field) => field !== '');
  return [...new Set(fields)];
}

/** The reference column a blocked record's reason names: `its account "A2" failed` is its accountKey. */
const referenceOf = (reason: string): string => `${/^its (\w+)/.exec(reason)?.[1] ?? 'parent'}Key`;

interface KeyFailures {
  /** Its failures that are not repeats, in the order they came: an unusable key's, one per row. */
  readonly own: RowFailure[];
  /** Why its repeats were refused, when some were. */
  repeat: RowFailure | undefined;
}

/**
 * The rows of a run's report that go to `--failed`, found again by type, key and occurrence as the
 * source is read a second time: a key's first row carries its own failure; its later rows, the
 * repeats the run refused; a key no row could use (empty, too long) fails on every row.
 */
export class FailedRows {
  readonly #byType = new Map<string, Map<string, KeyFailures>>();
  readonly #seen = new Map<string, Map<string, number>>();

  constructor(report: Pick<SyncReport, 'failed' | 'skipped'>, redact: (text: string) => string) {
    for (const { type, key, error } of report.failed) {
      const failures = this.#of(type, key);
      const failure = { message: redact(error.message), fields: fieldsOf(error) };
      if (isRepeat(error)) failures.repeat = failure;
      else failures.own.push(failure);
    }
    for (const { type, key, reason } of report.skipped) {
      if (isBlocked(reason)) this.#of(type, key).own.push({ message: redact(reason), fields: [referenceOf(reason)] });
    }
  }

  #of(type: string, key: string): KeyFailures {
    let keys = this.#byType.get(type);
    if (!keys) {
      keys = new Map();
      this.#byType.set(type, keys);
    }
    let failures = keys.get(key);
    if (!failures) {
      failures = { own: [], repeat: undefined };
      keys.set(key, failures);
    }
    return failures;
  }

  /** Whether any row of `type` failed. */
  has(type: string): boolean {
    return this.#byType.has(type);
  }

  /** The next source row of `type` with this key (read in order): why it failed, or undefined if it did not. */
  next(type: string, key: unknown): RowFailure | undefined {
    const text = typeof key === 'string' ? key : String(key ?? '');
    const failures = this.#byType.get(type)?.get(text);
    let seen = this.#seen.get(type);
    if (!seen) {
      seen = new Map();
      this.#seen.set(type, seen);
    }
    const occurrence = seen.get(text) ?? 0;
    seen.set(text, occurrence + 1);
    if (!failures) return undefined;
    if (occurrence === 0 || failures.own.length > 1) {
      return failures.own[Math.min(occurrence, failures.own.length - 1)];
    }
    return failures.repeat;
  }
}
