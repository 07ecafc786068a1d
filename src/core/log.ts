/** One attempt of one call, as given to the `logger` option. Credential headers are masked. */
export interface CrmRequestLog {
  readonly method: string;
  /** Path and query below the base URL. */
  readonly url: string;
  /** The HTTP status, or 0 when no response arrived. A status with an `error` means reading the body failed. */
  readonly status: number;
  /** What went wrong, when the attempt failed (`TypeError: fetch failed`, `AbortError: ...`, ...). */
  readonly error: string | undefined;
  /** Milliseconds from sending to the end of the body (or the failure). */
  readonly durationMs: number;
  /** 1 for the first attempt, 2 for the first retry, ... */
  readonly attempt: number;
  /** The request headers as sent, with `x-api-key` and `authorization` masked. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Receives one line per attempt (`GET /integrations/v1/contacts?... 200 12ms attempt=1 headers={...}`)
 * and the same facts as an object. Credentials never reach it.
 *
 * @example
 * ```ts
 * const crm = new CrmClient({ logger: (line) => console.debug(line) });
 * ```
 */
export type CrmLogger = (line: string, entry: CrmRequestLog) => void;
