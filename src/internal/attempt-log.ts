import type { CrmLogger, CrmRequestLog } from '../core/log';
import type { PreparedCall } from './prepared-call';
import { redactHeaders } from './redact';

/** Hands one attempt of `call` to the logger, as a line and as facts, with its credentials masked. */
export function logAttempt(
  logger: CrmLogger,
  call: PreparedCall,
  request: Request,
  status: number,
  failure: unknown,
  durationMs: number,
): void {
  const url = new URL(request.url);
  const entry: CrmRequestLog = {
    method: request.method,
    url: call.redact(`${url.pathname}${url.search}`),
    status,
    error:
      failure === undefined
        ? undefined
        : call.redact(failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure)),
    durationMs,
    attempt: call.attempts,
    headers: Object.fromEntries(redactHeaders(request.headers, call.redact)),
  };
  const outcome = [status || '', entry.error === undefined ? '' : `failed (${entry.error})`].filter(Boolean).join(' ');
  const line = `crm ${entry.method} ${entry.url} ${outcome} ${Math.round(durationMs)}ms attempt=${entry.attempt} headers=${JSON.stringify(entry.headers)}`;
  // A failing log sink must not turn an answered call into a failure (and a create into a
  // retry), nor an async one's rejection into an unhandled rejection that ends the process.
  try {
    (logger(line, entry) as unknown as Promise<unknown> | undefined)?.then?.(undefined, () => {});
  } catch {}
}
