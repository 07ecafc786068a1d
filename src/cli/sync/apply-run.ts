// Apart from command.ts, which parses the flags and opens what they name: the run of `crm sync
// apply` and all it writes (its progress, a heartbeat off a terminal; the report; --failed; --ids;
// the problems; the last line) change together, and the checks of its output files, made before
// anything is sent, must agree with the writes about which files those are.
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { CrmSync, SyncMaxRemoved, SyncReport, SyncSource } from '../../sync';
import { EXIT } from '../failure';
import { jsonText, write } from '../output';
import { UsageError } from '../usage-error';
import type { SyncContext } from './context';
import { columnOfSources, type FailedTarget, failedTarget, formatOfSource, writeFailed } from './failed-file';
import { FailedRows } from './failed-rows';
import type { OpenedJournal } from './journal';
import { type Input, type ReportFile, refuseOverwrite } from './paths';
import { SyncProgressLine } from './progress';
import { problemLines, reportJson, reportLine, SUMMARY_ENTRIES, summaryJson } from './render';
import type { OpenedSources } from './sources';

/**
 * The outputs `apply` writes after its run (`--failed`, `--ids`), checked before anything is sent:
 * never one of the command's inputs nor one another, and in a directory that exists.
 */
export async function runOutputs(
  { values, help }: SyncContext,
  sources: OpenedSources['sources'],
  inputs: readonly Input[],
): Promise<{ failed: FailedTarget | undefined; ids: string | undefined }> {
  const { failed, ids } = values;
  if (failed === '') throw new UsageError('--failed needs a file or a directory', help);
  if (ids === '') throw new UsageError('--ids needs a file', help);
  const report =
    typeof values.report === 'string' ? [{ what: `the --report file ${values.report}`, path: values.report }] : [];
  const idsInput = typeof ids === 'string' ? [{ what: `the --ids file ${ids}`, path: ids }] : [];
  const target =
    typeof failed === 'string'
      ? await failedTarget(failed, sources, [...inputs, ...report, ...idsInput], help)
      : undefined;
  if (typeof ids === 'string') {
    const failedFiles = [...(target?.files.values() ?? [])].map((path) => ({
      what: `the --failed file ${path}`,
      path,
    }));
    await refuseOverwrite('--ids', ids, [...inputs, ...report, ...failedFiles], help);
    const parent = dirname(resolve(ids));
    if (!(await stat(parent).catch(() => undefined))?.isDirectory()) {
      throw new UsageError(`--ids ${ids}: the directory ${parent} does not exist; make it first`, help);
    }
  }
  return { failed: target, ids: typeof ids === 'string' ? ids : undefined };
}

interface ApplyOptions {
  readonly removed: 'keep' | 'deactivate' | undefined;
  readonly maxRemoved: SyncMaxRemoved | undefined;
  readonly inDoubt: 'report' | 'recreate' | undefined;
  readonly concurrency: number | undefined;
  /** The heartbeat off a terminal, in milliseconds (0: none). */
  readonly everyMs: number;
  readonly summary: boolean;
  readonly json: boolean;
  readonly failed: FailedTarget | undefined;
  readonly ids: string | undefined;
  readonly journal: OpenedJournal['journal'];
  /** The client's tenant: whose ids `--ids` writes. */
  readonly tenant: string;
}

export async function apply(
  { io }: SyncContext,
  sync: CrmSync,
  source: SyncSource,
  totals: ReadonlyMap<string, number>,
  options: ApplyOptions,
  redact: (value: unknown) => unknown,
  reportTo: ReportFile | undefined,
): Promise<number> {
  const progress = new SyncProgressLine(io.stderr, totals, { everyMs: options.everyMs, json: options.json });
  io.interrupt?.stopOnInterrupt();
  let report: SyncReport;
  try {
    report = await sync.run(source, {
      onProgress: progress.update,
      ...(io.interrupt ? { signal: io.interrupt.signal } : {}),
      ...(options.removed ? { removed: options.removed } : {}),
      ...(options.maxRemoved !== undefined ? { maxRemoved: options.maxRemoved } : {}),
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
  await reportTo?.commit(`${jsonText(json, 2)}\n`);
  if (options.failed) {
    const rows = new FailedRows(report, (text) => redact(text) as string);
    const written = await writeFailed(options.failed, rows, {
      formatOf: formatOfSource,
      columnOf: columnOfSources([...options.failed.files.keys()]),
    });
    for (const file of written)
      io.stderr.write(`failed rows: ${file.rows} of ${file.source.type} written to ${file.path}\n`);
  }
  if (options.ids !== undefined) {
    const { writeIdsFile } = await import('./ids');
    await writeIdsFile(options.ids, options.journal, options.tenant);
  }
  const problems = problemLines(
    report,
    options.maxRemoved !== undefined,
    options.summary ? SUMMARY_ENTRIES : undefined,
  );
  if (problems.length) io.stderr.write(`${problems.join('\n')}\n`);
  if (io.stdout.isTTY) await write(io.stdout, `${reportLine(report)}\n`);
  else
    await write(
      io.stdout,
      `${jsonText(options.summary ? summaryJson(json as Record<string, unknown>, SUMMARY_ENTRIES) : json)}\n`,
    );
  return report.failed.length || report.inDoubt.length || report.refusedRemovals.length ? EXIT.incomplete : EXIT.ok;
}
