import { nearest } from '../../internal/endpoint/suggest';
import { redactor } from '../../internal/report/redaction';
import { CrmSync, type SyncMaxRemoved, type SyncSource } from '../../sync';
import { isMaxRemoved } from '../../sync/remove';
import { type ConnectionValues, clientFor, wholeNumber } from '../config';
import { EXIT } from '../failure';
import type { OptionSpec } from '../global-options';
import { write } from '../output';
import { UsageError } from '../usage-error';
import { apply, runOutputs } from './apply-run';
import { SOURCE_TYPES } from './columns';
import type { SyncContext, SyncIo, Values } from './context';
import { syncCommandHelp, syncHelp } from './help';
import { journalTarget, type OpenedJournal, openJournal, postgresWithoutValue, redactError } from './journal';
import { journalCause } from './journal-cause';
import { type SyncCommand, syncOptions } from './options';
import { type Input, type ReportFile, reportFile } from './paths';
import { printPlan, rememberLabel } from './print-plan';
import { refuseClobbering } from './refuse-clobbering';
import { type ResolveWay, runResolve } from './resolve-command';
import { emptyListRefusal, listOf, sourcesOf } from './source-lists';

/** The command line's parser (main.ts's, with its refusals and "did you mean"). */
export type Parse = (
  args: readonly string[],
  specs: Readonly<Record<string, OptionSpec>>,
  help: string,
) => { values: Values; positionals: string[] };

const COMMANDS = Object.keys(syncOptions) as SyncCommand[];

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
  const { values, positionals } = parse(postgresWithoutValue(rest), syncOptions[command], help);
  if (values.help) {
    await write(io.stdout, syncCommandHelp(command));
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`Unexpected argument "${positionals[0]}"`, help);
  const target = journalTarget(values, io.env, help);
  const context = { io, values, help, target };
  try {
    const inputs = await refuseClobbering(context);
    if (command === 'plan' || command === 'apply') return await runSource(command, context, inputs);
    if (command === 'resolve') return await runResolve(context, resolveWay(values, help));
    if (command === 'ids') {
      const { runIds } = await import('./ids');
      return await runIds(context);
    }
    const { runStatus } = await import('./status');
    return await runStatus(context);
  } catch (error) {
    // The connection string's password never reaches stderr, whatever quoted it.
    throw redactError(await journalCause(error, target), target);
  }
}

/** `--progress-every <seconds>`: a number from 0 (none), fractions allowed; default 10 s. */
function progressEveryMs(value: unknown, help: string): number {
  if (value === undefined) return 10_000;
  const text = String(value);
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(seconds) || seconds > 86_400) {
    throw new UsageError(
      `--progress-every must be a number of seconds from 0 (none) to 86400, not "${text.slice(0, 80)}"`,
      help,
    );
  }
  return Math.round(seconds * 1000);
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

/** `--max-removed`: a count (`50`) or a share (`5%`), or a usage error. */
function maxRemovedOf(value: unknown, help: string): SyncMaxRemoved | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  const given: unknown = /^\d+$/.test(text) ? Number(text) : text;
  if (!isMaxRemoved(given)) {
    throw new UsageError(
      `--max-removed must be a count (such as 50) or a share of the synced records from 0% to 100% (such as 5%), not "${text.slice(0, 80)}"`,
      help,
    );
  }
  return given;
}

async function runSource(command: 'plan' | 'apply', context: SyncContext, inputs: readonly Input[]): Promise<number> {
  const { io, values, help } = context;
  const removed = choice('removed', values.removed, ['keep', 'deactivate'], help);
  const maxRemoved = maxRemovedOf(values['max-removed'], help);
  const inDoubt =
    command === 'apply' ? choice('in-doubt', values['in-doubt'], ['report', 'recreate'], help) : undefined;
  const concurrency =
    command === 'apply' ? wholeNumber('--concurrency', values.concurrency as string | undefined) : undefined;
  if (concurrency !== undefined && (concurrency < 1 || concurrency > 256)) {
    throw new UsageError('--concurrency must be from 1 to 256', help);
  }
  if (values.report === '') throw new UsageError('--report needs a file', help);
  const everyMs = command === 'apply' ? progressEveryMs(values['progress-every'], help) : 0;
  const { crm, secrets } = await clientFor(
    values as ConnectionValues,
    io,
    command === 'plan' ? 'tenant' : 'apiKey',
    command === 'apply' ? { throttle: 'auto' } : {},
  );
  // The connection string's password is masked with the CRM's credentials in every line written.
  const redact = redactor([...secrets, ...(context.target.kind === 'postgres' ? context.target.secrets : [])]);
  const { opened, totals } = await sourcesOf(context);
  const empty = emptyListRefusal(opened, totals, removed, maxRemoved);
  if (empty !== undefined && command === 'apply') {
    await opened.close();
    throw new UsageError(empty, help);
  }
  if (empty !== undefined) io.stderr.write(`crm: apply would refuse this: ${empty}\n`);
  let journalOpened: OpenedJournal;
  let outputs: Awaited<ReturnType<typeof runOutputs>> = { failed: undefined, ids: undefined };
  try {
    if (command === 'apply') outputs = await runOutputs(context, opened.sources, inputs);
    journalOpened = await openJournal(context.target, { readOnly: false, help });
  } catch (error) {
    await opened.close();
    throw error;
  }
  const { journal } = journalOpened;
  let report: ReportFile | undefined;
  try {
    const sync = new CrmSync(crm, { journal });
    const asText = command === 'plan' ? io.stdout.isTTY === true && values.json !== true : false;
    // The names a plan shows beside its creates, by type and key: kept only for a person's terminal.
    const labels = new Map<string, Map<string, string>>();
    const source: Record<string, unknown> = {};
    for (const file of opened.sources) {
      const names = new Map<string, string>();
      labels.set(file.type, names);
      const remember = asText ? rememberLabel(names) : undefined;
      source[file.type] = listOf(file, totals.get(file.type) ?? 0, remember);
    }
    if (command === 'plan') {
      const summary = values.summary === true;
      const counts = await printPlan(
        io,
        sync,
        source as SyncSource,
        { removed, maxRemoved, summary },
        asText,
        labels,
        redact,
      );
      // A plan that apply could not load whole says so to a script: --allow-invalid for the old exit 0.
      return (counts.invalid || counts.blocked) && values['allow-invalid'] !== true ? EXIT.planInvalid : EXIT.ok;
    }
    // A report that cannot be written is said before anything is sent, not after the run; the old
    // one stays whole until the new one is written.
    report = typeof values.report === 'string' ? await reportFile(values.report, help) : undefined;
    return await apply(
      context,
      sync,
      source as SyncSource,
      totals,
      {
        removed,
        maxRemoved,
        inDoubt,
        concurrency,
        everyMs,
        summary: values.summary === true,
        json: values.json === true,
        failed: outputs.failed,
        ids: outputs.ids,
        journal,
        tenant: crm.tenantId ?? '',
      },
      redact,
      report,
    );
  } finally {
    await report?.discard();
    await journalOpened.close();
    await opened.close();
  }
}

/** Which way `crm sync resolve` settles: one record, a file of them, or by an export; its flags checked together. */
function resolveWay(values: Values, help: string): ResolveWay {
  const one = ['key', 'id', 'absent'].filter((flag) => values[flag] !== undefined && values[flag] !== false);
  const from = values.from;
  const match = values.match;
  if (from !== undefined && match !== undefined) throw new UsageError('Give --from or --match, not both', help);
  if ((from !== undefined || match !== undefined) && one.length) {
    throw new UsageError(`--${one[0]} settles one record: not with --${from !== undefined ? 'from' : 'match'}`, help);
  }
  for (const [flag, value] of [
    ['from', from],
    ['match', match],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new UsageError(`--${flag} needs a file`, help);
    }
  }
  if (match === undefined) {
    for (const flag of ['absent-if-missing', 'apply', 'json']) {
      if (values[flag] === true) throw new UsageError(`--${flag} goes with --match`, help);
    }
  }
  if (from !== undefined) {
    if (values.type !== undefined) throw new UsageError('--from gives each row its type: no --type', help);
    return { way: 'from', file: from as string } as const;
  }
  const type = choice('type', values.type, SOURCE_TYPES, help);
  if (type === undefined)
    throw new UsageError('--type is required: accounts, contacts, opportunities or activities', help);
  if (match !== undefined) return { way: 'match', file: match as string, type } as const;
  const key = values.key;
  if (typeof key !== 'string' || key === '')
    throw new UsageError('--key <key> is required (or --from, or --match)', help);
  const id = values.id;
  const absent = values.absent === true;
  if ((id === undefined) === !absent) throw new UsageError('Give one of --id <crm-id> and --absent', help);
  if (id === '') throw new UsageError('--id needs the CRM id', help);
  return { way: 'one', type, key, crmId: absent ? null : (id as string) } as const;
}
