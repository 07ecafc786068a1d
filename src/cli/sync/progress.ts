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

/** How progress is told off a terminal: a line every `everyMs` (0: none), as text or NDJSON. */
export interface HeartbeatOptions {
  readonly everyMs: number;
  readonly json: boolean;
}

/**
 * The progress of `crm sync apply` on stderr. On a terminal, one live line redrawn in place; off
 * one (cron, a container's log), a line every `everyMs`, so that a log shows the job is alive
 * even while it waits (for the server's pace, or records in doubt), as text or as NDJSON.
 */
export class SyncProgressLine {
  readonly #stderr: Streams['stderr'] | undefined;
  readonly #totals: ReadonlyMap<string, number>;
  #shown = false;
  #last: ProgressFacts | undefined;
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  readonly #started = Date.now();

  constructor(
    stderr: Streams['stderr'],
    totals: ReadonlyMap<string, number>,
    heartbeat: HeartbeatOptions = { everyMs: 0, json: false },
  ) {
    this.#stderr = stderr.isTTY ? stderr : undefined;
    this.#totals = totals;
    if (!stderr.isTTY && heartbeat.everyMs > 0) {
      this.#timer = setInterval(() => stderr.write(this.#beat(heartbeat.json)), heartbeat.everyMs);
      // A heartbeat never holds the process open.
      this.#timer.unref?.();
    }
  }

  /** One heartbeat line: where the run stands, or that it is starting (settling records in doubt, reading). */
  #beat(json: boolean): string {
    const elapsedSeconds = Math.round((Date.now() - this.#started) / 1000);
    const facts = this.#last;
    if (json) {
      const total = facts ? this.#totals.get(facts.type) : undefined;
      return `${JSON.stringify({ event: 'progress', elapsedSeconds, ...(facts ?? {}), ...(total === undefined ? {} : { total }) })}\n`;
    }
    const where = facts ? progressText(facts, this.#totals.get(facts.type)) : 'starting';
    return `crm sync apply [${duration(elapsedSeconds)}]: ${where}\n`;
  }

  /** The engine's `onProgress`: at most 4 times a second. */
  readonly update = (facts: ProgressFacts): void => {
    this.#last = facts;
    if (!this.#stderr) return;
    // \r and "erase line": the line is redrawn in place, never scrolled.
    this.#stderr.write(`\r\x1b[K${progressText(facts, this.#totals.get(facts.type))}`);
    this.#shown = true;
  };

  /** Ends the line, so that what follows starts on a line of its own. */
  end(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (!this.#stderr || !this.#shown) return;
    this.#stderr.write('\n');
    this.#shown = false;
  }
}
