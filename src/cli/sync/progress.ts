import type { Streams } from '../output';

/** What the engine reports (`SyncProgress` of crm-integration-sdk/sync), read by the line. */
export interface ProgressFacts {
  readonly type: string;
  readonly done: number;
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly failed: number;
  readonly inDoubt: number;
  readonly perSecond: number;
  readonly etaSeconds: number | undefined;
}

const n = (value: number): string => Math.round(value).toLocaleString('en-US');

/** `1h02m`, `3m05s`, `12s`. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** One progress line: `contacts 1,200/5,000  1,150 created  30 updated  20 unchanged  0 failed  0 in doubt  48/s  ETA 1m19s`. */
function progressText(facts: ProgressFacts, total: number | undefined): string {
  const done = total === undefined ? n(facts.done) : `${n(facts.done)}/${n(total)}`;
  const eta = facts.etaSeconds === undefined ? '' : `  ETA ${duration(facts.etaSeconds)}`;
  return `${facts.type} ${done}  ${n(facts.created)} created  ${n(facts.updated)} updated  ${n(facts.unchanged)} unchanged  ${n(facts.failed)} failed  ${n(facts.inDoubt)} in doubt  ${n(facts.perSecond)}/s${eta}`;
}

/**
 * The live progress line of `crm sync apply`, redrawn in place on stderr: only when a person
 * watches stderr (a terminal); a file or a pipe gets none of it.
 */
export class SyncProgressLine {
  readonly #stderr: Streams['stderr'] | undefined;
  readonly #totals: ReadonlyMap<string, number>;
  #shown = false;

  constructor(stderr: Streams['stderr'], totals: ReadonlyMap<string, number>) {
    this.#stderr = stderr.isTTY ? stderr : undefined;
    this.#totals = totals;
  }

  /** The engine's `onProgress`: at most 4 times a second. */
  readonly update = (facts: ProgressFacts): void => {
    if (!this.#stderr) return;
    // \r and "erase line": the line is redrawn in place, never scrolled.
    this.#stderr.write(`\r\x1b[K${progressText(facts, this.#totals.get(facts.type))}`);
    this.#shown = true;
  };

  /** Ends the line, so that what follows starts on a line of its own. */
  end(): void {
    if (!this.#stderr || !this.#shown) return;
    this.#stderr.write('\n');
    this.#shown = false;
  }
}
