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
  /**
   * Set on a warning of the client's own rather than an attempt (then `method` and `url` are
   * empty, `status` and `attempt` 0, and `error` says what went wrong): `'pace-store-unavailable'`,
   * a shared pace store (`throttle: { mode: 'auto', store }`) that failed or answered late, logged
   * once per outage. The calls go on, each key paced in this process alone, and the store is tried
   * again every 5 s.
   */
  readonly warning?: 'pace-store-unavailable' | undefined;
}

/**
 * Receives one line per attempt (`GET /integrations/v1/contacts?... 200 12ms attempt=1 headers={...}`)
 * and the same facts as an object; rarely, a warning of the client's own (`entry.warning`). Credentials never reach it.
 *
 * @example
 * ```ts
 * const crm = new CrmClient({ logger: (line) => console.debug(line) });
 * ```
 */
export type CrmLogger = (line: string, entry: CrmRequestLog) => void;
