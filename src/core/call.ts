import type { RequestOptions } from '../options';

/** A call, fully built: every attempt sends exactly this. */
export interface Call {
  readonly href: string;
  readonly init: { method: string; headers: Record<string, string>; body?: string };
  readonly where: string;
  readonly options: RequestOptions | undefined;
  readonly timeout: number;
  readonly deadline: number | undefined;
  /** Counted per call, so each log line can say which attempt it was; absent without a logger. */
  readonly attempts: { count: number } | undefined;
}

/** An answer, with its body already read. */
export interface Received {
  readonly response: Response;
  readonly text: string;
}

/** What one attempt ended with: an answer, or what it threw (`timedOut` when its own timer stopped it). */
export type Outcome = Received | { readonly error: unknown; readonly timedOut: boolean };
