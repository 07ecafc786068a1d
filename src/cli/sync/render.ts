import type { SyncPlan, SyncPlanEntry, SyncRefusedRemoval, SyncReport } from '../../sync';
import { escaped, jsonText } from '../output';
import { isRepeat } from './failed-rows';

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The most of a value a line shows. */
const SHOWN = 80;

/** A value for a person's terminal: strings as they are, others as JSON, cut at 80, controls escaped. */
export function valueText(value: unknown, most = SHOWN): string {
  if (value === undefined) return '(none)';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return escaped(text.length > most ? `${text.slice(0, most)}…` : text, CONTROL);
}

/**
 * The identifying fields sent of a record in doubt, for a person to search the CRM by:
 * ` {name "Acme Ltd", amount 5000}`, or nothing when none was sent.
 */
export function sentText(sent: Readonly<Record<string, unknown>> | undefined): string {
  const fields = Object.entries(sent ?? {}).map(
    ([field, value]) => `${field} ${typeof value === 'string' ? JSON.stringify(valueText(value)) : valueText(value)}`,
  );
  return fields.length ? ` {${fields.join(', ')}}` : '';
}

/** What names a record to a person: an account's or opportunity's name, a contact's email, an activity's subject. */
export function labelOf(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const record = data as Record<string, unknown>;
  const label = [
    record.name,
    record.email,
    record.subject,
    [record.firstName, record.lastName].filter(Boolean).join(' '),
  ].find((value) => typeof value === 'string' && value !== '');
  return typeof label === 'string' ? label.slice(0, SHOWN) : undefined;
}

const WHY: Readonly<Record<string, string>> = {
  deactivate: 'no longer in its complete list: set inactive',
  blocked: 'in doubt, or its parent is in doubt, failed or invalid (crm sync status)',
  invalid: 'a bad record: a field fails its schema, its key is empty or repeated, or its parent is unknown',
  skip: 'an activity that changed (the API cannot update one), or a removed opportunity or activity',
};

const SIGNS: Readonly<Record<string, string>> = {
  create: '+',
  update: '~',
  deactivate: '-',
  blocked: '!',
  invalid: 'x',
  skip: '/',
};

/** One entry as `terraform plan` would say it, or undefined for an unchanged record (counted only). */
export function planLine(entry: SyncPlanEntry, label: string | undefined): string | undefined {
  const { type, action } = entry;
  const key = valueText(entry.key);
  if (action === 'unchanged') return undefined;
  const sign = SIGNS[action] ?? '?';
  if (action === 'create')
    return `${sign} ${type} ${key}${label === undefined ? '' : ` ${JSON.stringify(valueText(label))}`}`;
  if (action === 'update') {
    const changes = Object.entries(entry.changes ?? {}).map(
      ([field, { from, to }]) => `${field}: ${valueText(from)} → ${valueText(to)}`,
    );
    return `${sign} ${type} ${key} ${changes.join(', ')}`;
  }
  // The engine's own reason when it gives one; else what the action means.
  return `${sign} ${type} ${key} ${action}: ${entry.reason === undefined ? WHY[action] : valueText(entry.reason)}`;
}

/** The plan's summary line. */
export function planSummary(counts: SyncPlan['counts']): string {
  return `Plan: ${counts.create} to create, ${counts.update} to update, ${counts.deactivate} to deactivate, ${counts.unchanged} unchanged, ${counts.skip} skipped, ${counts.blocked} blocked, ${counts.invalid} invalid.`;
}

/**
 * Why a type's removals are refused, with the figures and what allows them (`given`: the limit
 * came from --max-removed).
 */
export function refusalText(refusal: SyncRefusedRemoval, given: boolean): string {
  const { type, wouldDeactivate, synced, limit } = refusal;
  const gone = type === 'accounts' || type === 'contacts' ? 'to deactivate' : 'gone from the list';
  const figures = `${wouldDeactivate} ${type} ${gone} of ${synced} synced`;
  if (refusal.reason === 'incomplete') {
    return `${figures}, but ${refusal.unusableKeys} records of the list have no usable key (see the failed ones), so it cannot tell which it no longer holds: fix those keys; --max-removed does not allow this`;
  }
  const most = given ? `--max-removed allows ${limit}` : `the default limit is ${limit} (10, or 10% of those synced)`;
  return `${figures}, and ${most}: if that is meant, give --max-removed ${wouldDeactivate}`;
}

/** A failure as JSON: its facts (class, message, status, code, request id, side effects), never a stack. */
function errorJson(error: unknown): Record<string, unknown> {
  const e = error as Record<string, unknown> & Error;
  const facts: Record<string, unknown> = { name: e.name, message: e.message };
  for (const name of ['status', 'code', 'requestId', 'sideEffects', 'issues'] as const) {
    if (e[name] !== undefined) facts[name] = e[name];
  }
  return facts;
}

/** The `SyncReport` as JSON (`--report`, stdout for a script): each failure's error as its facts. */
export function reportJson(report: SyncReport): Record<string, unknown> {
  return { ...report, failed: report.failed.map(({ type, key, error }) => ({ type, key, error: errorJson(error) })) };
}

/** The report's counts, for a person: a key's repeats in the source are told apart from the records that failed. */
export function reportLine(report: SyncReport): string {
  const repeats = report.failed.filter(({ error }) => isRepeat(error)).length;
  const failed = report.failed.length - repeats;
  return `Done: ${report.created} created, ${report.updated} updated, ${report.unchanged} unchanged, ${report.deactivated} deactivated, ${failed} failed, ${repeats ? `${repeats} repeated in the source (refused), ` : ''}${report.inDoubt.length} in doubt, ${report.skipped.length} skipped.`;
}

/** How many entries of each action `--summary` shows. */
export const SUMMARY_ENTRIES = 5;

/**
 * The report JSON for `--summary`: its counts, and the first `most` of each list (failed, in doubt,
 * skipped) with the number of each in `totals`.
 */
export function summaryJson(json: Record<string, unknown>, most: number): Record<string, unknown> {
  const totals: Record<string, number> = {};
  const cut: Record<string, unknown> = { ...json };
  for (const list of ['failed', 'inDoubt', 'skipped']) {
    const items = Array.isArray(json[list]) ? (json[list] as unknown[]) : [];
    totals[list] = items.length;
    cut[list] = items.slice(0, most);
  }
  return { ...cut, totals };
}

/** The first `most` lines of a list, then how many more there are. */
function firstOf(lines: string[], most: number | undefined, what: string): string[] {
  if (most === undefined || lines.length <= most) return lines;
  return [...lines.slice(0, most), `… and ${lines.length - most} more ${what}`];
}

/**
 * Each record that failed or is in doubt, and each type whose removals were refused, a line each
 * (stderr); `most`: only the first of each (--summary). A key repeated in the source is said as
 * such: its first row is the one the run took, and the repeats were refused, not sent.
 */
export function problemLines(report: SyncReport, maxRemovedGiven = false, most?: number): string[] {
  const took = report.lockTakenOver;
  const failed = report.failed.map(({ type, key, error }) => {
    if (isRepeat(error)) {
      return `refused ${type} ${valueText(key)}: repeated in the source; its first row is the one this run took, this repeat was not sent`;
    }
    const { requestId } = error as { requestId?: unknown };
    const id = typeof requestId === 'string' ? ` (request ${valueText(requestId)})` : '';
    return `failed ${type} ${valueText(key)}: ${valueText(String(error.message).replace(/\s*\n\s*/g, ' '), 400)}${id}`;
  });
  const inDoubt = report.inDoubt.map(
    ({ type, key, requestId, sent }) =>
      `in doubt ${type} ${valueText(key)}${sentText(sent)}${requestId ? ` (request ${valueText(requestId)})` : ''}: may have been created; find it, then crm sync resolve`,
  );
  return [
    ...(took
      ? [
          `lock: taken over from run ${valueText(took.runId)}, which had stopped renewing it (its process died or stalled past the lease)`,
        ]
      : []),
    ...firstOf(failed, most, 'failed or refused'),
    ...firstOf(inDoubt, most, 'in doubt'),
    ...report.refusedRemovals.map(
      (refusal) => `refused ${refusal.type} removals, none sent: ${refusalText(refusal, maxRemovedGiven)}`,
    ),
  ];
}

export const ndjsonLine = (value: unknown): string => `${jsonText(value)}\n`;
