import type { Readable } from 'node:stream';
import type { Environment } from '../config';
import type { Streams } from '../output';
import type { JournalTarget } from './journal';

/** What `crm sync` touches beyond its arguments. */
export interface SyncIo extends Streams, Environment {
  /** Standard input, for a source given as `-`: read as a stream. */
  readonly stdin: Readable;
  /**
   * Ctrl-C: `stopOnInterrupt()` makes the first one abort `signal` (a run stops after the requests
   * in flight have answered) where it would end the process; the second still ends it.
   */
  readonly interrupt?: { readonly signal: AbortSignal; readonly stopOnInterrupt: () => void } | undefined;
}

/** Parsed options. */
export type Values = Record<string, string | boolean | undefined>;

/** What each `crm sync` command is given. */
export interface SyncContext {
  readonly io: SyncIo;
  readonly values: Values;
  readonly help: string;
  /** The journal the command line names: a SQLite file or a Postgres schema. */
  readonly target: JournalTarget;
}
