import { writeFile } from 'node:fs/promises';
import { nearest } from '../../internal/endpoint/suggest';
import { redactor } from '../../internal/report/redaction';
import { CrmSync, type SyncJournal, type SyncPlan, type SyncReport, type SyncSource, sqliteJournal } from '../../sync';
import { type ConnectionValues, clientFor, wholeNumber } from '../config';
import { EXIT } from '../failure';
import type { OptionSpec } from '../global-options';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import { SOURCE_TYPES, type SourceType } from './columns';
import type { SyncContext, SyncIo, Values } from './context';
import { syncCommandHelp, syncHelp } from './help';
import { type SyncCommand, syncOptions } from './options';
import { SyncProgressLine } from './progress';
import { labelOf, ndjsonLine, planLine, planSummary, problemLines, reportJson, reportLine } from './render';
import { countRecords, type OpenedSources, openSources, recordsOf, type SourceFile } from './sources';

/** The command line's parser (main.ts's, with its refusals and "did you mean"). */
export type Parse = (
  args: readonly string[],
  specs: Readonly<Record<string, OptionSpec>>,
  help: string,
) => { values: Values; positionals: string[] };

const COMMANDS = Object.keys(syncOptions) as SyncCommand[];

/** The most record names a plan keeps to show beside its creates, so that its memory stays bounded. */
const LABELS = 100_000;

/** `crm sync <command> [options]`. */
export async function runSync(args: readonly string[], io: SyncIo, parse: Parse): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h') {
    if (name === undefined) {
      io.stderr.write(syncHelp());
      return EXIT.usage;
    }
    await write(io.stdout, syncHelp());
    return EXIT.ok;
  }
  if (!COMMANDS.includes(name as SyncCommand)) {
    const near = nearest(name, COMMANDS);
    const hint = near.length ? `; did you mean ${near.map((c) => `"sync ${c}"`).join(' or ')}?` : '';
    throw new UsageError(
      name.startsWith('-')
        ? `Unknown command: "${name.split('=', 1)[0]}" is an option, and options go after the command`
        : `Unknown command "sync ${name}"${hint}`,
      'crm sync --help',
    );
  }
  const command = name as SyncCommand;
  const help = `crm sync ${command} --help`;
  const { values, positionals } = parse(rest, syncOptions[command], help);
  if (values.help) {
    await write(io.stdout, syncCommandHelp(command));
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`Unexpected argument "${positionals[0]}"`, help);
  const journalPath = values.journal;
  if (typeof journalPath !== 'string' || journalPath === '') throw new UsageError('--journal <path> is required', help);
  const context = { io, values, help, journalPath };
  if (command === 'plan' || command === 'apply') return runSource(command, context);
  if (command === 'resolve') return runResolve(context);
  const { runStatus } = await import('./status');
  return runStatus(context);
}

/** One of `allowed`, or a usage error naming them. */
function choice<T extends string>(flag: string, value: unknown, allowed: readonly T[], help: string): T | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) {
    throw new UsageError(
      `--${flag} must be ${allowed.map((a) => `"${a}"`).join(' or ')}, not "${String(value).slice(0, 80)}"`,
      help,
    );
  }
  return value as T;
}

/** The sources given, checked whole (a bad file exits 2 before anything is sent), with their record counts. */
async function sourcesOf({
  io,
  values,
  help,
}: SyncContext): Promise<{ opened: OpenedSources; totals: Map<SourceType, number> }> {
  const given: Partial<Record<SourceType, string>> = {};
  for (const type of SOURCE_TYPES) {
    const file = values[type];
    if (file === undefined) continue;
    if (typeof file !== 'string' || file === '')
      throw new UsageError(`--${type} needs a file, or - for standard input`, help);
    given[type] = file;
  }
  if (Object.keys(given).length === 0) {
    throw new UsageError('No source: give --accounts, --contacts, --opportunities or --activities <file>', help);
  }
  if (Object.values(given).filter((file) => file === '-').length > 1) {
    throw new UsageError('Standard input (-) can be the source of one list at most', help);
  }
  const opened = await openSources(given, io.stdin, SOURCE_TYPES);
  try {
    const totals = new Map<SourceType, number>();
    for (const source of opened.sources) totals.set(source.type, await countRecords(source));
    return { opened, totals };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * A source list as the engine takes it: read from the file's start each time it is iterated, and
 * telling its `size` (counted by the check), from which the engine's ETA comes.
 */
const listOf = (source: SourceFile, size: number, onRecord?: (record: Record<string, unknown>) => void) => ({
  size,
  async *[Symbol.asyncIterator]() {
    for await (const record of recordsOf(source)) {
      onRecord?.(record);
      yield record;
    }
  },
});

async function runSource(command: 'plan' | 'apply', context: SyncContext): Promise<number> {
  const { io, values, help } = context;
  const removed = choice('removed', values.removed, ['keep', 'deactivate'], help);
  const inDoubt =
    command === 'apply' ? choice('in-doubt', values['in-doubt'], ['report', 'recreate'], help) : undefined;
  const concurrency =
    command === 'apply' ? wholeNumber('--concurrency', values.concurrency as string | undefined) : undefined;
  if (concurrency !== undefined && (concurrency < 1 || concurrency > 256)) {
    throw new UsageError('--concurrency must be from 1 to 256', help);
  }
  if (values.report === '') throw new UsageError('--report needs a file', help);
  const { crm, secrets } = await clientFor(
    values as ConnectionValues,
    io,
    command === 'plan' ? 'tenant' : 'apiKey',
    command === 'apply' ? { throttle: 'auto' } : {},
  );
  const redact = redactor(secrets);
  const { opened, totals } = await sourcesOf(context);
  const journal = sqliteJournal(context.journalPath);
  try {
    const sync = new CrmSync(crm, { journal });
    const asText = command === 'plan' ? io.stdout.isTTY === true && values.json !== true : false;
    // The names a plan shows beside its creates: kept only for a person's terminal.
    const labels = new Map<string, string>();
    const source: Record<string, unknown> = {};
    for (const file of opened.sources) {
      const remember = asText
        ? (record: Record<string, unknown>) => {
            const label = labelOf(record.data);
            // A person reads a few thousand lines, not a million: past LABELS, creates show their key alone.
            if (label !== undefined && typeof record.key === 'string' && labels.size < LABELS) {
              labels.set(`${file.type}\u0000${record.key}`, label);
            }
          }
        : undefined;
      source[file.type] = listOf(file, totals.get(file.type) ?? 0, remember);
    }
    if (command === 'plan') {
      const plan = await sync.plan(source as SyncSource, removed ? { removed } : {});
      await printPlan(io, plan, asText, labels, redact);
      return EXIT.ok;
    }
    return await apply(context, sync, journal, source as SyncSource, totals, { removed, inDoubt, concurrency }, redact);
  } finally {
    await journal.close();
    await opened.close();
  }
}

async function printPlan(
  io: SyncIo,
  plan: SyncPlan,
  asText: boolean,
  labels: ReadonlyMap<string, string>,
  redact: (value: unknown) => unknown,
): Promise<void> {
  if (!asText) {
    let lines = '';
    for (const entry of plan.entries) {
      lines += ndjsonLine(redact(entry));
      if (lines.length > 64 * 1024) {
        await write(io.stdout, lines);
        lines = '';
      }
    }
    await write(io.stdout, `${lines}${jsonText({ counts: plan.counts })}\n`);
    return;
  }
  let lines = '';
  for (const entry of plan.entries) {
    const line = planLine(entry, labels.get(`${entry.type}\u0000${entry.key}`));
    if (line !== undefined) lines += `${line}\n`;
    if (lines.length > 64 * 1024) {
      await write(io.stdout, lines);
      lines = '';
    }
  }
  await write(io.stdout, `${lines}${planSummary(plan.counts)}\n`);
}

interface ApplyOptions {
  readonly removed: 'keep' | 'deactivate' | undefined;
  readonly inDoubt: 'report' | 'recreate' | undefined;
  readonly concurrency: number | undefined;
}

async function apply(
  { io, values }: SyncContext,
  sync: CrmSync,
  journal: SyncJournal,
  source: SyncSource,
  totals: ReadonlyMap<string, number>,
  options: ApplyOptions,
  redact: (value: unknown) => unknown,
): Promise<number> {
  // A report that cannot be written is said before anything is sent, not after the run.
  if (typeof values.report === 'string') {
    try {
      await writeFile(values.report, '', { mode: 0o600 });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new UsageError(
        `--report: cannot write ${values.report}${typeof code === 'string' ? ` (${code})` : ''}`,
        'crm sync apply --help',
      );
    }
  }
  const progress = new SyncProgressLine(io.stderr, totals);
  io.interrupt?.stopOnInterrupt();
  let report: SyncReport;
  try {
    report = await sync.run(source, {
      onProgress: progress.update,
      ...(io.interrupt ? { signal: io.interrupt.signal } : {}),
      ...(options.removed ? { removed: options.removed } : {}),
      ...(options.inDoubt ? { inDoubt: options.inDoubt } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    });
  } catch (error) {
    progress.end();
    if (io.interrupt?.signal.aborted && error === io.interrupt.signal.reason) {
      io.stderr.write('crm: stopped; the journal holds what was done, and the next apply resumes\n');
      return 130;
    }
    throw error;
  }
  progress.end();
  const json = redact(reportJson(report));
  if (typeof values.report === 'string') await writeFile(values.report, `${jsonText(json, 2)}\n`, { mode: 0o600 });
  await recordRun(journal, sync, report);
  const problems = problemLines(report);
  if (problems.length) io.stderr.write(`${problems.join('\n')}\n`);
  if (io.stdout.isTTY) await write(io.stdout, `${reportLine(report)}\n`);
  else await write(io.stdout, `${jsonText(json)}\n`);
  return report.failed.length || report.inDoubt.length ? EXIT.incomplete : EXIT.ok;
}

/** Keeps the run's summary in the journal's run log, for `crm sync status`. */
async function recordRun(journal: SyncJournal, sync: CrmSync, report: SyncReport): Promise<void> {
  if (!journal.addRun) return;
  const { tenantId } = sync.toJSON();
  const summary = {
    created: report.created,
    updated: report.updated,
    unchanged: report.unchanged,
    deactivated: report.deactivated,
    skipped: report.skipped.length,
    inDoubt: report.inDoubt.length,
    failed: report.failed.map(({ type, key, error }) => ({
      type,
      key,
      reason: error.message,
      ...((error as { requestId?: unknown }).requestId
        ? { requestId: (error as { requestId?: unknown }).requestId }
        : {}),
    })),
  };
  await journal.addRun(tenantId, { runId: report.runId, finishedAt: Date.now(), summary: JSON.stringify(summary) });
}

async function runResolve({ io, values, help, journalPath }: SyncContext): Promise<number> {
  const type = choice('type', values.type, SOURCE_TYPES, help);
  if (type === undefined)
    throw new UsageError('--type is required: accounts, contacts, opportunities or activities', help);
  const key = values.key;
  if (typeof key !== 'string' || key === '') throw new UsageError('--key <key> is required', help);
  const id = values.id;
  const absent = values.absent === true;
  if ((id === undefined) === !absent) throw new UsageError('Give one of --id <crm-id> and --absent', help);
  if (id === '') throw new UsageError('--id needs the CRM id', help);
  const { crm } = await clientFor(values as ConnectionValues, io, 'tenant');
  const journal = sqliteJournal(journalPath);
  try {
    await new CrmSync(crm, { journal }).resolve(type, key, absent ? null : (id as string), {
      force: values.force === true,
    });
  } finally {
    await journal.close();
  }
  // jsonText escapes what JSON.stringify leaves raw (U+2028, bidi controls), as every other line of crm does.
  const said = absent ? 'not in the CRM: the next apply creates it' : `the CRM holds it as ${jsonText(id)}`;
  io.stderr.write(`${type} ${jsonText(key.slice(0, 80))}: ${said}\n`);
  return EXIT.ok;
}
